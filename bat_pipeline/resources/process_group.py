"""Processes this machine starts for a run (agents, servers, commands), each in a process
group of its own: dying with the process that started them, and stopped group and all."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    # Linux: the agent gets SIGTERM if the pipeline process dies (even by SIGKILL), so no
    # agent outlives a killed run. Tied to the spawning *thread*: spawn from the step's
    # own thread, which lives as long as the agent is needed.
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


def prepare_child() -> None:
    """What every process the pipeline starts runs before its program (`preexec_fn`): it
    dies with the pipeline (die_with_parent), and SIGTERM and SIGINT have their default
    effect in it whatever they have here. An ignored signal stays ignored across exec, and
    Dagster leaves SIGTERM with SIGINT's disposition once an execution in this process is
    over: SIG_IGN where the process began in the background of a non-interactive shell
    (`… &` in a CI script), or in a pytest-xdist worker. A process started after that would
    ignore the SIGTERM meant to stop it (an agent could not flush its spans) and be killed
    at the end of the grace period."""
    die_with_parent()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, (signal.SIGTERM, signal.SIGINT))


def _stat(pid: int | str) -> tuple[bytes, int] | None:
    """(state, process group) from /proc/<pid>/stat; None when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            # After the command name: state, ppid, pgrp, ...
            fields = stat.read().rsplit(b")", 1)[1].split()
        return fields[0], int(fields[2])
    except (OSError, IndexError, ValueError):
        return None


def leads_live_group(pid: int) -> bool:
    """Whether `pid` is alive (not a zombie) and still the leader of its process group."""
    stat = _stat(pid)
    return stat is not None and stat[0] != b"Z" and stat[1] == pid


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes of a process group, read from /proc. A group with no
    process at all is known without reading it (the whole table costs tens of
    milliseconds of CPU once a few hundred processes run)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return []
    except PermissionError:
        pass
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    members = []
    for name in names:
        if name.isdigit():
            stat = _stat(name)
            if stat is not None and stat[0] != b"Z" and stat[1] == pgid:
                members.append(int(name))
    return members


def group_alive(pgid: int) -> bool:
    """Whether a live process is left in the group: its leader, else any other member."""
    if not Path("/proc/self/stat").exists():
        try:
            os.killpg(pgid, 0)
            return True
        except (ProcessLookupError, PermissionError):
            return False
    return leads_live_group(pgid) or bool(group_members(pgid))


def wait_or_kill_group(pgid: int, grace_s: float) -> bool:
    """Wait up to `grace_s` for the group to be gone, then SIGKILL what is left; whether it
    went by itself."""
    deadline = time.monotonic() + grace_s
    while group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if group_alive(pgid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
        return False
    return True


def stop_process_group(process: subprocess.Popen, grace_s: float, first_signal: int = signal.SIGTERM) -> None:
    """Stop a process started with `start_new_session=True` and everything in its group:
    `first_signal` to the group, SIGKILL to whatever is left after `grace_s`; the leader is
    reaped. A group already gone is no error."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, first_signal)
    wait_or_kill_group(process.pid, grace_s)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=5)


WATCHDOG_GRACE_S = 0.5
"""Between the watchdog's SIGTERM and its SIGKILL: the group is gone within a second of the
pipeline's death."""


@dataclass
class GroupWatchdog:
    """A process that stops a group once this process is gone (resources/group_watchdog.py):
    it reads the other end of `pipe`, which only this process holds open."""

    process: subprocess.Popen
    pipe: int | None

    def release(self) -> None:
        """Close this process's end (in a fork that must not keep the group alive, or once
        the group was stopped): the watchdog then ends, stopping the group if it lives."""
        if self.pipe is not None:
            with contextlib.suppress(OSError):
                os.close(self.pipe)
            self.pipe = None

    def reap(self) -> None:
        """`release`, then wait for the watchdog (a moment: it sees the pipe closed)."""
        self.release()
        with contextlib.suppress(subprocess.TimeoutExpired, ChildProcessError):
            self.process.wait(timeout=5)


def watch_group(pgid: int, grace_s: float = WATCHDOG_GRACE_S) -> GroupWatchdog | None:
    """Start the watchdog of group `pgid` (a process started with `start_new_session`);
    None when it cannot be started (the group then has only PR_SET_PDEATHSIG)."""
    read_end, write_end = os.pipe()  # not inheritable: no other child holds the write end
    try:
        process = subprocess.Popen(
            [sys.executable, "-I", "-S", str(Path(__file__).with_name("group_watchdog.py")), str(pgid), str(grace_s)],
            stdin=read_end,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            env={},  # it needs nothing, and holds none of the run's secrets
        )
    except OSError:
        os.close(write_end)
        return None
    finally:
        os.close(read_end)
    return GroupWatchdog(process, write_end)
