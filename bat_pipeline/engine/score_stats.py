"""Score rows summed up per scorer and criterion: metrics.json's `summary.scorers` and the
table the UI shows. Pure functions over episodes' rows."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from bat_pipeline.engine.contracts.episode import Episode
from bat_pipeline.engine.contracts.metrics import CriterionStats
from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.intervals import clustered_interval


def scorer_stats(episodes: Iterable[Episode], *, confidence: float = 0.95) -> dict[str, dict[str, CriterionStats]]:
    """Scorer → criterion → statistics over the rows of every episode (deterministic and
    LLM rows alike, every sample), in the order scorers and criteria first appear; each
    mean with its interval clustered by task (engine.intervals), and the judge's spread
    where a criterion was asked more than once per episode."""
    grouped: dict[str, dict[str, list[tuple[int, str, ScoreRow]]]] = {}
    for index, episode in enumerate(episodes):
        for row in episode.scores:
            grouped.setdefault(row.scorer, {}).setdefault(row.criterion, []).append((index, episode.task_id, row))
    return {
        scorer: {criterion: _stats(found, confidence) for criterion, found in criteria.items()}
        for scorer, criteria in grouped.items()
    }


def _stats(found: list[tuple[int, str, ScoreRow]], confidence: float) -> CriterionStats:
    by_task: dict[str, list[float]] = {}
    samples: dict[int, dict[int, float]] = {}
    for index, task_id, row in found:
        if row.value is not None:
            by_task.setdefault(task_id, []).append(row.value)
            samples.setdefault(index, {})[row.sample] = row.value
    spreads = [max(v.values()) - min(v.values()) for v in samples.values() if len(v) > 1]
    return criterion_stats([row for _, _, row in found]).model_copy(
        update={
            "ci": clustered_interval(list(by_task.values()), confidence),
            "judge_spread": sum(spreads) / len(spreads) if spreads else None,
        }
    )


def criterion_stats(rows: Iterable[ScoreRow]) -> CriterionStats:
    """avg/min/max over the non-null values (null when there is none); passed and failed
    count rows whose `passed` is true or false."""
    rows = list(rows)
    values = [r.value for r in rows if r.value is not None]
    return CriterionStats(
        avg=sum(values) / len(values) if values else None,
        min=min(values, default=None),
        max=max(values, default=None),
        count=len(values),
        passed=sum(1 for r in rows if r.passed is True),
        failed=sum(1 for r in rows if r.passed is False),
    )


SCORE_COLUMNS = (
    ("scorer", "string"),
    ("criterion", "string"),
    ("mean", "float"),
    ("ci_low", "float"),
    ("ci_high", "float"),
    ("passed", "int"),
    ("failed", "int"),
    ("count", "int"),
    ("judge_spread", "float"),
)
"""The columns of `scores_table`, with their types."""


def scores_table(scorers: dict[str, dict[str, CriterionStats]]) -> list[dict[str, Any]]:
    """One record per scorer and criterion: scorer, criterion, mean and its interval
    (ci_low, ci_high; 4 decimals, null without values or with fewer than two tasks),
    passed, failed, count, and judge_spread (null unless asked several times)."""
    return [
        {
            "scorer": scorer,
            "criterion": criterion,
            "mean": _rounded(stats.avg),
            "ci_low": _rounded(stats.ci[0] if stats.ci else None),
            "ci_high": _rounded(stats.ci[1] if stats.ci else None),
            "passed": stats.passed,
            "failed": stats.failed,
            "count": stats.count,
            "judge_spread": _rounded(stats.judge_spread),
        }
        for scorer, criteria in scorers.items()
        for criterion, stats in criteria.items()
    ]


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
