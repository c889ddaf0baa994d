"""Scoring one record of criterion values with a rubric (SPEC §11): clamp each value to its
criterion's range, normalise to 0..1, weight, and divide by the weight of the criteria
scored → `weighted_score`; `total_score` is the unweighted mean of the normalised values.
Criteria without a value are listed in `missing_criteria`, never an error; they count
neither in the scores nor against them. Hard gates compare the given value (the median,
when a judge ran N times) with the gate's minimum on the criterion's own scale; a missing
gated criterion fails its gate.

agentic-v2-eval's own rubrics (Rubric.agentic) are scored as agentic-v2-eval 0.3.0 scores
them (its `scorer.py`): a missing criterion counts 0 against the weight of all criteria
(weighted) and against their number (total), and `criterion_scores` holds the clamped
values, not the normalised ones; a gate's minimum written on the levels' scale (`minimum:
4` of 0–5) is read on it (agentic-v2-eval itself ignores gates)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from bat_pipeline.engine.yaml_rubrics.model import Rubric


class GateFailure(BaseModel):
    criterion: str
    minimum: float
    value: float | None
    """The value compared (null: the criterion had none)."""


class ScoringResult(BaseModel):
    """The outcome of one record against one rubric."""

    rubric: str
    weighted_score: float
    total_score: float
    criterion_scores: dict[str, float] = Field(default_factory=dict)
    """Criterion → its normalised score (0..1), for the criteria given (agentic-v2-eval's
    rubrics: the clamped value on the criterion's range, as agentic-v2-eval writes it)."""
    missing_criteria: list[str] = Field(default_factory=list)
    failed_gates: list[GateFailure] = Field(default_factory=list)
    band: str | None = None
    """`excellent`, `pass`, `warning` or `fail` by the thresholds; null when none is set."""
    passed: bool | None = None
    """No gate failed and (with a `pass` threshold) the weighted score reaches it; null
    when the rubric sets neither gates nor a pass threshold."""

    def record(self, index: int) -> dict[str, Any]:
        """agentic-v2-eval's scored record: index, weighted_score, total_score,
        criterion_scores, missing_criteria."""
        return {
            "index": index,
            "weighted_score": self.weighted_score,
            "total_score": self.total_score,
            "criterion_scores": self.criterion_scores,
            "missing_criteria": self.missing_criteria,
        }


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def score(rubric: Rubric, values: Mapping[str, Any], *, missing_as_zero: bool | None = None) -> ScoringResult:
    """Score `values` (criterion name → number; non-numbers count as missing) with `rubric`.
    `missing_as_zero`: whether a missing criterion counts 0 against the weight of all
    (default: for agentic-v2-eval's rubrics); False where a criterion is missing because the
    judge failed to answer (a judge error, not a zero)."""
    zero = rubric.agentic if missing_as_zero is None else missing_as_zero
    scores: dict[str, float] = {}
    units: list[float] = []
    missing: list[str] = []
    weighted = weight_sum = 0.0
    for criterion in rubric.criteria:
        value = _number(values.get(criterion.name))
        if value is None:
            missing.append(criterion.name)
            continue
        unit = criterion.normalise(value)
        scores[criterion.name] = min(max(value, criterion.low), criterion.high) if rubric.agentic else unit
        units.append(unit)
        weighted += unit * criterion.weight
        weight_sum += criterion.weight
    if zero:
        weight_sum = sum(c.weight for c in rubric.criteria)
        counted = len(rubric.criteria)
    else:
        counted = len(units)
    weighted_score = weighted / weight_sum if weight_sum else 0.0
    failed = _failed_gates(rubric, values)
    return ScoringResult(
        rubric=rubric.name,
        weighted_score=weighted_score,
        total_score=sum(units) / counted if counted else 0.0,
        criterion_scores=scores,
        missing_criteria=missing,
        failed_gates=failed,
        band=_band(rubric, weighted_score, bool(failed)),
        passed=_passed(rubric, weighted_score, failed),
    )


def _failed_gates(rubric: Rubric, values: Mapping[str, Any]) -> list[GateFailure]:
    """The hard gates whose criterion has no number or one below the gate's minimum."""
    failed = []
    for gate in rubric.gates():
        value = _number(values.get(gate.criterion))
        minimum = rubric.criterion(gate.criterion).on_scale(gate.minimum) if rubric.agentic else gate.minimum
        if value is None or value < minimum:
            failed.append(GateFailure(criterion=gate.criterion, minimum=minimum, value=value))
    return failed


def _passed(rubric: Rubric, weighted: float, failed: list[GateFailure]) -> bool | None:
    """ScoringResult.passed: null when the rubric sets neither gates nor a pass threshold."""
    pass_at = rubric.unit_threshold(rubric.thresholds.pass_)
    if pass_at is None and not rubric.gates():
        return None
    return not failed and (pass_at is None or weighted >= pass_at)


def _band(rubric: Rubric, weighted: float, gate_failed: bool) -> str | None:
    thresholds = rubric.thresholds
    excellent = rubric.unit_threshold(thresholds.excellent)
    pass_at = rubric.unit_threshold(thresholds.pass_)
    warning = rubric.unit_threshold(thresholds.warning)
    if excellent is None and pass_at is None and warning is None:
        return None
    if gate_failed:
        return "fail"
    if excellent is not None and weighted >= excellent:
        return "excellent"
    if pass_at is not None and weighted >= pass_at:
        return "pass"
    if warning is not None and weighted >= warning:
        return "warning"
    return "fail"


def medians(samples: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Criterion → the median of its numeric values over the samples (criteria with no
    numeric value in any sample are left out)."""
    found: dict[str, list[float]] = {}
    for sample in samples:
        for name, value in sample.items():
            number = _number(value)
            if number is not None:
                found.setdefault(name, []).append(number)
    return {name: statistics.median(values) for name, values in found.items()}


def score_samples(rubric: Rubric, samples: Sequence[Mapping[str, Any]]) -> ScoringResult:
    """Score N runs of a judge: each criterion's median over the runs, then `score` — so
    hard gates apply to the medians, never to a single run."""
    return score(rubric, medians(samples))
