"""Counts of requests the scripted server received, per path and model, and how many it
held at once."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class RequestLog:
    """Thread-safe record of `(path, model, status)` per request, oldest first."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: list[dict[str, Any]] = []
        self._per_model: Counter[str] = Counter()
        self._in_flight = 0
        self._max_in_flight = 0

    def record(self, path: str, model: str) -> tuple[dict[str, Any], int]:
        """Log one request: its record (set `status` on it later) and how many this model
        has had so far, this one included."""
        rec: dict[str, Any] = {"path": path, "model": model, "status": None}
        with self._lock:
            self._records.append(rec)
            self._per_model[model] += 1
            return rec, self._per_model[model]

    @contextmanager
    def held(self) -> Iterator[None]:
        """Count a request as in flight for the block: until its answer is ready (a
        streamed answer: until the stream starts)."""
        with self._lock:
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)
        try:
            yield
        finally:
            with self._lock:
                self._in_flight -= 1

    @property
    def max_in_flight(self) -> int:
        """Most requests held at once since the start or the last `clear`."""
        with self._lock:
            return self._max_in_flight

    def records(self) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(r) for r in self._records]

    def count(self, path: str | None = None, model: str | None = None) -> int:
        """Requests matching `path` and/or `model` (None matches any)."""
        return sum(
            1 for r in self.records() if (path is None or r["path"] == path) and (model is None or r["model"] == model)
        )

    def clear(self) -> None:
        with self._lock:
            self._records.clear()
            self._per_model.clear()
            self._max_in_flight = self._in_flight

    def summary(self) -> dict[str, Any]:
        """`{total, in_flight, max_in_flight, by_path, by_model, by_path_model, requests}`
        for `GET /_stats`."""
        records = self.records()
        with self._lock:
            in_flight, most = self._in_flight, self._max_in_flight
        return {
            "total": len(records),
            "in_flight": in_flight,
            "max_in_flight": most,
            "by_path": dict(Counter(r["path"] for r in records)),
            "by_model": dict(Counter(r["model"] for r in records)),
            "by_path_model": dict(Counter(f"{r['path']} {r['model']}" for r in records)),
            "requests": records[-1000:],
        }
