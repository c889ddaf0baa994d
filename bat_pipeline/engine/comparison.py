"""Two partitions of an agent compared on the tasks both ran (`bat-pipeline compare`, the
regression gate): pass rate and every scorer criterion as paired per-task differences
(engine.intervals). Pure functions over rows read from the warehouse."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bat_pipeline.engine.intervals import PAIRED_METHOD, PairedDifference, paired_difference

PROVENANCE_FIELDS = ("agent_commit", "agent_dirty", "dataset_hash", "config_hash", "judge_model", "pipeline_version")
LIKE_FOR_LIKE = ("dataset_hash", "config_hash", "judge_model")
"""What must match for the sides to be measured the same way; the agent's version and
bat_pipeline's may differ (comparing agent versions is what compare is for)."""


@dataclass(frozen=True)
class Side:
    """One side of a comparison: a partition of a run."""

    run_id: str
    model_key: str
    model_name: str
    agent_id: str
    provenance: Mapping[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{self.run_id}/{self.model_key}"


@dataclass(frozen=True)
class Comparison:
    base: Side
    candidate: Side
    pass_rate: PairedDifference
    scores: dict[str, dict[str, PairedDifference]]
    """Scorer → criterion → the paired difference of its mean values."""
    flipped: tuple[tuple[str, str], ...]
    """(task, `fixed` | `broken`): tasks every attempt of one side passed and none of the
    other's did."""
    differences: tuple[str, ...]
    """What differs between the sides' measurement (dataset, evaluation config, judge), as
    sentences: the comparison is then not like for like."""
    changes: tuple[str, ...] = ()
    """What differs in what was measured or with what (agent commit, uncommitted changes,
    bat_pipeline's version), as sentences."""

    @property
    def regressed(self) -> bool:
        """The candidate's pass rate is significantly lower."""
        return self.pass_rate.verdict == "worse"


def outcomes_by_task(rows: Iterable[Mapping[str, Any]]) -> dict[str, list[float]]:
    """task → 1.0 / 0.0 per attempt, from rows with `task_id` and `passed`."""
    found: dict[str, list[float]] = {}
    for row in rows:
        found.setdefault(str(row["task_id"]), []).append(1.0 if row["passed"] else 0.0)
    return found


def values_by_criterion(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, dict[str, list[float]]]]:
    """scorer → criterion → task → values, from rows with scorer, criterion, task_id, value."""
    found: dict[str, dict[str, dict[str, list[float]]]] = {}
    for row in rows:
        criteria = found.setdefault(str(row["scorer"]), {})
        criteria.setdefault(str(row["criterion"]), {}).setdefault(str(row["task_id"]), []).append(float(row["value"]))
    return found


def provenance_differences(base: Side, candidate: Side, fields: Sequence[str] = PROVENANCE_FIELDS) -> tuple[str, ...]:
    """A sentence per provenance field of `fields` recorded on both sides with different values."""
    notes = []
    for name in fields:
        b, c = base.provenance.get(name), candidate.provenance.get(name)
        if b is not None and c is not None and b != c:
            notes.append(f"{name} differs: {b} (base) vs {c} (candidate)")
    return tuple(notes)


def compare(
    base: Side,
    candidate: Side,
    *,
    base_outcomes: Sequence[Mapping[str, Any]],
    candidate_outcomes: Sequence[Mapping[str, Any]],
    base_scores: Sequence[Mapping[str, Any]] = (),
    candidate_scores: Sequence[Mapping[str, Any]] = (),
    confidence: float = 0.95,
) -> Comparison:
    """Pair the sides on the tasks both ran; criteria present on both sides only."""
    b, c = outcomes_by_task(base_outcomes), outcomes_by_task(candidate_outcomes)
    pass_rate = paired_difference(b, c, confidence, bounds=(0.0, 1.0))
    flipped = tuple(
        (d.task_id, "fixed" if d.difference > 0 else "broken") for d in pass_rate.per_task if abs(d.difference) == 1.0
    )
    bv, cv = values_by_criterion(base_scores), values_by_criterion(candidate_scores)
    scores = {
        scorer: {
            criterion: paired_difference(tasks, cv[scorer][criterion], confidence)
            for criterion, tasks in criteria.items()
            if criterion in cv.get(scorer, {})
        }
        for scorer, criteria in bv.items()
        if scorer in cv
    }
    return Comparison(
        base=base,
        candidate=candidate,
        pass_rate=pass_rate,
        scores={s: c for s, c in scores.items() if c},
        flipped=flipped,
        differences=provenance_differences(base, candidate, LIKE_FOR_LIKE),
        changes=provenance_differences(base, candidate, [f for f in PROVENANCE_FIELDS if f not in LIKE_FOR_LIKE]),
    )


