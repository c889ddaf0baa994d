"""Trajectory assertions on hand-made trajectories (engine.scorers.trajectory_modes): the
five modes, the four argument modes and field paths, counts, forbidden tools, max_steps
and durations, in this project's meaning; AgentV 4.x's reading is held against the real
AgentV in test_trajectory_agentv.py."""

from __future__ import annotations

from typing import Any

import pytest

from bat_pipeline.engine.contracts.trajectory_assertion import ObservedCall, TrajectoryAssertion
from bat_pipeline.engine.scorers.trajectory_modes import evaluate, score


def calls(*spec: str | tuple[str, Any] | tuple[str, Any, float]) -> list[ObservedCall]:
    """`"a"` → a call of a with `{}`; `("a", {"x": 1})`; `("a", args, duration_ms)`."""
    made = []
    for item in spec:
        if isinstance(item, str):
            made.append(ObservedCall(name=item, args={}))
        else:
            made.append(ObservedCall(name=item[0], args=item[1], duration_ms=item[2] if len(item) > 2 else None))
    return made


def expected(*spec: str | dict[str, Any]) -> list[dict[str, Any]]:
    return [{"tool": item} if isinstance(item, str) else item for item in spec]


def run(assertion: dict[str, Any], made: list[ObservedCall], agentv4: bool = False) -> tuple[float, bool]:
    checks = evaluate(TrajectoryAssertion.model_validate(assertion), made, agentv4=agentv4)
    return score(checks), all(c.passed is not False for c in checks)


ABC = expected("a", "b", "c")

MODES = [
    # strict: same calls, same order, nothing extra; aspects = the longer list
    ("strict same", "strict", ABC, calls("a", "b", "c"), 1.0, True),
    ("strict extra call", "strict", ABC, calls("a", "b", "c", "d"), 3 / 4, False),
    ("strict call missing", "strict", ABC, calls("a", "b"), 2 / 3, False),
    ("strict swapped", "strict", ABC, calls("a", "c", "b"), 1 / 3, False),
    ("strict nothing expected, nothing called", "strict", [], calls(), 1.0, True),
    ("strict nothing expected, a call", "strict", [], calls("a"), 0.0, False),
    # in_order: expected calls in order, others allowed between; aspects = expected
    ("in_order others between", "in_order", ABC, calls("x", "a", "y", "b", "c", "z"), 1.0, True),
    ("in_order swapped", "in_order", ABC, calls("a", "c", "b"), 2 / 3, False),
    ("in_order longest run wins", "in_order", ABC, calls("c", "a", "b", "c"), 1.0, True),
    ("in_order missing", "in_order", ABC, calls("b"), 1 / 3, False),
    ("in_order same tool twice", "in_order", expected("a", "a"), calls("a"), 1 / 2, False),
    ("in_order empty expected", "in_order", [], calls("a"), 1.0, True),
    # unordered: the same calls in any order, nothing extra; aspects = the longer list
    ("unordered any order", "unordered", ABC, calls("c", "a", "b"), 1.0, True),
    ("unordered extra call", "unordered", ABC, calls("c", "a", "b", "a"), 3 / 4, False),
    ("unordered missing", "unordered", ABC, calls("c", "a"), 2 / 3, False),
    # subset: every call is an expected one (reusable); aspects = the calls
    ("subset reuse", "subset", expected("a", "b"), calls("a", "a", "b", "a"), 1.0, True),
    ("subset foreign calls", "subset", expected("a"), calls("a", "x", "y", "a"), 2 / 4, False),
    ("subset no calls", "subset", ABC, calls(), 1.0, True),
    ("subset nothing allowed", "subset", [], calls("a"), 0.0, False),
    # superset: every expected call made, extra calls allowed; aspects = expected
    ("superset extras", "superset", expected("a", "b"), calls("x", "b", "y", "a"), 1.0, True),
    ("superset one call per expected", "superset", expected("a", "a"), calls("a", "x"), 1 / 2, False),
    ("superset missing", "superset", ABC, calls("a"), 1 / 3, False),
    # AgentV 4.x's names outside 4.x files: exact is strict, any_order is unordered
    ("exact outside 4.x is strict", "exact", expected("a", "b"), calls("a", "b", "c"), 2 / 3, False),
    ("any_order outside 4.x is unordered", "any_order", expected("a", "b"), calls("b", "a"), 1.0, True),
]


@pytest.mark.parametrize(
    ("mode", "items", "made", "value", "passed"), [case[1:] for case in MODES], ids=[case[0] for case in MODES]
)
def test_modes(mode, items, made, value, passed):
    assert run({"mode": mode, "expected": items}, made) == (pytest.approx(value), passed)


def test_largest_matching_not_greedy():
    """The first expected call could take either call; only the pairing that gives it the
    second lets the other expected call match (AgentV 4.x pairs greedily and scores 0.5)."""
    items = expected("a", {"tool": "a", "args": {"x": 1}})
    made = calls(("a", {"x": 1}), ("a", {"x": 2}))
    assert run({"mode": "superset", "expected": items}, made) == (1.0, True)
    assert run({"mode": "unordered", "expected": items}, made) == (1.0, True)
    assert run({"mode": "superset", "expected": items}, made, agentv4=True) == (0.5, False)


