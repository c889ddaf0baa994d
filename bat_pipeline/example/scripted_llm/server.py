"""Run the scripted model server: in a background thread (`serve_scripted_llm`) or in the
foreground (`run_forever`, used by `python -m bat_pipeline.example.scripted_llm`)."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from bat_pipeline.example.loopback import LoopbackServer
from bat_pipeline.example.scripted_llm.app import create_app
from bat_pipeline.example.scripted_llm.knobs import KnobBoard
from bat_pipeline.example.scripted_llm.stats import RequestLog


class ScriptedLLM:
    """A scripted model server bound to 127.0.0.1; knobs and request counts are live."""

    def __init__(self, port: int = 0, **knobs: Any) -> None:
        self.knobs = KnobBoard(**knobs)
        self.log = RequestLog()
        stopping = threading.Event()
        self._loop = LoopbackServer(
            create_app(self.knobs, self.log, stopping), port=port, name="scripted-llm", stopping=stopping
        )
        self.port: int = self._loop.port
        self._server = self._loop.server

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:<port>`; OpenAI clients want `base_url + "/v1"`."""
        return self._loop.base_url

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
        await self._loop.serve()

    def start(self) -> ScriptedLLM:
        """Serve in a daemon thread; returns once it accepts connections."""
        self._loop.start()
        return self

    def stop(self) -> None:
        self._loop.stop()


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
        while not server._server.started and not task.done():  # noqa: ASYNC110 - uvicorn has no started event
            await asyncio.sleep(0.01)
        if server._server.started:
            print(f"LISTENING {server.base_url}", flush=True)
        await task

    asyncio.run(main())
    sys.stdout.flush()