def difference_block(d: PairedDifference) -> dict[str, Any]:
    """The JSON block of one paired difference."""
    return {
        "base": d.base,
        "candidate": d.candidate,
        "difference": d.difference,
        "ci_low": d.low,
        "ci_high": d.high,
        "significant": d.significant,
        "verdict": d.verdict,
        "tasks_compared": d.tasks,
    }


def as_json(result: Comparison) -> dict[str, Any]:
    """`compare --format json`."""
    return {
        "base": _side_json(result.base),
        "candidate": _side_json(result.candidate),
        "agent_id": result.base.agent_id,
        "tasks_compared": result.pass_rate.tasks,
        "confidence": result.pass_rate.confidence,
        "method": PAIRED_METHOD,
        "pass_rate": difference_block(result.pass_rate),
        "significant": result.pass_rate.significant,
        "verdict": result.pass_rate.verdict,
        "flipped": [{"task_id": t, "change": change} for t, change in result.flipped],
        "per_task": [
            {"task_id": d.task_id, "base": d.base, "candidate": d.candidate, "difference": d.difference}
            for d in result.pass_rate.per_task
        ],
        "scores": {
            scorer: {criterion: difference_block(d) for criterion, d in criteria.items()}
            for scorer, criteria in result.scores.items()
        },
        "not_like_for_like": list(result.differences),
        "changes": list(result.changes),
    }


def _side_json(side: Side) -> dict[str, Any]:
    return {"run_id": side.run_id, "partition": side.model_key, "model": side.model_name, **dict(side.provenance)}


def as_text(result: Comparison) -> str:
    """The table `compare` prints."""
    p = result.pass_rate
    lines = [
        f"base       {result.base.label} ({result.base.model_name})",
        f"candidate  {result.candidate.label} ({result.candidate.model_name})",
        f"tasks compared: {p.tasks}",
        *(f"warning: not like for like: {note}" for note in result.differences),
        *(f"changed: {note}" for note in result.changes),
        "",
        f"{'task':<32} {'base':>6} {'cand.':>6} {'diff':>7}",
    ]
    for task in p.per_task:
        mark = "  fixed" if task.difference == 1.0 else ("  broken" if task.difference == -1.0 else "")
        lines.append(f"{task.task_id[:32]:<32} {task.base:>6.2f} {task.candidate:>6.2f} {task.difference:>+7.2f}{mark}")
    lines += ["", _summary_line("pass rate", p)]
    for scorer, criteria in result.scores.items():
        for criterion, diff in criteria.items():
            name = scorer if criterion == scorer else f"{scorer}.{criterion}"
            lines.append(_summary_line(name, diff))
    lines += ["", f"verdict: {p.verdict} (pass rate, {p.confidence:.0%} interval, {PAIRED_METHOD})"]
    return "\n".join(lines) + "\n"


def _summary_line(name: str, d: PairedDifference) -> str:
    if d.difference is None or d.base is None or d.candidate is None:
        return f"{name}: no task in common"
    interval = "no interval (one task)" if d.low is None or d.high is None else f"[{d.low:+.3f}, {d.high:+.3f}]"
    return (
        f"{name}: {d.base:.3f} -> {d.candidate:.3f}, difference {d.difference:+.3f} {interval}"
        f"{' significant' if d.significant else ''}"
    )
