"""`time`: the episode's duration against `metrics.time_threshold_s` — 1 at or under it,
decaying exponentially above (engine.measures.performance.time_score). One informative row
per episode whose attempt completed: raw = seconds, passed = within the threshold. Applies
when the verdicts step's options carry the metrics settings (`metrics`) with a threshold."""

from __future__ import annotations

from bat_pipeline.engine.contracts import MetricsSettings
from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.measures.performance import time_score
from bat_pipeline.engine.scorers.registry import ScoringInput, check


def _settings(item: ScoringInput) -> MetricsSettings | None:
    found = getattr(item.options, "metrics", None)
    return found if isinstance(found, MetricsSettings) else None


def _applies(item: ScoringInput) -> bool:
    settings = _settings(item)
    return settings is not None and settings.time_threshold_s is not None and not item.episode.eval_error


@check("time", applies=_applies, order=710)
def timing(item: ScoringInput) -> list[ScoreRow]:
    settings = _settings(item) or MetricsSettings()
    threshold = settings.time_threshold_s or 0.0  # set: _applies
    seconds = item.episode.trace.wall_ms / 1000
    value = time_score(seconds, threshold, settings.time_penalty)
    return [
        ScoreRow(
            scorer="time",
            criterion="time",
            value=value,
            raw=round(seconds, 3),
            scale="seconds",
            passed=seconds <= threshold,
            reason=f"{seconds:.2f}s against a threshold of {threshold:g}s",
        )
    ]
