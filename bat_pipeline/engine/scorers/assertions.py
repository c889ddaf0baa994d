"""What the AgentV assertion scorers share (SPEC §9, §12): which graders of a test are a
scorer's, and the row each grader gives.

Every grader of an AgentV test is one non-gating row (criterion: the grader's name) whose
details carry what the pass rule (engine.agentv_rule) weighs: `assertion` (the type),
`weight`, `required`, `min_score`, and `error` when the grader itself failed. A scorer
for a new assertion type writes its rows with `assertion_row` / `grader_error_row`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from bat_pipeline.engine.contracts.agentv import IMPLICIT_KEY, AgentvCase, Assertion
from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.scorers.registry import ScoringInput

DEFAULT_THRESHOLD = 0.8


def graders(item: ScoringInput, types: Collection[str]) -> list[Assertion]:
    """The test's graders of these (normalised) types; none for a bat-cli task."""
    case = item.task.agentv
    return [a for a in case.assertions if a.type in types] if case is not None else []


def has_graders(types: Collection[str]) -> Callable[[ScoringInput], bool]:
    """`applies` for a scorer of these types."""
    return lambda item: bool(graders(item, types))


def pass_mark(assertion: Assertion, case: AgentvCase | None) -> float:
    """The score a grader passes at: its `min_score`, else a numeric `required`, else the
    test's threshold (as AgentV 4.42 does)."""
    if assertion.min_score is not None:
        return assertion.min_score
    if not isinstance(assertion.required, bool):
        return float(assertion.required)
    return case.threshold if case is not None and case.threshold is not None else DEFAULT_THRESHOLD


def assertion_row(
    scorer: str,
    assertion: Assertion,
    case: AgentvCase | None,
    score: float,
    reason: str,
    *,
    passed: bool | None = None,
    checks: list[dict[str, Any]] | None = None,
    **details: Any,
) -> ScoreRow:
    """The row of one graded assertion. `score` in [0, 1] (clamped); `negate` turns it into
    1 - score and flips `passed` and the checks. `passed` (a grader's own verdict) defaults
    to score ≥ `pass_mark`."""
    score = min(1.0, max(0.0, float(score)))
    checks = [dict(c) for c in checks or []]
    if assertion.negate:
        score = 1.0 - score
        passed = None if passed is None else not passed
        checks = [{**c, "pass": not c.get("pass")} for c in checks]
        reason = f"negated: {reason}"
    if passed is None:
        passed = score >= pass_mark(assertion, case)
    return ScoreRow.unit(
        scorer,
        assertion.name,
        score,
        passed=passed,
        reason=reason,
        details={**_weights(assertion), "checks": checks, **details},
    )


def grader_error_row(scorer: str, assertion: Assertion, message: str, **details: Any) -> ScoreRow:
    """The row of a grader that could not grade (crashed, timed out, printed nothing
    readable): no value, no verdict — not a quality failure."""
    return ScoreRow(
        scorer=scorer,
        criterion=assertion.name,
        reason=f"grader error: {message}",
        details={**_weights(assertion), "error": message, **details},
    )


def _weights(assertion: Assertion) -> dict[str, Any]:
    return {
        "assertion": assertion.type,
        "weight": assertion.weight,
        "required": assertion.required,
        "min_score": assertion.min_score,
        **({IMPLICIT_KEY: True} if assertion.options.get(IMPLICIT_KEY) else {}),
    }
