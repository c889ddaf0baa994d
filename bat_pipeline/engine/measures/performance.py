"""Performance scores: an episode's time against a threshold (1 at or under it, decaying
exponentially above: exp(−penalty × (t − threshold) / threshold)), latency percentiles and
throughput (episodes per second of the conversations phase, scored against a target as
min(1, rate / target))."""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import BaseModel


def time_score(seconds: float, threshold_s: float, penalty: float = 1.0) -> float:
    if seconds <= threshold_s:
        return 1.0
    return math.exp(-penalty * (seconds - threshold_s) / threshold_s)


def percentile(values: Sequence[float], p: float) -> float | None:
    """Linear interpolation between closest ranks (rank = p/100 × (n − 1))."""
    if not values:
        return None
    ordered = sorted(values)
    rank = p / 100 * (len(ordered) - 1)
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


class Performance(BaseModel):
    episodes: int
    p50_s: float | None
    p90_s: float | None
    p95_s: float | None
    p99_s: float | None
    mean_time_score: float | None
    """Mean over the episodes of their time score; null without a threshold."""
    time_threshold_s: float | None
    throughput_per_s: float | None
    """Episodes per second over the conversations phase; null when it was not timed."""
    throughput_score: float | None
    """min(1, throughput / target); null without a target or a throughput."""


def performance(
    seconds: Sequence[float],
    *,
    threshold_s: float | None,
    penalty: float,
    elapsed_s: float | None,
    target_per_s: float | None,
) -> Performance:
    scores = [time_score(s, threshold_s, penalty) for s in seconds] if threshold_s else []
    rate = len(seconds) / elapsed_s if elapsed_s else None
    return Performance(
        episodes=len(seconds),
        p50_s=percentile(seconds, 50),
        p90_s=percentile(seconds, 90),
        p95_s=percentile(seconds, 95),
        p99_s=percentile(seconds, 99),
        mean_time_score=sum(scores) / len(scores) if scores else None,
        time_threshold_s=threshold_s,
        throughput_per_s=rate,
        throughput_score=min(1.0, rate / target_per_s) if rate is not None and target_per_s else None,
    )
