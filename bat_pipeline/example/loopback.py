"""An ASGI app served by uvicorn on 127.0.0.1, in the foreground or from a daemon thread.

Used by the scripted model server and by the tests' stand-in servers (judge, collector)."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import uvicorn

HOST = "127.0.0.1"


def bind(port: int = 0) -> socket.socket:
    """A listening socket on 127.0.0.1 (port 0: any free one)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    sock.listen(128)
    return sock


class LoopbackServer:
    """Serves `app` on a socket bound before the app starts, so the port is known at once.

    `stopping` is set when `stop()` begins, for handlers that hold requests open (hangs)."""

    def __init__(
        self,
        app,
        *,
        port: int = 0,
        name: str = "loopback-server",
        stopping: threading.Event | None = None,
        graceful_s: int = 2,
    ):
        self.name = name
        self.stopping = stopping or threading.Event()
        self._socket = bind(port)
        self.port: int = self._socket.getsockname()[1]
        self.server = uvicorn.Server(
            uvicorn.Config(app, log_level="warning", lifespan="off", timeout_graceful_shutdown=graceful_s)
        )
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    async def serve(self) -> None:
        """Serve until `stop()` (or a signal, when run in the main thread)."""
        await self.server.serve(sockets=[self._socket])

    def start(self) -> LoopbackServer:
        """Serve in a daemon thread; returns once it accepts connections."""
        self._thread = threading.Thread(target=lambda: asyncio.run(self.serve()), name=self.name, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError(f"{self.name} did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self.stopping.set()
        self.server.should_exit = True
        if self._thread:
            self._thread.join(timeout=5)
        self._socket.close()
