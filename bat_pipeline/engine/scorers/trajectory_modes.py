"""The checks of a trajectory assertion over a list of tool calls: plain functions, no rows.

Each check counts *aspects* (things it looks at) and *hits* (those that hold); the
assertion's score is hits over aspects summed over its checks, which for AgentV 4.x's own
modes is exactly the score AgentV 4.42.4 gives. With `agentv4` the modes that AgentV 4.x
also has behave as it does, quirks included (see `evaluate`); without it they are this
project's: the largest match rather than a greedy one. engine.scorers.trajectory turns the
checks into score rows; docs/formats.md §7 states the rules for users.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bat_pipeline.engine.contracts.trajectory_assertion import (
    ArgsMode,
    ExpectedCall,
    ObservedCall,
    ToolCount,
    TrajectoryAssertion,
)
from bat_pipeline.engine.scorers.arguments import args_contain, json_equal, pair_up
from bat_pipeline.engine.scorers.support import as_json, cut, times

MAX_SHOWN_ARGS = 200
"""Arguments quoted in a reason are cut to this many characters."""
MAX_NAMED_MISSES = 5
"""Misses named in a check's reason; the rest are counted (all are in its details)."""


@dataclass(frozen=True)
class Check:
    """One check of the assertion and how it came out."""

    criterion: str
    """What it checks: the mode (`in_order`), `count:<tool>`, `forbidden:<tool>`,
    `max_steps`, `durations`."""
    hits: int
    aspects: int
    """Things looked at; 0 when there was nothing to check (durations no call recorded)."""
    passed: bool | None
    """None: nothing could be checked (no matched call had a duration)."""
    reason: str
    details: dict[str, Any] = field(default_factory=dict)


Pairs = list[tuple[int, int]]
"""(expected item, call) pairs a mode matched, for the duration check."""


def args_match(expected: ExpectedCall, actual: Any, mode: ArgsMode, agentv4: bool) -> bool:
    """Whether a call's arguments satisfy an expected call's.

    No `args` (or `any`) and mode `ignore` match anything; otherwise a call without
    arguments matches nothing. `exact`: equal as JSON. `superset`: `args` appear in the
    call's; `subset`: the call's appear in `args`. Ours compare nested objects and lists
    by containment (as bat-cli's `args_subset`); `agentv4` compares top-level keys with
    equal values, as AgentV 4.x does. A list of field paths compares the value at each
    path where `args` has one.
    """
    want = expected.args
    if want is None or want == "any" or mode == "ignore":
        return True
    if actual is None:
        return False
    if isinstance(mode, list):
        return all(
            json_equal(want_value, _at(actual, path))
            for path in mode
            if (want_value := _at(want, path)) is not _MISSING
        )
    if mode == "exact":
        return json_equal(want, actual)
    if agentv4:
        small, big = (want, actual) if mode == "superset" else (actual, want)
        return (
            isinstance(small, dict)
            and isinstance(big, dict)
            and all(key in big and json_equal(value, big[key]) for key, value in small.items())
        )
    return args_contain(actual, want) if mode == "superset" else args_contain(want, actual)


_MISSING = object()


def _at(value: Any, path: str) -> Any:
    for part in path.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return _MISSING
    return value


class _Table:
    """The expected items against the calls: which fit which."""

    def __init__(self, assertion: TrajectoryAssertion, calls: Sequence[ObservedCall], agentv4: bool):
        self.items = assertion.expected or []
        self.calls = calls
        self.fit = [
            [
                call.name == item.tool and args_match(item, call.args, assertion.args_mode_of(item), agentv4)
                for call in calls
            ]
            for item in self.items
        ]

    def call(self, j: int) -> str:
        return f"call {j + 1} ({self.calls[j].name})"

    def missing(self, i: int, pairs: Pairs) -> str:
        """Why expected item i is missing, in words."""
        item = self.items[i]
        label = item.tool if item.args in (None, "any") else f"{item.tool} {cut(as_json(item.args), MAX_SHOWN_ARGS)}"
        named = [j for j, call in enumerate(self.calls) if call.name == item.tool]
        if not named:
            return f"expected {label}: never called"
        if not any(self.fit[i]):
            shown = cut(as_json(self.calls[named[0]].args), MAX_SHOWN_ARGS)
            return f"expected {label}: called with other arguments ({shown})"
        used = {j for _, j in pairs}
        if all(j in used for j, ok in enumerate(self.fit[i]) if ok):
            return f"expected {label}: every call that fits is taken by another expected call"
        return f"expected {label}: called, but not in this order"


def _sequence_check(
    mode: str, hits: int, aspects: int, misses: list[str], pairs: Pairs, what: str
) -> tuple[Check, Pairs]:
    reason = f"{mode}: {hits} of {aspects} {what}"
    if misses:
        reason += "; " + "; ".join(misses[:MAX_NAMED_MISSES])
        if len(misses) > MAX_NAMED_MISSES:
            reason += f"; and {len(misses) - MAX_NAMED_MISSES} more"
    return (
        Check(mode, hits, aspects, hits == aspects, reason, {"misses": misses, "matched": [[i, j] for i, j in pairs]}),
        pairs,
    )


