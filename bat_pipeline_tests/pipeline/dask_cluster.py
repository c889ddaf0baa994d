"""A real Dask cluster on 127.0.0.1 for the distributed tests and the bench: `dask scheduler`
and worker processes (`dask worker --no-nanny --nthreads 1`: one process per worker, so a
test can kill one), each in a session of its own and killed group and all on the way out."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from bat_pipeline_tests.support.paths import VENV_BIN
from bat_pipeline_tests.support.processes import start_logged

START_TIMEOUT_S = 60


@dataclass
class DaskCluster:
    address: str
    scheduler: subprocess.Popen
    workers: list[subprocess.Popen] = field(default_factory=list)

    @property
    def worker_pids(self) -> set[int]:
        return {w.pid for w in self.workers}


def _stop(process: subprocess.Popen) -> None:
    for sig, wait_s in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(wait_s)
            return


def _connected_workers(address: str) -> int:
    from distributed import Client

    with Client(address, timeout=10) as client:
        return len(client.scheduler_info(n_workers=-1)["workers"])


@contextlib.contextmanager
def dask_cluster(folder: Path, env: dict[str, str], workers: int = 2) -> Iterator[DaskCluster]:
    """A scheduler and `workers` worker processes with `env`, logs in `folder`; all stopped
    (TERM, then KILL, each process group) whatever happens."""
    folder.mkdir(parents=True, exist_ok=True)
    scheduler_file = folder / "scheduler.json"
    processes: list[subprocess.Popen] = []

    # The workers as docs/scaling.md starts them: without Dask's statistical profiler.
    env = {**env, "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False"}

    def start(name: str, *args: str) -> subprocess.Popen:
        process = start_logged([str(VENV_BIN / "dask"), *args], cwd=folder, env=env, log_path=folder / f"{name}.log")
        processes.append(process)
        return process

    try:
        scheduler = start(
            "scheduler",
            "scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--no-dashboard",
            "--scheduler-file",
            str(scheduler_file),
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        while not scheduler_file.is_file() and time.monotonic() < deadline:
            assert scheduler.poll() is None, (folder / "scheduler.log").read_text()
            time.sleep(0.1)
        address = json.loads(scheduler_file.read_text())["address"]
        cluster = DaskCluster(address, scheduler)
        for index in range(workers):
            cluster.workers.append(
                start(
                    f"worker{index}",
                    "worker",
                    address,
                    "--no-nanny",
                    "--nthreads",
                    "1",
                    "--name",
                    f"w{index}",
                    "--host",
                    "127.0.0.1",
                    "--no-dashboard",
                )
            )
        while _connected_workers(address) < workers:
            assert time.monotonic() < deadline, [(folder / f"worker{i}.log").read_text() for i in range(workers)]
            time.sleep(0.2)
        yield cluster
    finally:
        for process in reversed(processes):
            _stop(process)
