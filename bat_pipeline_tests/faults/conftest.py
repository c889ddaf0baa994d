"""Fixtures of the fault tests: one scripted model server per session (a process of its own)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest


class ScriptedServer:
    """The scripted model server as a process of its own, driven over HTTP."""

    def __init__(self, process: subprocess.Popen, url: str) -> None:
        self.process = process
        self.url = url

    def set(self, **knobs: Any) -> None:
        httpx.post(self.url + "/_control", json=knobs, timeout=10).raise_for_status()

    def set_model(self, model: str, **knobs: Any) -> None:
        self.set(models={model: knobs})

    def stats(self) -> dict:
        return httpx.get(self.url + "/_stats", timeout=10).json()


@pytest.fixture(scope="session")
def scripted() -> Iterator[ScriptedServer]:
    process = subprocess.Popen([sys.executable, "-m", "bat_pipeline.example.scripted_llm", "--port", "0"],
                               stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    line = process.stdout.readline().strip()
    assert line.startswith("LISTENING http://127.0.0.1:"), line
    try:
        yield ScriptedServer(process, line.split(" ", 1)[1])
    finally:
        process.terminate()
        process.wait(10)
