"""Fault and timing knobs of the scripted model server, global and per model name."""

from __future__ import annotations

import threading
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Knobs(BaseModel):
    """What the server does besides answering; every field is optional in updates."""

    model_config = ConfigDict(extra="forbid")

    latency_ms: int = 0
    """Delay before every answer, in milliseconds."""
    error_rate: float = 0.0
    """Fraction of requests answered with `error_status`; deterministic (every 1/rate-th)."""
    error_status: int = 500
    """HTTP status of injected errors."""
    retry_after: float | None = None
    """Seconds sent as `Retry-After` with injected errors (429s default to 1)."""
    hang: bool = False
    """Never answer (until the client disconnects or the server stops)."""
    malformed: bool | str = False
    """`true`/"body": invalid JSON body; "content": valid envelope, garbage text."""
    no_structured_output: bool = False
    """Reject requests carrying `response_format` (Google: `responseJsonSchema`) with 400,
    like servers without structured output."""
    fail_model: list[str] = []
    """Model names that always get a 400."""
    think: bool = False
    """Judge prose answers start with a `<think>...</think>` block."""
    pad_reasoning: int = Field(default=0, ge=0)
    """Characters of filler added to the judge's reasoning (a runaway judge's answer)."""
    persona: str | None = None
    """The persona answering (`competent`, `sloppy`, `judge`, `user`) whatever words the
    model name holds: set per model, it lets a real model name (`gemini-3.1-pro-preview`)
    be scripted."""
    echo_key: bool = False
    """Text answers and judge reasoning quote the key the request came with
    (`Authorization: Bearer` or `x-api-key`), as a leaky server would."""


class KnobBoard:
    """Thread-safe global knobs plus per-model overrides."""

    def __init__(self, **knobs: Any) -> None:
        self._lock = threading.Lock()
        self._global: dict[str, Any] = {}
        self._per_model: dict[str, dict[str, Any]] = {}
        self.update(knobs)

    def update(self, body: dict[str, Any]) -> None:
        """Apply `{knob: value, ..., "models": {name: {knob: value}}, "reset": bool}`."""
        body = dict(body)
        models = body.pop("models", None) or {}
        reset = body.pop("reset", False)
        if isinstance(body.get("fail_model"), str):
            body["fail_model"] = [body["fail_model"]]
        Knobs(**body)
        for values in models.values():
            Knobs(**values)
        with self._lock:
            if reset:
                self._global, self._per_model = {}, {}
            self._global.update(body)
            for name, values in models.items():
                self._per_model.setdefault(name, {}).update(values)

    def for_model(self, model: str) -> Knobs:
        """Effective knobs for one model name: global, then that model's overrides."""
        with self._lock:
            merged = {**self._global, **self._per_model.get(model, {})}
        return Knobs(**merged)

    def snapshot(self) -> dict[str, Any]:
        """Current settings, as set."""
        with self._lock:
            return {"global": dict(self._global), "models": {k: dict(v) for k, v in self._per_model.items()}}
