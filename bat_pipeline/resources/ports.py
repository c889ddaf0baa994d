"""Free TCP ports for the processes a run starts (agents, servers), never handed out twice
at once on this machine.

The kernel says a port is free; the process it is meant for binds it seconds later (an
agent importing its framework), and meanwhile another run may draw the same port, start
its own agent there first, and have both runs talk to that one. So each port handed out is
reserved: a lock (flock) on a file named after it, in a folder of the user's under the
temporary folder, held by the process that drew it (and its forks) until `release` or its
exit. A port another process holds is not handed out again.
"""

from __future__ import annotations

import fcntl
import os
import socket
import tempfile
from pathlib import Path

LOOPBACK = "127.0.0.1"
"""Where the processes this machine starts for a run listen (agents, the UI)."""
RESERVATIONS = "bat-pipeline-ports"
DRAWS = 100

_held: dict[int, int] = {}
"""Ports this process reserved: the open file descriptor holding each lock."""


def free_port(host: str = LOOPBACK) -> int:
    """A port free right now and reserved for the caller: no other process of this user's
    is handed it until `release(port)` or the caller's exit. The process it is for may still
    find it taken by a program that binds ports by itself (an agent then gets another)."""
    port = 0
    for _ in range(DRAWS):
        port = _draw(host)
        if _reserve(port):
            break
    return port


def release(port: int | None) -> None:
    """The reservation of `port` in this process, dropped (nothing when it holds none)."""
    fd = _held.pop(port, None) if port else None
    if fd is not None:
        os.close(fd)


def _draw(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _reserve(port: int) -> bool:
    """Whether `port` is now this process's: False when another open file holds its lock.
    The files stay (an empty file per port ever drawn): removing one while another process
    is about to lock it would let two processes hold the same port."""
    folder = Path(tempfile.gettempdir()) / f"{RESERVATIONS}-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        fd = os.open(folder / str(port), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        return True  # nowhere to reserve: the port as the kernel gave it
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return False
    _held[port] = fd
    return True
