"""The scripted model server (`python -m bat_pipeline.example.scripted_llm`) as a resource:
started by the first step of a run that needs it, stopped when the run ends. What
`{scripted_llm}` in eval.yaml means: resources.scripted_process.
"""

from __future__ import annotations

import os
import subprocess
import threading

import dagster as dg
from pydantic import PrivateAttr

from bat_pipeline.engine.contracts import EvalConfig
from bat_pipeline.resources.process_group import stop_process_group
from bat_pipeline.resources.scripted_process import (
    PLACEHOLDER,
    STOP_GRACE_S,
    URL_VAR,
    ScriptedLlmStartError,
    start_scripted_llm,
    uses_scripted_llm,
    with_scripted_llm,
)

__all__ = [
    "PLACEHOLDER",
    "URL_VAR",
    "ScriptedLlmResource",
    "ScriptedLlmStartError",
    "start_scripted_llm",
    "uses_scripted_llm",
    "with_scripted_llm",
]


class ScriptedLlmResource(dg.ConfigurableResource):
    """The scripted model server for one run: started on the first `address()` (in the
    step's thread, which runs the whole in-process run), stopped with its process group
    when the run ends, failed or not. A killed run takes it along (it dies with the thread
    that started it)."""

    url: str | None = None
    """An already running scripted server to use instead of starting one; default
    `$BAT_DEMO_LLM_URL`, read when the run first needs the address."""

    _process: subprocess.Popen | None = PrivateAttr(default=None)
    _address: str | None = PrivateAttr(default=None)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def address(self) -> str:
        """The server's base URL, starting it on first use in this run."""
        with self._lock:
            if self._address is None:
                given = self.url or os.environ.get(URL_VAR)
                if given:
                    self._address = given.rstrip("/")
                else:
                    self._process, self._address = start_scripted_llm()
            return self._address

    def resolve(self, config: EvalConfig) -> EvalConfig:
        """`config` with `{scripted_llm}` filled in; unchanged (and nothing started) when it
        names no scripted server."""
        return with_scripted_llm(config, self.address()) if uses_scripted_llm(config) else config

    @property
    def pid(self) -> int | None:
        """The server process this run started, if any."""
        return self._process.pid if self._process is not None else None

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        self.stop()

    def stop(self) -> None:
        with self._lock:
            if self._process is not None:
                stop_process_group(self._process, STOP_GRACE_S)
                self._process = None
                self._address = None
