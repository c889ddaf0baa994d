"""The process table, from /proc: what runs for an agent folder or a storage root, which
sockets it listens on, and the checks that nothing was left behind; and starting a process
the way the tests watch one."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from bat_pipeline_tests.support import forked_cli
from bat_pipeline_tests.support.polling import last_value

AGENT_MODULE = "bat_pipeline.example.agent"


def start_logged(command: list[str], *, cwd: Path, env: dict[str, str], log_path: Path) -> subprocess.Popen:
    """`command` in a session (process group) of its own, so the test can stop it group and
    all; stdout and stderr into `log_path` (replaced), no stdin. A `bat-pipeline` or `dagster`
    command is forked from the preloaded server (forked_cli) and gives a Popen look-alike."""
    if forked_cli.forkable(command, env):
        return forked_cli.start(command, env=env, cwd=cwd, log_path=log_path)  # type: ignore[return-value]
    with open(log_path, "wb") as log:
        return subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


@dataclass
class Proc:
    """One live, non-zombie process."""

    pid: int
    ppid: int
    pgid: int
    cmdline: str
    cwd: str
    environ: str
    """Its environment, one `NAME=value` a line."""

    def has_env(self, name: str, value: str) -> bool:
        return f"{name}={value}" in self.environ.split("\n")


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def processes() -> list[Proc]:
    """Every live process that is not a zombie nor a kernel thread. Read the cheap way
    (os.listdir, binary reads, a process's environment only once it qualifies): the tests
    poll this while hundreds of processes run."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        base = f"/proc/{name}/"
        try:
            raw = _read(base + "cmdline")
            if not raw:
                continue
            stat = _read(base + "stat").rsplit(b")", 1)[1].split()
            if stat[0] == b"Z":
                continue
            environ = _read(base + "environ").replace(b"\0", b"\n").decode(errors="replace")
            cwd = os.readlink(base + "cwd")
        except (OSError, IndexError):
            continue
        found.append(
            Proc(int(name), int(stat[1]), int(stat[2]), raw.replace(b"\0", b" ").decode(errors="replace"), cwd, environ)
        )
    return found


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder + os.sep)


def working_in(folder: Path) -> list[int]:
    """Processes whose working directory is `folder` or below: the agents started there."""
    where = str(Path(folder).resolve())
    return [p.pid for p in processes() if _inside(p.cwd, where)]


def belonging_to(folder: Path) -> list[Proc]:
    """Processes started for the agent folder: its path on their command line or in their
    environment (the CLI and its partition runners), or running inside it (the agent and
    the Forecaster)."""
    where = str(Path(folder).resolve())
    mine = os.getpid()
    return [
        p for p in processes() if p.pid != mine and (where in p.cmdline or where in p.environ or _inside(p.cwd, where))
    ]


def assert_no_process_left(folder: Path, timeout_s: float = 20.0) -> None:
    left = last_value(lambda: belonging_to(folder), lambda found: not found, timeout_s, 0.1)
    if left:
        raise AssertionError(f"processes left behind for {folder}: " + "; ".join(f"{p.pid} {p.cmdline}" for p in left))


def agent_processes(agent_dir: Path, marker: str) -> list[str]:
    """Example agents started for `agent_dir`: the folder is on their command line, or they
    run the example agent from inside it or with `marker` in their environment: the run's
    storage root (in CONFIG_PATH, and BAT_PIPELINE_HOME) or DAGSTER_HOME, something no
    other test's agents have (the session's scripted server is everyone's). As
    `pid: command line`."""
    where = str(agent_dir)
    mine = os.getpid()
    return [
        f"{p.pid}: {p.cmdline.strip()}"
        for p in processes()
        if p.pid != mine
        and (where in p.cmdline or (AGENT_MODULE in p.cmdline and (p.cwd.startswith(where) or marker in p.environ)))
    ]


def leftover_agents(agent_dir: Path, marker: str, timeout_s: float = 10.0) -> list[str]:
    """`agent_processes` once they are gone (empty), or what is still alive after `timeout_s`."""
    return last_value(lambda: agent_processes(agent_dir, marker), lambda alive: not alive, timeout_s, 0.1)


def listening_sockets(pids: set[int]) -> list[tuple[int, str, int]]:
    """(pid, local address as in /proc/net/tcp*, port) of every listening TCP socket of `pids`."""
    inodes: dict[str, int] = {}
    for pid in pids:
        try:
            for fd in (Path("/proc") / str(pid) / "fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    inodes[target[8:-1]] = pid
        except OSError:
            continue
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state == "0A" and inode in inodes:
                address, port = local.split(":")
                found.append((inodes[inode], address, int(port, 16)))
    return found
