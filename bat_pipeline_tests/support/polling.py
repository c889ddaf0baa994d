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


def last_value(produce, done, timeout_s: float, interval_s: float = 0.05):
    """Poll `produce()` until `done(value)` holds or `timeout_s` has passed; the last value
    either way (for a test that asserts on it, with a better message than a timeout)."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = produce()
        if done(value) or time.monotonic() > deadline:
            return value
        time.sleep(interval_s)