def test_in_order_looks_past_a_call_with_other_arguments():
    items = expected({"tool": "get_weather", "args": {"city": "London"}})
    made = calls(("get_weather", {"city": "Paris"}), ("get_weather", {"city": "London"}))
    assert run({"mode": "in_order", "expected": items}, made) == (1.0, True)
    assert run({"mode": "in_order", "expected": items}, made, agentv4=True) == (0.0, False)


NESTED = {"city": "Paris", "units": {"temp": "C", "wind": "kmh"}, "days": [1, 2]}
ARGS = [
    # exact (the default): equal as JSON, lists in order, 17 == 17.0, true != 1
    ("exact equal", "exact", NESTED, NESTED, True),
    ("exact extra key", "exact", {"city": "Paris"}, {"city": "Paris", "units": "C"}, False),
    ("exact list order", "exact", {"days": [2, 1]}, {"days": [1, 2]}, False),
    ("exact numbers as JSON", "exact", {"n": 17}, {"n": 17.0}, True),
    ("exact bool is no number", "exact", {"f": True}, {"f": 1}, False),
    ("exact string is no number", "exact", {"n": "17"}, {"n": 17}, False),
    # superset: the expected arguments all appear in the call's (nested too)
    ("superset top level", "superset", {"city": "Paris"}, NESTED, True),
    ("superset nested", "superset", {"units": {"temp": "C"}}, NESTED, True),
    ("superset list items any order", "superset", {"days": [2]}, NESTED, True),
    ("superset other value", "superset", {"city": "Rome"}, NESTED, False),
    ("superset key missing", "superset", {"country": "FR"}, NESTED, False),
    # subset: the call's arguments all appear in the expected ones
    ("subset call has fewer", "subset", NESTED, {"city": "Paris"}, True),
    ("subset call has another key", "subset", {"city": "Paris"}, {"city": "Paris", "units": "C"}, False),
    ("subset empty call", "subset", {"city": "Paris"}, {}, True),
    # ignore: any arguments
    ("ignore", "ignore", {"city": "Paris"}, {"q": 1}, True),
    # field paths: compared exactly where the expected arguments have them
    ("paths equal", ["city", "units.temp"], {"city": "Paris", "units": {"temp": "C"}, "days": [9]}, NESTED, True),
    ("paths differ", ["units.wind"], {"units": {"wind": "mph"}}, NESTED, False),
    ("path into a list", ["days.1"], {"days": [0, 2]}, NESTED, True),
    ("path absent from the call", ["country"], {"country": "FR"}, NESTED, False),
    ("path absent from expected", ["country"], {"city": "Rome"}, NESTED, True),
]


@pytest.mark.parametrize(
    ("args_mode", "want", "got", "matches"), [case[1:] for case in ARGS], ids=[case[0] for case in ARGS]
)
def test_argument_modes(args_mode, want, got, matches):
    item = {"tool": "get_weather", "args": want, "args_mode": args_mode}
    assert run({"mode": "strict", "expected": [item]}, calls(("get_weather", got))) == (float(matches), matches)


@pytest.mark.parametrize("spelling", ["args_mode", "args_match", "argsMatch"])
def test_args_mode_spellings_and_assertion_default(spelling):
    made = calls(("a", {"x": 1, "y": 2}))
    assert run({"mode": "strict", "expected": [{"tool": "a", "args": {"x": 1}, spelling: "superset"}]}, made)[1]
    assert run({"mode": "strict", spelling: "superset", "expected": [{"tool": "a", "args": {"x": 1}}]}, made)[1]
    item_wins = {
        "mode": "strict",
        spelling: "superset",
        "expected": [{"tool": "a", "args": {"x": 1}, "args_mode": "exact"}],
    }
    assert not run(item_wins, made)[1]


@pytest.mark.parametrize("args", [None, "any"])
def test_no_args_or_any_match_any_arguments(args):
    item = {"tool": "a"} if args is None else {"tool": "a", "args": args}
    assert run({"mode": "strict", "expected": [item]}, calls(("a", {"q": [1]}))) == (1.0, True)


def test_a_call_without_arguments_matches_only_unchecked_arguments():
    made = [ObservedCall(name="a")]
    assert not run({"mode": "strict", "expected": [{"tool": "a", "args": {}}]}, made)[1]
    assert run({"mode": "strict", "expected": [{"tool": "a", "args": {}, "args_mode": "ignore"}]}, made)[1]


