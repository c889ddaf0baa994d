"""`tool_trajectory_avg_score`: ADK's trajectory metric (google/adk-python
src/google/adk/evaluation/trajectory_evaluator.py), and Vertex AI's `trajectory_precision`
and `trajectory_recall` beside it.

Per invocation 1 when the agent's tool calls match the expected ones by the criterion's
`match_type`, else 0; the case's value is their mean, passing at or above the threshold.
EXACT: the same calls in the same order, nothing more; IN_ORDER: the expected calls appear
in order, others between them allowed; ANY_ORDER: each expected call is matched by a
distinct actual one, in any order. A call matches by name and equal arguments
(`ignore_args`: by name). No expected calls: IN_ORDER and ANY_ORDER match, EXACT only no
calls.

Precision: the share of the agent's calls that appear among the expected calls of their
own invocation; recall: the share of the expected calls that appear among the agent's
calls of their invocation (Vertex AI's definitions, counted over all the invocations of the
case). Not gating; n/a (null) when there is nothing to divide by.
"""

from __future__ import annotations

from collections.abc import Sequence

from bat_pipeline.engine.contracts.adk import TRAJECTORY, AdkCriterion, AdkToolCall, MatchType
from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.scorers.adk_support import (
    SCALE,
    ToolCall,
    actual_invocations,
    case_of,
    configured,
    error_row,
    invocation_count_mismatch,
    threshold_row,
)
from bat_pipeline.engine.scorers.registry import ScoringInput, check

PRECISION = "trajectory_precision"
RECALL = "trajectory_recall"


def _same(actual: ToolCall, expected: AdkToolCall, ignore_args: bool) -> bool:
    return actual.name == expected.name and (ignore_args or actual.args == expected.args)


def matches(
    actual: Sequence[ToolCall], expected: Sequence[AdkToolCall], match_type: MatchType, ignore_args: bool
) -> bool:
    """Whether one invocation's calls match the expected ones (ADK's three match types)."""
    if match_type == "EXACT":
        return len(actual) == len(expected) and all(
            _same(a, e, ignore_args) for a, e in zip(actual, expected, strict=True)
        )
    if not expected:
        return True
    if match_type == "IN_ORDER":
        position = 0
        for call in actual:
            if _same(call, expected[position], ignore_args):
                position += 1
                if position == len(expected):
                    return True
        return False
    left = list(actual)
    for want in expected:
        index = next((i for i, call in enumerate(left) if _same(call, want, ignore_args)), None)
        if index is None:
            return False
        left.pop(index)
    return True


def precision_recall(
    actual: Sequence[Sequence[ToolCall]], expected: Sequence[Sequence[AdkToolCall]], ignore_args: bool
) -> tuple[float | None, float | None]:
    """(precision, recall) over the invocations, each invocation's calls against its own
    expected ones."""
    pairs = list(zip(actual, expected, strict=True))
    called = sum(len(a) for a, _ in pairs)
    wanted = sum(len(e) for _, e in pairs)
    hits = sum(any(_same(c, w, ignore_args) for w in e) for a, e in pairs for c in a)
    found = sum(any(_same(c, w, ignore_args) for c in a) for a, e in pairs for w in e)
    return (hits / called if called else None), (found / wanted if wanted else None)


@check(TRAJECTORY, applies=configured(TRAJECTORY), order=80, criteria=(TRAJECTORY, PRECISION, RECALL))
def tool_trajectory_avg_score(item: ScoringInput) -> list[ScoreRow]:
    case = case_of(item)
    criterion = case.criterion(TRAJECTORY)
    assert isinstance(criterion, AdkCriterion)  # configured
    actual = actual_invocations(item)
    mismatch = invocation_count_mismatch(case, actual)
    if mismatch:
        return [error_row(TRAJECTORY, mismatch)]
    if any(a.calls is None for a in actual):
        return [error_row(TRAJECTORY, "no trajectory: no spans were found for this conversation's tool calls")]
    expected = [inv.tool_uses for inv in case.conversation or []]
    scores: list[float | None] = [
        1.0 if matches(a.calls or [], want, criterion.match_type, criterion.ignore_args) else 0.0
        for a, want in zip(actual, expected, strict=True)
    ]
    value = sum(s or 0.0 for s in scores) / len(scores)
    precision, recall = precision_recall([a.calls or [] for a in actual], expected, criterion.ignore_args)
    failed = [i for i, s in enumerate(scores) if s == 0.0]
    reason = (
        f"{criterion.match_type} match in every invocation"
        if not failed
        else f"no {criterion.match_type} match in invocation(s) {', '.join(map(str, failed))}"
    )
    calls = {
        "actual": [[c.name for c in a.calls or []] for a in actual],
        "expected": [[c.name for c in e] for e in expected],
    }
    rows = [threshold_row(criterion, value, scores, reason, match_type=criterion.match_type, calls=calls)]
    for name, share in ((PRECISION, precision), (RECALL, recall)):
        rows.append(
            ScoreRow(
                scorer=TRAJECTORY,
                criterion=name,
                value=share,
                raw=share,
                scale=SCALE,
                reason="n/a: no calls to divide by" if share is None else f"{share:.4g} over the invocations",
            )
        )
    return rows