def _positions(t: _Table, strict: bool) -> tuple[Check, Pairs]:
    """Position by position. `strict`: over the longer list, a missing or extra call is a
    miss; AgentV 4.x `exact`: over the expected calls, extra calls noted but not counted."""
    length = max(len(t.items), len(t.calls)) if strict else len(t.items)
    misses, pairs = [], []
    for k in range(length):
        if k >= len(t.calls):
            misses.append(f"expected {t.items[k].tool} as call {k + 1}, got nothing")
        elif k >= len(t.items):
            misses.append(f"extra {t.call(k)}")
        elif t.fit[k][k]:
            pairs.append((k, k))
        elif t.calls[k].name == t.items[k].tool:
            misses.append(f"{t.call(k)} has other arguments ({cut(as_json(t.calls[k].args), MAX_SHOWN_ARGS)})")
        else:
            misses.append(f"expected {t.items[k].tool} as call {k + 1}, got {t.calls[k].name}")
    check, pairs = _sequence_check(
        "strict" if strict else "exact", len(pairs), length, misses, pairs, "positions match"
    )
    extra = len(t.calls) - len(t.items)
    if not strict and extra > 0 and t.items:
        check = Check(
            check.criterion,
            check.hits,
            check.aspects,
            check.passed,
            check.reason + f" ({extra} more call{'s' if extra != 1 else ''} not counted, as AgentV 4.x)",
            check.details,
        )
    return check, pairs


def _in_order(t: _Table) -> tuple[Check, Pairs]:
    """The most expected calls found in order (a longest common subsequence), other calls
    allowed between them."""
    m, n = len(t.items), len(t.calls)
    best = [[0] * (n + 1) for _ in range(m + 1)]
    for i in reversed(range(m)):
        for j in reversed(range(n)):
            best[i][j] = max(best[i + 1][j], best[i][j + 1], best[i + 1][j + 1] + 1 if t.fit[i][j] else 0)
    pairs: Pairs = []
    i = j = 0
    while i < m and j < n:
        if t.fit[i][j] and best[i][j] == best[i + 1][j + 1] + 1:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif best[i][j] == best[i + 1][j]:
            i += 1  # giving up this expected call costs nothing: keep the calls for the others
        else:
            j += 1
    found = {i for i, _ in pairs}
    misses = [t.missing(i, pairs) for i in range(m) if i not in found]
    return _sequence_check("in_order", len(pairs), m, misses, pairs, "expected calls in order")


def _in_order_4x(t: _Table) -> tuple[Check, Pairs]:
    """AgentV 4.x `in_order`: each expected call is looked for after the previous match;
    the first call with its name decides — with other arguments it is a miss, and that
    call is not looked at again."""
    misses, pairs, j = [], [], 0
    for i, item in enumerate(t.items):
        while j < len(t.calls) and t.calls[j].name != item.tool:
            j += 1
        if j == len(t.calls):
            misses.append(f"expected {item.tool}: not found after the previous match")
            continue
        if t.fit[i][j]:
            pairs.append((i, j))
        else:
            misses.append(f"expected {item.tool}: {t.call(j)} has other arguments")
        j += 1
    return _sequence_check("in_order", len(pairs), len(t.items), misses, pairs, "expected calls in order")


def _unordered(t: _Table, superset: bool, agentv4: bool) -> tuple[Check, Pairs]:
    """Each expected call matched to its own call, in any order: the largest such
    matching (AgentV 4.x's `superset`: the first free call, greedily). `unordered` also
    counts every unmatched call as a miss; `superset` allows them."""
    if agentv4:
        taken: dict[int, int] = {}
        for i, row in enumerate(t.fit):
            j = next((j for j, ok in enumerate(row) if ok and j not in taken.values()), None)
            if j is not None:
                taken[i] = j
    else:
        taken = pair_up([[j for j, ok in enumerate(row) if ok] for row in t.fit])
    pairs = sorted(taken.items())
    misses = [t.missing(i, pairs) for i in range(len(t.items)) if i not in taken]
    if superset:
        return _sequence_check("superset", len(pairs), len(t.items), misses, pairs, "expected calls made")
    used = set(taken.values())
    misses += [f"extra {t.call(j)}" for j in range(len(t.calls)) if j not in used]
    return _sequence_check("unordered", len(pairs), max(len(t.items), len(t.calls)), misses, pairs, "calls paired")


def _subset(t: _Table) -> tuple[Check, Pairs]:
    """Every call is one of the expected ones (an expected call may be used any number
    of times); aspects = the calls."""
    misses, pairs = [], []
    for j in range(len(t.calls)):
        i = next((i for i, row in enumerate(t.fit) if row[j]), None)
        if i is None:
            named = any(item.tool == t.calls[j].name for item in t.items)
            misses.append(f"{t.call(j)} is not allowed" + (" with these arguments" if named else ""))
        else:
            pairs.append((i, j))
    return _sequence_check("subset", len(pairs), len(t.calls), misses, pairs, "calls allowed")


