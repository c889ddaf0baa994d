"""Run the scripted model server: in a background thread (`serve_scripted_llm`) or in the
foreground (`run_forever`, used by `python -m bat_pipeline.example.scripted_llm`)."""

from __future__ import annotations

import asyncio
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

from bat_pipeline.example.scripted_llm.app import create_app
from bat_pipeline.example.scripted_llm.knobs import KnobBoard
from bat_pipeline.example.scripted_llm.stats import RequestLog

HOST = "127.0.0.1"


def _bind(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    sock.listen(128)
    return sock


class ScriptedLLM:
    """A scripted model server bound to 127.0.0.1; knobs and request counts are live."""

    def __init__(self, port: int = 0, **knobs: Any) -> None:
        self.knobs = KnobBoard(**knobs)
        self.log = RequestLog()
        self._stopping = threading.Event()
        self._socket = _bind(port)
        self.port: int = self._socket.getsockname()[1]
        config = uvicorn.Config(create_app(self.knobs, self.log, self._stopping), log_level="warning",
                                lifespan="off", timeout_graceful_shutdown=2)
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:<port>`; OpenAI clients want `base_url + "/v1"`."""
        return f"http://{HOST}:{self.port}"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every request so far: `{path, model, status}`, oldest first."""
        return self.log.records()

    def count(self, path: str | None = None, model: str | None = None) -> int:
        """Requests so far matching `path` and/or `model`."""
        return self.log.count(path, model)

    def set_knobs(self, **knobs: Any) -> None:
        """Change global knobs; `models={name: {...}}` for per-model ones, `reset=True` to clear."""
        self.knobs.update(knobs)

    def set_model_knobs(self, model: str, **knobs: Any) -> None:
        """Change knobs of one model name."""
        self.knobs.update({"models": {model: knobs}})

    async def serve(self) -> None:
        """Serve until `stop()` (or a signal, in the main thread)."""
        await self._server.serve(sockets=[self._socket])

    def start(self) -> "ScriptedLLM":
        """Serve in a daemon thread; returns once it accepts connections."""
        self._thread = threading.Thread(target=lambda: asyncio.run(self.serve()), name="scripted-llm", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("scripted model server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._server.should_exit = True
        if self._thread:
            self._thread.join(timeout=5)
        self._socket.close()


@contextmanager
def serve_scripted_llm(port: int = 0, **knobs: Any) -> Iterator[ScriptedLLM]:
    """A running `ScriptedLLM` for the `with` block (knobs as in `Knobs`)."""
    server = ScriptedLLM(port, **knobs).start()
    try:
        yield server
    finally:
        server.stop()


def run_forever(port: int) -> None:
    """Serve in the foreground; print `LISTENING <url>` once ready."""
    server = ScriptedLLM(port)

    async def main() -> None:
        task = asyncio.create_task(server.serve())
        while not server._server.started and not task.done():
            await asyncio.sleep(0.01)
        if server._server.started:
            print(f"LISTENING {server.base_url}", flush=True)
        await task

    asyncio.run(main())
    sys.stdout.flush()
