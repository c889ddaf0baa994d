"""`bat-pipeline ui`: `dagster dev` on one agent folder, as its own process group."""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

from bat_pipeline.engine.config.project import load_project, project_tasks
from bat_pipeline.engine.errors import InputError
from bat_pipeline.locations import AGENT_DIR_VAR, DAGSTER_HOME_VAR, dagster_home
from bat_pipeline.remote_root import root_text
from bat_pipeline.resources.ports import LOOPBACK as HOST
from bat_pipeline.resources.process_group import prepare_child
from bat_pipeline.storage import HOME_VAR, default_root

STOP_GRACE_S = 8.0
"""After Ctrl-C or SIGTERM, how long `dagster dev` gets to stop before its group is killed
(a stop takes 10 s at most)."""


def check_port_free(port: int, host: str = HOST) -> None:
    """InputError when something listens on host:port already (another UI, most likely)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        # As the webserver binds: a port left in TIME_WAIT by an earlier UI is free.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                raise InputError(f"{host}:{port}", f"cannot listen there: {exc.strerror}") from None
            raise InputError(
                f"{host}:{port}",
                "the port is in use (another `bat-pipeline ui` or "
                "`dagster dev`?): stop it, or choose another port with --port",
            ) from None


SUPERSEDED = "ignore:Function `dev_command` is superseded:FutureWarning"
"""A -W filter for `dagster dev`'s notice that `dg dev` supersedes it, by its message (a
SupersessionWarning is a FutureWarning; -W cannot name a class outside the standard
library: it is read before site-packages can be imported)."""


def serve_ui(agent_dir: Path, *, port: int = 3000) -> int:
    """Run the UI until Ctrl-C or SIGTERM, then stop `dagster dev` and its whole process
    group (webserver, daemon, code servers, runs in flight) within 10 s: SIGTERM to the
    group, then SIGKILL to what is left once `dagster dev` has exited or STOP_GRACE_S has
    passed. Returns `dagster dev`'s exit code, or 128 + the signal's number when stopped.

    Raises InputError before anything starts on what `bat-pipeline run` refuses in
    eval.yaml and the dataset, and on a port already in use."""
    agent_dir = Path(agent_dir).resolve()
    config = load_project(agent_dir)  # an agent folder or an AgentV eval file
    project_tasks(config)
    check_port_free(port)
    root = default_root(agent_dir)
    env = {
        **os.environ,
        AGENT_DIR_VAR: str(agent_dir),
        HOME_VAR: root_text(root),
        DAGSTER_HOME_VAR: str(dagster_home(root)),
    }
    print(f"Dagster UI for {agent_dir} on http://{HOST}:{port} (Ctrl-C to stop)", flush=True)
    # `dagster dev` warns that `dg dev` supersedes it (dagster-dg is not installed: nothing
    # for the user to act on), and about a dagster.yaml in its working folder that is not
    # its home's: it runs in its home, whose dagster.yaml is the one it reads.
    command = [
        sys.executable,
        "-W",
        SUPERSEDED,
        "-m",
        "dagster",
        "dev",
        "-m",
        "bat_pipeline.definitions",
        "-h",
        HOST,
        "-p",
        str(port),
    ]
    stop = threading.Event()
    received: list[int] = []

    def on_signal(signum, frame):
        received.append(signum)
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    # Its own group: a terminal's Ctrl-C reaches this process only, which stops the group.
    # A SIGKILLed `bat-pipeline ui` still takes `dagster dev` along (prepare_child).
    process = subprocess.Popen(
        command,
        env=env,
        cwd=env[DAGSTER_HOME_VAR],
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        preexec_fn=prepare_child,
    )
    try:
        while process.poll() is None and not stop.wait(0.2):
            pass
    finally:
        _stop_group(process)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return 128 + received[0] if received else process.returncode


def _stop_group(process: subprocess.Popen) -> None:
    # On SIGTERM `dagster dev` shuts its webserver and daemon down (a few seconds), but a
    # code server it started may linger until its heartbeat times out (45 s): whatever of
    # the group outlives `dagster dev` is killed.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=STOP_GRACE_S)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=1)