def _durations(t: _Table, pairs: Pairs) -> Check | None:
    """The matched calls of expected items with `max_duration_ms`; a call with no
    recorded duration is not checked (as AgentV 4.x)."""
    limited = [(i, j) for i, j in pairs if t.items[i].max_duration_ms is not None]
    if not limited:
        return None
    slow, unknown, hits = [], [], 0
    for i, j in limited:
        took, limit = t.calls[j].duration_ms, t.items[i].max_duration_ms
        if took is None:
            unknown.append(t.call(j))
        elif limit is not None and took <= limit:
            hits += 1
        else:
            slow.append(f"{t.call(j)} took {took:g} ms, at most {limit:g}")
    aspects = len(limited) - len(unknown)
    reason = f"durations: {hits} of {aspects} calls within their limit"
    if slow:
        reason += "; " + "; ".join(slow)
    if unknown:
        reason += f"; not checked (no duration recorded): {', '.join(unknown)}"
    passed = None if not aspects else not slow
    return Check("durations", hits, aspects, passed, reason, {"slow": slow, "unchecked": unknown})


def _count(criterion: str, tool: str, want: ToolCount, calls: Sequence[ObservedCall]) -> Check:
    made = sum(1 for call in calls if call.name == tool)
    ok = want.holds(made)
    return Check(
        criterion,
        int(ok),
        1,
        ok,
        f"{tool}: {times(made)}, {want.wording()} expected",
        {"calls": made, **want.model_dump(exclude_none=True)},
    )


def evaluate(assertion: TrajectoryAssertion, calls: Sequence[ObservedCall], *, agentv4: bool = False) -> list[Check]:
    """Every check of the assertion on `calls` (in the order they were made), in this
    order: the mode, durations, counts (`minimums`, then `counts`), `forbidden`,
    `max_steps`.

    Modes (aspects in brackets): `strict` — position by position, nothing extra
    [the longer of expected and calls]; `in_order` — the longest run of expected calls
    found in order, others allowed between [expected]; `unordered` — the largest
    one-to-one pairing, nothing extra [the longer]; `superset` — the largest pairing,
    extra calls allowed [expected]; `subset` — every call fits some expected call, which
    may be reused [calls]. `exact` is `strict` and `any_order` is `unordered`, unless
    `agentv4`.

    With `agentv4` (an AgentV 4.x file), as AgentV 4.42.4 does: `exact` compares the
    first positions and ignores extra calls [expected]; `in_order` lets the first call
    with the right name decide and never looks at it again; `superset` pairs greedily;
    `any_order` checks only `minimums` and ignores `expected`, and `minimums` count
    only in `any_order`; durations are checked only in `in_order` and `exact`; argument
    modes `subset` / `superset` look at top-level keys only.
    """
    table = _Table(assertion, calls, agentv4)
    mode = assertion.mode
    if not agentv4 and mode in ("exact", "any_order"):
        mode = "strict" if mode == "exact" else "unordered"
    checks: list[Check] = []
    if assertion.expected is not None and mode != "any_order":
        if mode in ("strict", "exact"):
            check, pairs = _positions(table, strict=mode == "strict")
        elif mode == "in_order":
            check, pairs = _in_order_4x(table) if agentv4 else _in_order(table)
        elif mode == "subset":
            check, pairs = _subset(table)
        else:
            check, pairs = _unordered(table, mode == "superset", agentv4)
        checks.append(check)
        durations = _durations(table, pairs)
        if durations is not None and (not agentv4 or mode in ("in_order", "exact")):
            checks.append(durations)
    if not agentv4 or mode == "any_order":
        checks += [_count(f"minimum:{tool}", tool, ToolCount(min=n), calls) for tool, n in assertion.minimums.items()]
    checks += [_count(f"count:{tool}", tool, want, calls) for tool, want in assertion.counts.items()]
    for tool in assertion.forbidden:
        made = sum(1 for call in calls if call.name == tool)
        checks.append(
            Check(
                f"forbidden:{tool}",
                int(not made),
                1,
                not made,
                f"{tool}: {times(made)}, forbidden" if made else f"{tool}: not called",
                {"calls": made},
            )
        )
    if assertion.max_steps is not None:
        ok = len(calls) <= assertion.max_steps
        checks.append(
            Check(
                "max_steps",
                int(ok),
                1,
                ok,
                f"{times(len(calls))} in all, at most {assertion.max_steps}",
                {"calls": len(calls), "max_steps": assertion.max_steps},
            )
        )
    return checks


def score(checks: Sequence[Check]) -> float:
    """Hits over aspects, summed over the checks; 1.0 when nothing was looked at."""
    aspects = sum(c.aspects for c in checks)
    return sum(c.hits for c in checks) / aspects if aspects else 1.0
