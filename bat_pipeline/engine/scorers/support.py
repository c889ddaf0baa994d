"""What the deterministic scorers share: the pass/fail row, walking the trajectory's steps,
how a check's detail quotes text and counts calls, and how the scorers of expected calls
register."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.contracts.trajectory import AgentStep, Step, ToolStep, Trajectory
from bat_pipeline.engine.scorers.registry import CheckFn, check

PASS_FAIL = "pass/fail"


def pass_fail(scorer: str, criterion: str, passed: bool, reason: str, **details: Any) -> ScoreRow:
    """A gating check row: value and raw 1 when it holds, 0 when it does not."""
    return ScoreRow(
        scorer=scorer,
        criterion=criterion,
        value=1.0 if passed else 0.0,
        raw=1.0 if passed else 0.0,
        scale=PASS_FAIL,
        passed=passed,
        gating=True,
        reason=reason,
        details=details,
    )


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


def quote(text: str | None) -> str:
    # Typographic quotes: readable in the reason and never escaped inside a JSON file.
    return f"“{text}”"


def times(count: int) -> str:
    """`1 call`, `3 calls`."""
    return f"{count} call{'s' if count != 1 else ''}"


def as_json(value: Any) -> str:
    """A value as compact JSON with sorted keys (non-JSON values as their text)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def cut(text: str, limit: int) -> str:
    """`text`, or its first `limit - 1` characters and `…`."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def expected_calls_check(name: str, *, criterion: str, order: int) -> Callable[[CheckFn], CheckFn]:
    """Register a scorer of the calls a task expects in `task.expected.<name>` (`tool_calls`,
    `agent_calls`): it applies when that list is not empty, it judges the trajectory, and
    its rows' criteria are `criterion` followed by the callee's name."""
    return check(
        name,
        applies=lambda item: bool(getattr(item.task.expected, name)),
        order=order,
        needs_trajectory=True,
        criteria=(criterion,),
    )
