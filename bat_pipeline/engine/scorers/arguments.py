"""Whether a call's arguments contain the expected ones (bat-cli's `args_subset`)."""

from __future__ import annotations

from typing import Any


def args_contain(actual: Any, expected: Any) -> bool:
    """True when `actual` contains `expected`, compared as JSON values.

    - dict: every expected key is present and its value contained (extra keys allowed);
    - list: every expected item is contained in a *different* actual item (a maximum
      bipartite matching, so `[{"a": 1}, {"a": 1, "b": 2}]` needs two actual items and
      item order does not matter); extra actual items are allowed;
    - scalars: equal as JSON values: `17 == 17.0`, but `"17" != 17`, `True != 1`,
      `None` only equals `None`.
    """
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return False
        return all(key in actual and args_contain(actual[key], value)
                   for key, value in expected.items())
    if isinstance(expected, (list, tuple)):
        if not isinstance(actual, (list, tuple)):
            return False
        return _all_matched(list(actual), list(expected))
    return _json_scalar_equal(actual, expected)


def _all_matched(actual: list[Any], expected: list[Any]) -> bool:
    """Whether each expected item can be paired with its own actual item (Kuhn's
    augmenting paths; lists of arguments are short, so O(E·V) is fine)."""
    if len(expected) > len(actual):
        return False
    fits = [[j for j, item in enumerate(actual) if args_contain(item, want)] for want in expected]
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

    return all(place(i, set()) for i in range(len(expected)))


def _json_scalar_equal(actual: Any, expected: Any) -> bool:
    # JSON has one number type (17 and 17.0 are the same value) and a separate boolean
    # type, while Python's bool is an int subclass: compare by JSON kind first.
    if isinstance(actual, bool) or isinstance(expected, bool):
        return isinstance(actual, bool) and isinstance(expected, bool) and actual == expected
    if isinstance(actual, (int, float)) or isinstance(expected, (int, float)):
        return (isinstance(actual, (int, float)) and isinstance(expected, (int, float))
                and actual == expected)
    if actual is None or expected is None:
        return actual is None and expected is None
    return type(actual) is type(expected) and bool(actual == expected)
