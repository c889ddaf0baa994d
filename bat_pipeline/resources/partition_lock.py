"""One `bat-pipeline run` at a time per agent and model.

Two runs of the same partition (two `run --resume`, or a run and a resume) would write the
same partition folder at once: partition.json is replaced whole by each, so one run's span
file drops out of the other's record and the episodes it completed lose their spans. A
second run is therefore refused before anything starts, naming the run that holds the
partition; it is not made to wait: the first may take hours, and once it has ended a resume
has nothing left to do or a fresh run is what the user wants, which only the user can say.

The lock is an exclusive `flock` on `<root>/locks/<agent id>/<partition key>.lock`, which
records the holder's pid and command. The kernel releases it when the last process holding
it ends, however it ends (a SIGKILLed run leaves no stale lock; the partitions' processes,
forked with the file open, keep holding it while they still write).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from bat_pipeline.engine.contracts.names import safe_key

LOCKS_DIR = "locks"


class PartitionBusy(RuntimeError):
    """Another run holds a partition this run needs."""


def lock_path(root: Path, agent_id: str, key: str) -> Path:
    return Path(root) / LOCKS_DIR / safe_key(agent_id) / f"{safe_key(key)}.lock"


def _take(path: Path, agent_id: str, key: str) -> IO[str]:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "a+", encoding="utf-8")  # held until the run ends
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise PartitionBusy(
            f"model {key} of agent {agent_id} is being evaluated by another run ({holder}); "
            f"wait for it to end, or choose other models with --model (lock: {path})"
        ) from None
    handle.seek(0)
    handle.truncate()
    started = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    handle.write(f"pid {os.getpid()}, started {started}: {' '.join(sys.argv)}\n")
    handle.flush()
    return handle


@contextlib.contextmanager
def holding_partitions(root: Path, agent_id: str, keys: Iterable[str]) -> Iterator[None]:
    """Hold the lock of each partition `key` of the agent for the block; PartitionBusy
    (nothing held) when another run holds any of them."""
    held: list[IO[str]] = []
    try:
        for key in keys:
            held.append(_take(lock_path(root, agent_id, key), agent_id, key))
        yield
    finally:
        for handle in held:
            handle.close()
