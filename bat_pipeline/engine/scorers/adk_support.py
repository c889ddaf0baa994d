"""What the ADK scorers (adk_*.py) share: the episode cut into ADK's actual invocations, one
per user turn, and the row an ADK metric gives (Google ADK, docs/formats.md).

ADK compares actual invocation i with expected invocation i (evaluator.py
`_validate_invocation_lengths`); here the actual invocations are the conversation's turns:
the agent's answer of each from the conversation log, its tool calls from the trajectory
rebuilt from spans (a turn's nested calls included, as ADK collects every function call of
an invocation's events).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bat_pipeline.engine.contracts.adk import AdkCase, AdkCriterion
from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.contracts.trajectory import ModelStep, ToolStep, Turn
from bat_pipeline.engine.scorers.registry import ScoringInput
from bat_pipeline.engine.scorers.support import iter_steps

SCALE = "adk"


@dataclass(frozen=True)
class ToolCall:
    name: str
    args: Any = None


@dataclass(frozen=True)
class Actual:
    """One actual invocation: what the agent answered, the tool calls it made (None when
    the trajectory was not found), and its model calls and tokens (None: not reported)."""

    text: str
    calls: list[ToolCall] | None = None
    model_calls: int | None = None
    tokens: int | None = None
    steps: list[Any] = field(default_factory=list)


def case_of(item: ScoringInput) -> AdkCase:
    case = item.task.adk
    assert case is not None  # the scorers apply to ADK tasks only
    return case


def configured(metric: str) -> Callable[[ScoringInput], bool]:
    """`applies` of an ADK metric's scorer: an ADK task whose criteria name it."""

    def applies(item: ScoringInput) -> bool:
        return item.task.adk is not None and item.task.adk.criterion(metric) is not None

    return applies


def is_adk(item: ScoringInput) -> bool:
    return item.task.adk is not None


def _args(value: Any) -> Any:
    """The arguments as a mapping when they were recorded as JSON text."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return {} if value is None else value


def _actual(turn: Turn | None, text: str, found: bool) -> Actual:
    if turn is None or not found:
        return Actual(text=text)
    steps = list(iter_steps(turn.steps))
    calls = [ToolCall(s.name, _args(s.args)) for s in steps if isinstance(s, ToolStep)]
    models = [s for s in steps if isinstance(s, ModelStep)]
    counted = [s for s in models if s.tokens_in or s.tokens_out]
    tokens = sum(s.tokens_in + s.tokens_out for s in counted) if counted else None
    return Actual(text=text, calls=calls, model_calls=len(models), tokens=tokens, steps=steps)


def actual_invocations(item: ScoringInput) -> list[Actual]:
    """The conversation's turns as ADK's actual invocations, in order. The answers are the
    conversation log's (the episode's final output for a one-turn conversation without
    one); a trajectory whose turns are not the conversation's gives no calls."""
    log = item.episode.conversation
    answers = [t.agent for t in log.turns] if log is not None and log.turns else [item.episode.final_output]
    trajectory = item.trajectory
    turns: list[Turn | None] = list(trajectory.turns)
    if len(turns) != len(answers):
        # One trajectory turn for a one-turn conversation is the usual case; otherwise the
        # spans cannot be put to the turns, and no calls are known.
        found = trajectory.found and len(answers) == 1
        turns = (
            [Turn(user="", steps=[s for t in trajectory.turns for s in t.steps])] if found else [None] * len(answers)
        )
    return [_actual(turn, text, trajectory.found) for turn, text in zip(turns, answers, strict=True)]


def threshold_row(
    criterion: AdkCriterion, value: float, per_invocation: list[float | None], reason: str, **details: Any
) -> ScoreRow:
    """An ADK metric's row: the case's value (the mean over its invocations) against the
    threshold (passes at or above it, as ADK decides), gating."""
    assert criterion.threshold is not None  # only the informational metrics have none
    passed = value >= criterion.threshold
    return ScoreRow(
        scorer=criterion.metric,
        criterion=criterion.metric,
        value=value,
        raw=value,
        scale=SCALE,
        passed=passed,
        gating=True,
        reason=f"{value:.4g} {'>=' if passed else '<'} threshold {criterion.threshold:g}: {reason}",
        details={"threshold": criterion.threshold, "per_invocation": per_invocation, **details},
    )


def error_row(metric: str, reason: str, **details: Any) -> ScoreRow:
    """A metric that could not be computed: gating and failed (never a pass, never ADK's
    NOT_EVALUATED), the reason saying why."""
    return ScoreRow(
        scorer=metric,
        criterion=metric,
        value=None,
        scale=SCALE,
        passed=False,
        gating=True,
        reason=f"could not be computed: {reason}",
        details=details,
    )


def invocation_count_mismatch(case: AdkCase, actual: list[Actual]) -> str | None:
    """Why the actual invocations cannot be paired with the expected ones, if they cannot."""
    expected = len(case.conversation or [])
    if len(actual) == expected:
        return None
    return f"the conversation has {len(actual)} turn(s) and the eval case {expected} invocation(s)"
