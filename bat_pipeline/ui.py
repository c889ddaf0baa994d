"""`bat-pipeline ui`: `dagster dev` on one agent folder."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from bat_pipeline.runner import dagster_home
from bat_pipeline.storage import default_root

STOP_GRACE_S = 30


def serve_ui(agent_dir: Path, *, port: int = 3000) -> int:
    agent_dir = Path(agent_dir).resolve()
    root = default_root()
    env = {**os.environ, "BAT_AGENT_DIR": str(agent_dir), "BAT_PIPELINE_HOME": str(root),
           "DAGSTER_HOME": str(dagster_home(root))}
    print(f"Dagster UI for {agent_dir} on http://127.0.0.1:{port} (Ctrl-C to stop)", flush=True)
    command = [sys.executable, "-m", "dagster", "dev", "-m", "bat_pipeline.definitions",
               "-h", "127.0.0.1", "-p", str(port)]
    # `dagster dev` shuts its webserver, daemon and code servers down cleanly on SIGINT to
    # its process group, but hangs on SIGTERM: both are passed on to it as SIGINT.
    process = subprocess.Popen(command, env=env, start_new_session=True)

    def stop(signum, frame):
        try:
            os.killpg(process.pid, signal.SIGINT)
        except ProcessLookupError:
            pass

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    try:
        return process.wait()
    finally:
        if process.poll() is None:
            try:
                process.wait(timeout=STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
