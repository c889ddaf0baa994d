"""The deterministic verdict of one episode (SPEC §6).

Each expectation of the task is one independent check; the episode passes only when
every check passes, and the reason lists every check, passed or failed, in a fixed
order: status, each required phrase, then the span checks (tool calls, agent calls,
model calls, tokens, failed steps).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from bat_pipeline.engine.contracts.episode import Verdict, VerdictCheck
from bat_pipeline.engine.contracts.tasks import Task
from bat_pipeline.engine.contracts.trajectory import AgentStep, Step, ToolStep, Trajectory

NO_SPANS = "no spans found for this conversation"
MAX_NAMED_FAILURES = 3
"""Failed steps named in the no-errors check; the rest are counted."""
MAX_ERROR_CHARS = 300
"""A failed step's error is cut to this length in the check's detail."""


def decide(task: Task, final_status: str | None, final_output: str | None,
           trajectory: Trajectory) -> Verdict:
    """Check the episode against every expectation of the task.

    `final_output` None counts as empty text. The span checks run only when the task
    has a span expectation; if the trajectory was not found they collapse into one
    failed `spans` check, since none of them can be judged.
    """
    expected = task.expected
    output = final_output or ""
    checks: list[VerdictCheck] = []

    if expected.status is not None:
        checks.append(_status_check(expected.status, final_status))

    for index, phrase in enumerate(expected.output_must_contain):
        found = phrase in output
        detail = f"contains {_quote(phrase)}" if found else f"{_quote(phrase)} not in the final output"
        checks.append(VerdictCheck(check=f"output[{index}]", passed=found, detail=detail))

    if expected.needs_spans:
        if not trajectory.found:
            checks.append(VerdictCheck(check="spans", passed=False, detail=NO_SPANS))
        else:
            checks.extend(_span_checks(task, trajectory))

    return Verdict(
        passed=all(c.passed for c in checks),
        reason=_reason(checks),
        checks=checks,
    )


def error_verdict(message: str) -> Verdict:
    """A failed verdict for an attempt that raised before it could be checked."""
    detail = f"the attempt did not complete: {message}"
    check = VerdictCheck(check="attempt", passed=False, detail=detail)
    return Verdict(passed=False, reason=_reason([check]), checks=[check])


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


def iter_steps(steps: Sequence[Step]) -> Iterator[Step]:
    """Every step, depth first, nested steps of tool and agent calls included."""
    for step in steps:
        yield step
        if isinstance(step, (ToolStep, AgentStep)):
            yield from iter_steps(step.steps)


def all_steps(trajectory: Trajectory) -> Iterator[Step]:
    """Every step of every turn, nested ones included, in order."""
    for turn in trajectory.turns:
        yield from iter_steps(turn.steps)


def _status_check(expected: str, actual: str | None) -> VerdictCheck:
    if actual == expected:
        return VerdictCheck(check="status", passed=True, detail=f"{actual}, as expected")
    got = "no final status" if actual is None else f"ended {actual}"
    return VerdictCheck(check="status", passed=False, detail=f"{got}, expected {expected}")


def _span_checks(task: Task, trajectory: Trajectory) -> list[VerdictCheck]:
    expected = task.expected
    steps = list(all_steps(trajectory))
    tools = [s for s in steps if isinstance(s, ToolStep)]
    agents = [s for s in steps if isinstance(s, AgentStep)]
    checks: list[VerdictCheck] = []

    for want in expected.tool_calls:
        named = [t for t in tools if t.name == want.name]
        matching = [t for t in named if not want.args_subset or args_contain(t.args, want.args_subset)]
        passed = len(matching) >= want.times
        detail = _times(len(matching))
        if want.args_subset:
            detail += f" with arguments containing {_json(want.args_subset)}"
        detail += f", at least {want.times} expected"
        if not passed and len(named) > len(matching):
            detail += f" ({len(named) - len(matching)} more with other arguments)"
        checks.append(VerdictCheck(check=f"tool_call:{want.name}", passed=passed, detail=detail))

    for want in expected.agent_calls:
        count = sum(1 for a in agents if a.agent == want.agent)
        passed = count >= want.times
        detail = f"{_times(count)}, at least {want.times} expected"
        checks.append(VerdictCheck(check=f"agent_call:{want.agent}", passed=passed, detail=detail))

    totals = trajectory.totals
    if expected.max_model_calls is not None:
        limit = expected.max_model_calls
        passed = totals.model_calls <= limit
        detail = f"{totals.model_calls} model calls, at most {limit} allowed"
        checks.append(VerdictCheck(check="model_calls", passed=passed, detail=detail))

    if expected.max_tokens is not None:
        used = totals.tokens_in + totals.tokens_out
        limit = expected.max_tokens
        detail = f"{used} tokens in + out, at most {limit} allowed"
        checks.append(VerdictCheck(check="tokens", passed=used <= limit, detail=detail))

    if expected.no_errors:
        failed = [s for s in steps if s.error]
        checks.append(VerdictCheck(check="no_errors", passed=not failed, detail=_failures(failed)))

    return checks


def _failures(failed: list[Step]) -> str:
    if not failed:
        return "no failed step"
    named = [f"{_step_label(s)} failed with {_cut(s.error or '', MAX_ERROR_CHARS)}"
             for s in failed[:MAX_NAMED_FAILURES]]
    more = len(failed) - len(named)
    text = f"{len(failed)} failed step{'s' if len(failed) != 1 else ''}: " + " | ".join(named)
    return text + (f" | and {more} more" if more else "")


def _step_label(step: Step) -> str:
    if isinstance(step, ToolStep):
        return f"tool {step.name}"
    if isinstance(step, AgentStep):
        return f"agent {step.agent or '?'}"
    if step.kind == "model":
        return f"model {step.model or '?'}"
    return f"span {step.span}"


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
    return type(actual) is type(expected) and actual == expected


def _reason(checks: list[VerdictCheck]) -> str:
    return "; ".join(f"{c.check} {'ok' if c.passed else 'FAIL'}: {c.detail}" for c in checks)


def _times(count: int) -> str:
    return f"{count} call{'s' if count != 1 else ''}"


def _quote(text: str | None) -> str:
    # Typographic quotes: readable in the reason and never escaped inside a JSON file.
    return f"“{text}”"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
