"""A partition's metrics without an LLM, from its episodes and their rows: classification
(from the `label` rows), performance (episode times, the conversations phase), for
metrics.json (`classification`, `performance`) and the report."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bat_pipeline.engine.contracts import Episode, MetricsSettings
from bat_pipeline.engine.measures.classification import classify
from bat_pipeline.engine.measures.performance import performance


def label_pairs(episodes: Sequence[Episode]) -> list[tuple[str, str]]:
    """(expected, predicted) of every `label` row (sample 0)."""
    return [
        (str(r.details["expected"]), str(r.details["predicted"]))
        for e in episodes
        for r in e.scores
        if r.scorer == "label" and r.sample == 0 and "expected" in r.details
    ]


def partition_measures(
    episodes: Sequence[Episode], settings: MetricsSettings, timings: dict[str, float]
) -> dict[str, Any]:
    """`classification` (null when no task carries a label) and `performance`."""
    pairs = label_pairs(episodes)
    timed = [e.trace.wall_ms / 1000 for e in episodes if not e.eval_error]
    perf = performance(
        timed,
        threshold_s=settings.time_threshold_s,
        penalty=settings.time_penalty,
        elapsed_s=timings.get("conversations") or None,
        target_per_s=settings.throughput_target,
    )
    return {
        "classification": classify(pairs).model_dump(mode="json") if pairs else None,
        "performance": perf.model_dump(mode="json"),
    }
