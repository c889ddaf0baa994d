"""Whether a call's arguments contain the expected ones (bat-cli's `args_subset`)."""

from __future__ import annotations

from typing import Any


def args_contain(actual: Any, expected: Any) -> bool:
    """True when `actual` contains `expected`, compared as JSON values.

    - dict: every expected key is present and its value contained (extra keys allowed);
    - list: every expected item is contained in a *different* actual item (a largest
      pairing, `pair_up`, so `[{"a": 1}, {"a": 1, "b": 2}]` needs two actual items and
      item order does not matter); extra actual items are allowed;
    - scalars: equal as JSON values: `17 == 17.0`, but `"17" != 17`, `True != 1`,
      `None` only equals `None`.
    """
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return False
        return all(key in actual and args_contain(actual[key], value) for key, value in expected.items())
    if isinstance(expected, (list, tuple)):
        if not isinstance(actual, (list, tuple)):
            return False
        return _all_matched(list(actual), list(expected))
    return _json_scalar_equal(actual, expected)


def _all_matched(actual: list[Any], expected: list[Any]) -> bool:
    if len(expected) > len(actual):
        return False
    fits = [[j for j, item in enumerate(actual) if args_contain(item, want)] for want in expected]
    return len(pair_up(fits)) == len(expected)


def pair_up(fits: list[list[int]]) -> dict[int, int]:
    """A largest pairing of wanted items with candidates, each candidate used once:
    `fits[i]` lists the candidates item i accepts; returns item → candidate (Kuhn's
    augmenting paths; the lists compared here are short, so O(E·V) is fine)."""
    owner: dict[int, int] = {}

    def place(i: int, seen: set[int]) -> bool:
        for j in fits[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or place(owner[j], seen):
                owner[j] = i
                return True
        return False

    for i in range(len(fits)):
        place(i, set())
    return {i: j for j, i in owner.items()}


def json_equal(a: Any, b: Any) -> bool:
    """Equal as JSON values: objects with the same keys and equal values, arrays of the
    same length with equal items in order, scalars as in `args_contain`."""
    if isinstance(a, dict) or isinstance(b, dict):
        return (
            isinstance(a, dict)
            and isinstance(b, dict)
            and a.keys() == b.keys()
            and all(json_equal(a[key], b[key]) for key in a)
        )
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return (
            isinstance(a, (list, tuple))
            and isinstance(b, (list, tuple))
            and len(a) == len(b)
            and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
        )
    return _json_scalar_equal(a, b)


def _json_scalar_equal(actual: Any, expected: Any) -> bool:
    # JSON has one number type (17 and 17.0 are the same value) and a separate boolean
    # type, while Python's bool is an int subclass: compare by JSON kind first.
    if isinstance(actual, bool) or isinstance(expected, bool):
        return isinstance(actual, bool) and isinstance(expected, bool) and actual == expected
    if isinstance(actual, (int, float)) or isinstance(expected, (int, float)):
        return isinstance(actual, (int, float)) and isinstance(expected, (int, float)) and actual == expected
    if actual is None or expected is None:
        return actual is None and expected is None
    return type(actual) is type(expected) and bool(actual == expected)
