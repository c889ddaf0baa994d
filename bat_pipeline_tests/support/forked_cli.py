"""`bat-pipeline` and `dagster` commands as the end-to-end tests start them: each in a process
forked from a server that imported the pipeline and Dagster once (multiprocessing's fork
server, one per xdist worker), instead of a new interpreter that imports Dagster, the
definitions and what the steps need again (about 2.5 s of CPU a command, a third of a
two-model run's).

The forked process runs what the console script runs — `bat_pipeline.cli.main`, or
Dagster's command line (`dagster._cli.main`, which loads `-m bat_pipeline.definitions`
from the modules already imported: its `defs` is a function, called at each load) — with
the command's arguments, environment, working directory, no stdin, and stdout and stderr
into one file, in a session of its own (like `start_new_session=True`), and exits with
main's code through os._exit (the console script's `sys.exit(main())`; the pipeline
registers no atexit hook). The console scripts themselves (interpreter start, entry point,
import time) are what the cli/ tests, test_bundled_example (`bat-pipeline run` and
`dagster asset materialize`) and test_materialize_cli (the documented CI command) run for
real.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import multiprocessing
import multiprocessing.util  # registers its exit hook first: ours (below) runs before it
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any

from bat_pipeline.partition_runs import STEP_MODULES, output_to
from bat_pipeline_tests.support.paths import BAT_PIPELINE, DAGSTER

PRELOAD = ("bat_pipeline.cli", "bat_pipeline.runner", "bat_pipeline.definitions", "dagster._cli", *STEP_MODULES)


def forkable(command: list[str], env: dict[str, str]) -> bool:
    """Whether `command` is the venv's `bat-pipeline` or `dagster` (by path, or a bare name
    found on the PATH of `env`, as a subprocess would find it)."""
    return bool(command) and _program(command[0], env) is not None


def _program(name: str, env: dict[str, str]) -> Path | None:
    path = Path(name) if "/" in name else Path(shutil.which(name, path=env.get("PATH", "")) or name)
    return path if path in (BAT_PIPELINE, DAGSTER) else None


_started: list[ForkedCommand] = []


def preloaded_context() -> Any:
    """A multiprocessing context whose processes fork from this test process's preloaded
    server (a process of the pipeline's own in a fraction of a second, where `spawn` imports
    it all again)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(PRELOAD))  # used when this process's server starts
    return context


@atexit.register
def _stop_left_over() -> None:
    """At the test process's exit (before multiprocessing joins its children): SIGKILL the
    session of any command a failed test left running, which would otherwise hold the exit
    until it ended by itself (a Popen's process is simply left behind)."""
    for command in _started:
        command.kill_session()


def _main(program: str, argv: list[str], env: dict[str, str], cwd: str, log_path: str) -> None:
    """In the forked process: become `<program> <argv>` (the venv's bat-pipeline or
    dagster), run it, exit with its code.
    What the server imported is frozen out of the garbage collector's care first, as
    partition_runs.warm_up does before the partitions fork (pages shared, not copied)."""
    gc.freeze()
    code = 1
    try:
        os.setsid()
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        output_to(log_path, line_buffered=bool(env.get("PYTHONUNBUFFERED")))
        sys.argv = [program, *argv]
        if Path(program) == DAGSTER:
            from dagster._cli import main as dagster_main

            dagster_main()  # click's: always ends in SystemExit
        else:
            from bat_pipeline.cli import main

            code = main(argv)
    except SystemExit as exit_:
        if isinstance(exit_.code, int) or exit_.code is None:
            code = exit_.code or 0
        else:
            print(exit_.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 - as an uncaught exception ends the console script
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)


class ForkedCommand:
    """A running forked `bat-pipeline` or `dagster` command, with the part of
    subprocess.Popen's interface the tests use (pid, poll, wait, returncode, signals)."""

    def __init__(self, program: Path, argv: list[str], env: dict[str, str], cwd: Path | str, log_path: Path):
        self.args = [str(program), *argv]
        self.log_path = log_path
        self._process = preloaded_context().Process(
            target=_main, args=(str(program), argv, dict(env), str(cwd), str(log_path))
        )
        self._process.start()
        self.pid: int = self._process.pid
        self.returncode: int | None = None
        _started.append(self)

    def poll(self) -> int | None:
        if self.returncode is None and not self._process.is_alive():
            self._process.join()
            self.returncode = self._process.exitcode
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        self._process.join(timeout)
        if self.poll() is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def kill_session(self) -> None:
        """SIGKILL the command's whole session (what it started too), if it still runs."""
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)


def start(command: list[str], *, env: dict[str, str], cwd: Path | str | None, log_path: Path) -> ForkedCommand:
    """`command` (the bat-pipeline or dagster console script and its arguments) forked, in a
    session of its own, output into `log_path` (replaced)."""
    program = _program(command[0], env)
    if program is None:
        raise ValueError(f"not a command the server can fork: {command[0]}")
    return ForkedCommand(program, command[1:], env, cwd or os.getcwd(), log_path)


def run(
    command: list[str], env: dict[str, str], timeout_s: float, cwd: Path | str | None = None
) -> subprocess.CompletedProcess:
    """Run `command` forked to completion (killed, session and all, past `timeout_s`), in
    `cwd` (default: this process's); stdout and stderr together in `.stdout`."""
    handle, name = tempfile.mkstemp(prefix="bat-pipeline-", suffix=".out")
    os.close(handle)
    log_path = Path(name)
    try:
        process = start(command, env=env, cwd=cwd, log_path=log_path)
        try:
            process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            process.kill_session()
            process.wait()
            raise subprocess.TimeoutExpired(command, timeout_s, output=log_path.read_text(errors="replace")) from None
        return subprocess.CompletedProcess(command, process.wait(), stdout=log_path.read_text(errors="replace"))
    finally:
        log_path.unlink(missing_ok=True)
