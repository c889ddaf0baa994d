"""Waiting on a condition in tests: poll with a deadline, never sleep as synchronisation."""

from __future__ import annotations

import time


def wait_for(predicate, timeout_s: float, interval_s: float = 0.05, what: str = "condition"):
    """Poll `predicate()` until it returns something truthy (returned); AssertionError
    naming `what` after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s}s waiting for {what}")
        time.sleep(interval_s)
