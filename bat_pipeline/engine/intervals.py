"""Confidence intervals for a run's figures and for the difference between two runs.

Attempts of one task are not independent (a task the model cannot do fails every attempt),
so an interval over episodes treats each task as a cluster (E. Miller, "Adding Error Bars
to Evals", 2024): the cluster-robust standard error of the mean, with Student's t on
(tasks − 1) degrees of freedom, since a dataset has tens of tasks, not thousands. Two
partitions on the same tasks are compared by the per-task differences of their means
(paired): the task-to-task variation that both sides share cancels out.

When every value is the same, the standard error is 0. For a rate at its bound (every
attempt passed, or none did) that would claim certainty a dozen tasks cannot give: the
interval is then Wilson's score interval with one observation per task, the widest
reading of what was seen. Pure functions; scipy gives the t quantiles.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scipy.stats import norm, t as student_t

METHOD = "cluster-robust standard error by task, Student's t on tasks - 1 degrees of freedom"
PAIRED_METHOD = "paired per-task differences, Student's t on tasks - 1 degrees of freedom"


def t_quantile(confidence: float, df: int) -> float:
    """The two-sided critical value of Student's t for `confidence` (0 < c < 1)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence}")
    return float(student_t.ppf(0.5 + confidence / 2, df))


def wilson(share: float, n: int, confidence: float) -> tuple[float, float]:
    """Wilson's score interval of a proportion `share` seen over `n` observations."""
    z = float(norm.ppf(0.5 + confidence / 2))
    denominator = 1 + z * z / n
    centre = (share + z * z / (2 * n)) / denominator
    half = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / denominator
    low, high = centre - half, centre + half
    # At a share of 0 or 1 the bound is exactly 0 or 1; floating point leaves 1e-17 off it.
    return (0.0 if low < 1e-12 else low), (1.0 if high > 1 - 1e-12 else high)


def clustered_interval(
    clusters: Sequence[Sequence[float]], confidence: float, *, bounds: tuple[float, float] = (0.0, 1.0)
) -> tuple[float, float] | None:
    """The interval of the mean of every value, the values grouped by task.

    Variance of the mean: C/(C−1) · Σ_c (Σ_{i∈c} (x_i − x̄))² / N² over C clusters and N
    values (the small-sample form of the cluster-robust estimator). None with fewer than two
    clusters (no spread to estimate). Clamped to `bounds`.
    """
    groups = [list(c) for c in clusters if len(c)]
    n = sum(len(g) for g in groups)
    if len(groups) < 2:
        return None
    mean = sum(sum(g) for g in groups) / n
    residuals = [sum(x - mean for x in g) for g in groups]
    c = len(groups)
    se = math.sqrt(c / (c - 1) * sum(r * r for r in residuals)) / n
    if se < 1e-12:
        low, high = bounds
        if all(x in (low, high) for g in groups for x in g):
            return _scaled_wilson(mean, c, confidence, bounds)
        return mean, mean
    half = t_quantile(confidence, c - 1) * se
    return max(bounds[0], mean - half), min(bounds[1], mean + half)


def _scaled_wilson(mean: float, n: int, confidence: float, bounds: tuple[float, float]) -> tuple[float, float]:
    low, high = bounds
    span = high - low
    lo, hi = wilson((mean - low) / span, n, confidence)
    return low + lo * span, low + hi * span


@dataclass(frozen=True)
class TaskDifference:
    task_id: str
    base: float
    """The task's mean over its attempts on the base side."""
    candidate: float
    difference: float
    """candidate − base."""


@dataclass(frozen=True)
class PairedDifference:
    """Two sides compared on the tasks both ran."""

    tasks: int
    base: float | None
    """Mean over the compared tasks of each task's mean (None without a task)."""
    candidate: float | None
    difference: float | None
    """candidate − base."""
    low: float | None
    high: float | None
    """The interval of the difference; None with fewer than two tasks."""
    confidence: float
    per_task: tuple[TaskDifference, ...]

    @property
    def significant(self) -> bool:
        """The interval excludes 0."""
        return self.low is not None and self.high is not None and (self.low > 0 or self.high < 0)

    @property
    def verdict(self) -> str:
        """`better`, `worse` (the candidate, significantly) or `no detectable difference`."""
        if not self.significant or self.difference is None:
            return "no detectable difference"
        return "better" if self.difference > 0 else "worse"


def paired_difference(
    base: Mapping[str, Sequence[float]],
    candidate: Mapping[str, Sequence[float]],
    confidence: float,
    *,
    bounds: tuple[float, float] | None = None,
) -> PairedDifference:
    """candidate − base over the tasks with values on both sides, in base's task order.

    Each task counts once (its mean over attempts); the interval is the mean difference ±
    t · sd / √n. Every difference equal gives a zero-width interval at that difference,
    except at the edge of what a difference can be when the values' `bounds` are known
    (every task flipped, say from pass to fail): then, as for a rate at its bound, Wilson's
    interval of the share of tasks that flipped, n tasks, on the side of 0 the flips lie.
    With `bounds`, the interval is also clamped to the range of differences.
    """
    per_task = tuple(
        TaskDifference(task, b, c, c - b)
        for task in base
        if task in candidate and base[task] and candidate[task]
        for b, c in [(_mean(base[task]), _mean(candidate[task]))]
    )
    n = len(per_task)
    if not n:
        return PairedDifference(0, None, None, None, None, None, confidence, ())
    diffs = [d.difference for d in per_task]
    mean_diff = _mean(diffs)
    low = high = None
    if n >= 2:
        sd = math.sqrt(sum((d - mean_diff) ** 2 for d in diffs) / (n - 1))
        half = t_quantile(confidence, n - 1) * sd / math.sqrt(n)
        low, high = mean_diff - half, mean_diff + half
        if bounds is not None:
            span = bounds[1] - bounds[0]
            low, high = max(-span, low), min(span, high)
            if sd < 1e-12 and abs(abs(mean_diff) - span) < 1e-12:
                edge = (0.0, span) if mean_diff > 0 else (-span, 0.0)
                low, high = _scaled_wilson(mean_diff, n, confidence, edge)
    return PairedDifference(
        tasks=n,
        base=_mean([d.base for d in per_task]),
        candidate=_mean([d.candidate for d in per_task]),
        difference=mean_diff,
        low=low,
        high=high,
        confidence=confidence,
        per_task=per_task,
    )


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)
