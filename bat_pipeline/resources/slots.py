"""A bound on work in flight shared by every process and thread on one machine: N lock files.

Holding a slot means holding an exclusive `flock` on one of `slot-<i>.lock` in a folder.
flock locks belong to the open file description, and every take opens the file anew, so
two threads of one process exclude each other exactly as two processes do. The kernel
drops the locks of a process that dies (even by SIGKILL), so a slot never leaks. Files
are opened close-on-exec, so a child process started meanwhile does not keep a slot.

Takes never block the event loop: each try is a non-blocking flock, and between rounds
the coroutine sleeps (a short, growing poll). Waiters are not served in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import random
from collections.abc import AsyncIterator
from pathlib import Path

POLL_S = 0.005
"""First wait between rounds when every slot is taken; doubles up to MAX_POLL_S."""
MAX_POLL_S = 0.05


class SlotPool:
    """`size` slots in `folder` (created when first needed). Processes that use the same
    folder with different sizes share slots `0..min(size)-1`; the bound that holds is the
    largest size in use."""

    def __init__(self, folder: Path, size: int) -> None:
        if size < 1:
            raise ValueError(f"a slot pool needs at least one slot, got {size}")
        self.folder = Path(folder)
        self.size = size

    def __repr__(self) -> str:
        return f"SlotPool({self.folder}, {self.size})"

    def try_take(self) -> int | None:
        """The descriptor holding a free slot, or None when all are taken. Raises OSError
        when the folder cannot be created or a slot file cannot be opened."""
        self.folder.mkdir(parents=True, exist_ok=True)
        start = random.randrange(self.size)
        for offset in range(self.size):
            path = self.folder / f"slot-{(start + offset) % self.size:03d}.lock"
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            except BaseException:
                os.close(fd)
                raise
            return fd
        return None

    @staticmethod
    def give_back(fd: int) -> None:
        # LOCK_UN releases the slot even if a forked child still shares the descriptor.
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one slot for the block; given back on every exit, cancellation included."""
        wait = POLL_S
        while (fd := self.try_take()) is None:
            await asyncio.sleep(wait * random.uniform(0.5, 1.0))
            wait = min(wait * 2, MAX_POLL_S)
        try:
            yield
        finally:
            self.give_back(fd)