COUNTS = [
    ("min holds", {"counts": {"a": {"min": 2}}}, calls("a", "b", "a"), 1.0, True),
    ("min short", {"counts": {"a": {"min": 3}}}, calls("a", "b", "a"), 0.0, False),
    ("max holds", {"counts": {"a": {"max": 2}}}, calls("a", "a"), 1.0, True),
    ("max over", {"counts": {"a": {"max": 1}}}, calls("a", "a"), 0.0, False),
    (
        "range",
        {"counts": {"a": {"min": 1, "max": 2}, "b": {"min": 1, "max": 2}}},
        calls("a", "a", "a", "b"),
        0.5,
        False,
    ),
    ("exact holds", {"counts": {"a": {"exact": 2}}}, calls("a", "a"), 1.0, True),
    ("exact over", {"counts": {"a": {"exact": 1}}}, calls("a", "a"), 0.0, False),
    ("exact zero", {"counts": {"z": {"exact": 0}}}, calls("a"), 1.0, True),
    ("minimums", {"minimums": {"a": 1, "b": 2, "c": 0}}, calls("a", "b"), 2 / 3, False),
    ("forbidden not called", {"forbidden": ["drop_table"]}, calls("a"), 1.0, True),
    ("forbidden called", {"forbidden": ["drop_table", "rm"]}, calls("a", "drop_table"), 0.5, False),
    ("max_steps within", {"max_steps": 2}, calls("a", "b"), 1.0, True),
    ("max_steps over", {"max_steps": 2}, calls("a", "b", "c"), 0.0, False),
    ("max_steps zero", {"max_steps": 0}, calls(), 1.0, True),
    # a mode's aspects and the counts' add up: 2 of 2 in order, count fails → 2 of 3
    (
        "with a mode",
        {"mode": "in_order", "expected": expected("a", "b"), "counts": {"a": {"exact": 1}}},
        calls("a", "a", "b"),
        2 / 3,
        False,
    ),
]


@pytest.mark.parametrize(
    ("assertion", "made", "value", "passed"), [case[1:] for case in COUNTS], ids=[case[0] for case in COUNTS]
)
def test_counts_forbidden_and_max_steps(assertion, made, value, passed):
    assert run(assertion, made) == (pytest.approx(value), passed)


DURATIONS = [
    ("within", calls(("a", {}, 50)), 1.0, True),
    ("over", calls(("a", {}, 500)), 0.5, False),
    ("unknown: not counted", calls("a"), 1.0, True),
]


@pytest.mark.parametrize(
    ("made", "value", "passed"), [case[1:] for case in DURATIONS], ids=[case[0] for case in DURATIONS]
)
@pytest.mark.parametrize("mode", ["strict", "in_order", "unordered", "subset", "superset"])
def test_durations_of_matched_calls(mode, made, value, passed):
    assertion = {"mode": mode, "expected": [{"tool": "a", "max_duration_ms": 100}]}
    assert run(assertion, made) == (value, passed)


def test_checks_explain_misses():
    assertion = TrajectoryAssertion.model_validate(
        {
            "mode": "in_order",
            "expected": expected({"tool": "get_weather", "args": {"city": "Rome"}}, "add", "sum"),
            "forbidden": ["delete"],
            "counts": {"add": {"max": 1}},
        }
    )
    made = calls(("get_weather", {"city": "Paris"}), "add", "delete", "add")
    by_name = {c.criterion: c for c in evaluate(assertion, made)}
    assert list(by_name) == ["in_order", "count:add", "forbidden:delete"]
    sequence = by_name["in_order"]
    assert (sequence.hits, sequence.aspects) == (1, 3)
    assert sequence.details["misses"] == [
        'expected get_weather {"city": "Rome"}: called with other arguments ({"city": "Paris"})',
        "expected sum: never called",
    ]
    assert sequence.details["matched"] == [[1, 1]]
    assert by_name["count:add"].reason == "add: 2 calls, at most 1 expected"
    assert by_name["forbidden:delete"].reason == "delete: 1 call, forbidden"


MISSES = [
    ("in_order", expected("b", "a"), calls("a", "b"), ["expected b: called, but not in this order"]),
    (
        "unordered",
        expected("a", "a"),
        calls("a"),
        ["expected a: every call that fits is taken by another expected call"],
    ),
    (
        "superset",
        expected({"tool": "a", "args": {"x": 1}}),
        calls(("a", {"x": 2})),
        ['expected a {"x": 1}: called with other arguments ({"x": 2})'],
    ),
    (
        "strict",
        expected({"tool": "a", "args": {"x": 1}}),
        calls(("a", {"x": 2}), "b"),
        ['call 1 (a) has other arguments ({"x": 2})', "extra call 2 (b)"],
    ),
    (
        "subset",
        expected({"tool": "a", "args": {"x": 1}}),
        calls(("a", {"x": 2}), "c"),
        ["call 1 (a) is not allowed with these arguments", "call 2 (c) is not allowed"],
    ),
]


@pytest.mark.parametrize(("mode", "items", "made", "misses"), MISSES, ids=[m[0] for m in MISSES])
def test_misses_say_why(mode, items, made, misses):
    (check,) = evaluate(TrajectoryAssertion.model_validate({"mode": mode, "expected": items}), made)
    assert check.details["misses"] == misses
