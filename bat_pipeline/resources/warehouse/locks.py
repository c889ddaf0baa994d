"""Opening the warehouse file while other processes may hold it.

DuckDB allows one read-write process per database file, and a read-only process blocks
writers too (https://duckdb.org/docs/current/connect/concurrency). Partitions run as
separate processes under Dagster's multiprocess executor, so writers take an exclusive
`fcntl.flock` on `<db>.lock` around open-write-close (readers take it shared). A process
that opened the file without that lock (the UI, a notebook) makes DuckDB's open fail with
an IO "Could not set lock" error: the open is retried with backoff up to a deadline, then
`WarehouseBusyError` says which file and that another process holds it.
"""

from __future__ import annotations

import fcntl
import os
import random
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

DEFAULT_MAX_WAIT_S = 60.0
"""How long an open waits for another process to let go of the file."""


class WarehouseBusyError(RuntimeError):
    """Another process kept the warehouse file locked for longer than the allowed wait."""

    def __init__(self, path: Path, waited_s: float, read_only: bool, cause: str):
        self.path = path
        self.waited_s = waited_s
        mode = "read-only" if read_only else "for writing"
        super().__init__(
            f"could not open the warehouse {path} {mode}: another process holds it "
            f"(DuckDB allows one writer, and any reader blocks writers; the Dagster UI or a "
            f"notebook with the file open does). Gave up after {waited_s:.1f}s. Close that "
            f"process and re-run; the partition's files stay on disk. ({cause})"
        )


class Patience:
    """Backoff with jitter until a deadline; notifies once, on the first wait."""

    def __init__(self, max_wait_s: float, notify: Callable[[str], None]):
        self.started = time.monotonic()
        self.deadline = self.started + max(0.0, max_wait_s)
        self.delay = 0.02
        self.notify: Callable[[str], None] | None = notify

    @property
    def waited(self) -> float:
        return time.monotonic() - self.started

    def wait(self, message: str) -> bool:
        """Sleep before the next try; False when the deadline has passed."""
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            return False
        if self.notify is not None:
            self.notify(message)
            self.notify = None
        time.sleep(min(remaining, self.delay * random.uniform(0.5, 1.0)))
        self.delay = min(self.delay * 1.6, 1.0)
        return True


def lock_path(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


@contextmanager
def file_lock(path: Path, *, exclusive: bool, patience: Patience) -> Iterator[None]:
    """flock on `<db>.lock`: exclusive for writers, shared for readers. A reader that
    cannot create the lock file (read-only folder) goes on without it."""
    lock = lock_path(path)
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        if exclusive:
            raise
        fd = None
    if fd is None:
        yield
        return
    try:
        operation = (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB
        while True:
            try:
                fcntl.flock(fd, operation)
                break
            except BlockingIOError:
                reason = f"another bat_pipeline process is writing the warehouse (lock {lock})"
                if not patience.wait(f"waiting: {reason}"):
                    raise WarehouseBusyError(path, patience.waited, not exclusive, reason) from None
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the flock


def open_file(path: Path, read_only: bool, patience: Patience, config: Mapping[str, Any]) -> duckdb.DuckDBPyConnection:
    """`duckdb.connect`, retried while another process holds the file."""
    if not read_only:
        path.parent.mkdir(parents=True, exist_ok=True)
    settings = {"custom_user_agent": "bat_pipeline", **config}
    while True:
        try:
            return duckdb.connect(str(path), read_only=read_only, config=settings)
        except duckdb.IOException as error:
            if "lock" not in str(error).lower():
                raise
            if not patience.wait(f"waiting: another process has {path} open ({error})"):
                raise WarehouseBusyError(path, patience.waited, read_only, str(error)) from error
