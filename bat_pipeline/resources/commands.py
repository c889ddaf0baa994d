"""One run of a user's command (an AgentV target, its healthcheck, a script grader): its
own process group and temporary HOME, a timeout that kills the whole group, its output
captured."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from bat_pipeline.engine.environment import MINIMAL_SHELL_NAMES, MINIMAL_SHELL_PREFIXES
from bat_pipeline.resources.process_group import prepare_child

SUBREAPER = Path(__file__).with_name("subreaper.py")
GRACE_S = 2.0
"""After a timeout, how long the killed group's pipes are drained before giving up."""


@dataclass
class CommandResult:
    """How one command ended."""

    exit_code: int | None
    """None when it was killed at the timeout."""
    stdout: str
    stderr: str
    wall_ms: float
    timed_out: bool = False
    start_error: str | None = None
    """Why it could not be started (no such program, no such folder)."""

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and self.start_error is None

    def describe(self) -> str:
        """One line: how it ended, then its stderr (else stdout), cut to 2000 characters."""
        if self.start_error:
            return f"could not start: {self.start_error}"
        head = "timed out" if self.timed_out else f"exited with status {self.exit_code}"
        said = (self.stderr.strip() or self.stdout.strip())[-2000:]
        return f"{head}: {said}" if said else head


def minimal_environment(shell: Mapping[str, str] | None = None) -> dict[str, str]:
    """What a script grader gets from the shell: PATH, locale, temp folders, proxies,
    Python and uv settings — never an API key."""
    shell = os.environ if shell is None else shell
    return {
        name: value
        for name, value in shell.items()
        if (name in MINIMAL_SHELL_NAMES or name.startswith(MINIMAL_SHELL_PREFIXES)) and "KEY" not in name.upper()
    }


def run_command(
    command: str | list[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    stdin: str | None = None,
    home_prefix: str = "bat-home-",
    home: Path | None = None,
    reap: bool = False,
) -> CommandResult:
    """Run `command` (a string through /bin/sh, or argv) in `cwd` with `env` and a fresh
    temporary HOME (removed after; `home`: that folder instead, kept), in a process group
    of its own; at `timeout_s` the whole group is killed. `reap`: under the subreaper
    (resources/subreaper.py), so that what the command daemonises is killed when it ends
    or times out (a script grader's children have nothing to do after it). Never raises for
    the command's own failures."""
    argv = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
    start = time.perf_counter()
    if reap:
        missing = _not_runnable(argv[0], cwd, env)
        if missing:
            return CommandResult(None, "", "", 0.0, start_error=missing)
        argv = [sys.executable, "-I", "-S", str(SUBREAPER), *argv]
    with _home(home, home_prefix) as folder:
        try:
            process = subprocess.Popen(
                argv,
                cwd=cwd,
                env={**env, "HOME": folder},
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                errors="replace",
                start_new_session=True,
                preexec_fn=prepare_child,
            )
        except OSError as exc:
            return CommandResult(
                None, "", "", (time.perf_counter() - start) * 1000, start_error=f"{argv[0]}: {exc.strerror or exc}"
            )
        try:
            out, err = process.communicate(stdin, timeout=timeout_s)
            return CommandResult(process.returncode, out, err, (time.perf_counter() - start) * 1000)
        except subprocess.TimeoutExpired:
            if reap:  # the subreaper kills the daemonised descendants, then the group goes
                with contextlib.suppress(ProcessLookupError):
                    os.kill(process.pid, signal.SIGTERM)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=GRACE_S)
            _kill_group(process.pid)
            try:
                out, err = process.communicate(timeout=GRACE_S)
            except subprocess.TimeoutExpired:
                out, err = "", ""
            return CommandResult(None, out or "", err or "", (time.perf_counter() - start) * 1000, timed_out=True)


@contextlib.contextmanager
def _home(given: Path | None, prefix: str) -> Iterator[str]:
    if given is not None:
        yield str(given)
        return
    with tempfile.TemporaryDirectory(prefix=prefix) as made:
        yield made


def _not_runnable(program: str, cwd: Path, env: Mapping[str, str]) -> str | None:
    """Why `program` cannot be started, in the words an OSError of Popen would use; None
    when it can (run under the subreaper, whose own start then always succeeds)."""
    if os.sep in program:
        path = Path(cwd) / program
        if not path.is_file():
            return f"{program}: No such file or directory"
        return None if os.access(path, os.X_OK) else f"{program}: Permission denied"
    if shutil.which(program, path=env.get("PATH", os.defpath)) is None:
        return f"{program}: No such file or directory"
    return None


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
