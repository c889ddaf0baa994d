"""The scripted model server (`python -m bat_pipeline.example.scripted_llm`: models
`competent`, `sloppy`, `judge`, ... over the OpenAI, Anthropic and Ollama APIs) as a
process of its own, driven over HTTP through `/_control` and `/_stats`.

One runs per test session (per xdist worker): the `scripted_llm` fixture of conftest.py.
Tests that change knobs give each model name of their own its knobs (per-model knobs keep
tests apart), or change global knobs inside `restoring()`."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from bat_pipeline.resources.process_group import stop_process_group
from bat_pipeline.resources.scripted_process import start_scripted_llm
from bat_pipeline_tests.support import local_http

STOP_GRACE_S = 5.0


class ScriptedServer:
    """A running scripted model server; `url` is `http://127.0.0.1:<port>` (no /v1)."""

    def __init__(self, process: subprocess.Popen, url: str) -> None:
        self.process = process
        self.url = url

    @property
    def pid(self) -> int:
        return self.process.pid

    def set(self, **knobs: Any) -> None:
        """Global knobs (see `Knobs`); `models={name: {...}}` for per-model ones,
        `reset=True` to clear every knob, `clear_stats=True` to start counting afresh."""
        local_http.post(self.url + "/_control", json=knobs, timeout=10).raise_for_status()

    def set_model(self, model: str, **knobs: Any) -> None:
        """Knobs of one model name."""
        self.set(models={model: knobs})

    def reset(self) -> None:
        """Every knob back to its default."""
        self.set(reset=True)

    def knobs(self) -> dict[str, Any]:
        """`{"global": {...}, "models": {name: {...}}}` as set."""
        return local_http.get(self.url + "/_control", timeout=10).json()

    @contextmanager
    def restoring(self) -> Iterator[ScriptedServer]:
        """The knobs as they were before the block, whatever it changed."""
        before = self.knobs()
        try:
            yield self
        finally:
            self.set(reset=True, **before["global"], models=before["models"])

    def stats(self) -> dict[str, Any]:
        """`{total, in_flight, max_in_flight, by_path, by_model, by_path_model, requests}`."""
        return local_http.get(self.url + "/_stats", timeout=10).json()

    def clear_stats(self) -> None:
        self.set(clear_stats=True)

    def count(self, path: str | None = None, model: str | None = None) -> int:
        """Requests so far matching `path` and/or `model`."""
        stats = self.stats()
        if path is not None and model is not None:
            return stats["by_path_model"].get(f"{path} {model}", 0)
        if path is not None:
            return stats["by_path"].get(path, 0)
        if model is not None:
            return stats["by_model"].get(model, 0)
        return stats["total"]


@contextmanager
def scripted_server() -> Iterator[ScriptedServer]:
    """A scripted model server process for the `with` block, in its own process group."""
    process, url = start_scripted_llm()
    try:
        yield ScriptedServer(process, url)
    finally:
        stop_process_group(process, STOP_GRACE_S)
