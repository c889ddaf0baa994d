"""Aggregate the episodes of one run and model into summary.json and metrics.json
(SPEC §8). Pure functions: writing the files is the caller's job."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from bat_pipeline.engine.contracts.episode import Episode
from bat_pipeline.engine.contracts.metrics import (
    EpisodeMetrics,
    EpisodeQualitative,
    EpisodeTime,
    EpisodeTokens,
    EpisodeVerdict,
    FlakyTask,
    LatencyPercentiles,
    MetricsFile,
    MetricsSummary,
    ScoreStats,
    SummaryFile,
    TaskAttempts,
    TaskPassAtK,
    TimeSummary,
    TokenSummary,
)
from bat_pipeline.engine.contracts.scores import QUALITATIVE_FIELDS
from bat_pipeline.engine.contracts.tasks import Task
from bat_pipeline.engine.intervals import METHOD, clustered_interval
from bat_pipeline.engine.score_stats import scorer_stats


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k attempts drawn without replacement from n
    attempts (c of which passed) passes: 1 − C(n−c, k) / C(n, k), the unbiased
    estimator. k above n is taken as n (a run cannot show more than n attempts)."""
    n, c, k = _checked(n, c, k)
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Probability that all k attempts drawn without replacement pass:
    C(c, k) / C(n, k). k above n is taken as n."""
    n, c, k = _checked(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def percentile(values: Sequence[float], p: float) -> float | None:
    """The p-th percentile (0–100) with linear interpolation between closest ranks:
    rank r = p/100 × (n − 1) over the sorted values, result interpolated between the
    values at floor(r) and ceil(r). None for no values."""
    if not values:
        return None
    if not 0 <= p <= 100:
        raise ValueError(f"percentile must be within 0..100, got {p}")
    ordered = sorted(values)
    rank = p / 100 * (len(ordered) - 1)
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def is_error_episode(episode: Episode) -> bool:
    """The attempt raised (aux `eval_error`) or the agent ended in status `error`."""
    return bool(episode.eval_error) or episode.final_status == "error"


def summary_timestamp(when: datetime) -> str:
    """`timestamp_utc` of summary.json: `YYYYMMDD_HHMMSS` in UTC (a naive time is taken as UTC)."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).strftime("%Y%m%d_%H%M%S")


def in_dataset_order(episodes: Iterable[Episode], task_ids: Sequence[str]) -> list[Episode]:
    """The episodes by task in dataset order, then by attempt (the order bat-cli runs and
    writes them); episodes of a task not in `task_ids` come last, by task id."""
    position = {task_id: index for index, task_id in enumerate(task_ids)}
    return sorted(episodes, key=lambda e: (position.get(e.task_id, len(position)), e.task_id, e.attempt_index))


@dataclass
class Measured:
    """One partition measured: its episodes in dataset order, metrics.json, summary.json."""

    episodes: list[Episode]
    metrics: MetricsFile
    summary: SummaryFile

    def files(self) -> dict[str, MetricsFile | SummaryFile]:
        return {"metrics.json": self.metrics, "summary.json": self.summary}


def measure(
    episodes: Iterable[Episode],
    tasks: Sequence[Task],
    *,
    k: int,
    run_name: str,
    model_name: str,
    started: datetime,
    timings: Mapping[str, float] | None = None,
    confidence: float = 0.95,
) -> Measured:
    """metrics.json and summary.json of one partition, over its episodes in dataset order
    (in_dataset_order); summary.json is stamped with `started`, as bat-cli stamps the start
    of the model's evaluation; metrics.json carries `timings` (seconds per phase so far)."""
    ordered = in_dataset_order(episodes, [t.id for t in tasks])
    metrics = build_metrics(ordered, k=k, confidence=confidence).model_copy(update={"timings": dict(timings or {})})
    return Measured(
        episodes=ordered,
        metrics=metrics,
        summary=build_summary(
            ordered, run_name=run_name, k=k, model_name=model_name, timestamp_utc=summary_timestamp(started)
        ),
    )


def build_summary(
    episodes: Sequence[Episode], *, run_name: str, k: int, model_name: str, timestamp_utc: str
) -> SummaryFile:
    """summary.json of one run and model. `model_name` may be `provider:model`: the file
    names the model alone (split at the first colon, as bat-cli does). An episode without
    a verdict counts as failed; `passed` counts the passed episodes."""
    attempts = []
    for task_id, group in _by_task(episodes).items():
        passed = sum(1 for e in group if _passed(e))
        attempts.append(
            TaskAttempts(
                task_id=task_id,
                attempts=len(group),
                passed=passed,
                failed=len(group) - passed,
                success_percentage=100.0 * passed / len(group),
            )
        )
    return SummaryFile(
        run_name=run_name,
        timestamp_utc=timestamp_utc,
        k=k,
        model_name=model_name.split(":", 1)[-1],
        attempts=attempts,
        qualitative_scores={f: sum(v) / len(v) for f, v in _scores(episodes).items() if v},
        passed=sum(1 for e in episodes if _passed(e)),
    )


def build_metrics(episodes: Sequence[Episode], *, k: int, confidence: float = 0.95) -> MetricsFile:
    """metrics.json of one run and model; `k` is the configured attempts per task,
    used for pass@k and pass^k (clamped per task to the attempts it has). Rows follow
    the order of `episodes` (see in_dataset_order). Every mean carries its interval at
    `confidence`, clustered by task (engine.intervals)."""
    per_episode = [_episode_metrics(e) for e in episodes]
    per_task = []
    by_task = _by_task(episodes)
    for task_id, group in by_task.items():
        n, c = len(group), sum(1 for e in group if _passed(e))
        per_task.append(
            TaskPassAtK(
                task_id=task_id, attempts=n, passed=c, pass_at_k=pass_at_k(n, c, k), pass_hat_k=pass_hat_k(n, c, k)
            )
        )

    walls = [e.trace.wall_ms for e in episodes]
    totals = [row.tokens.total_tokens for row in per_episode]
    prompt = sum(row.tokens.prompt_tokens for row in per_episode)
    cached = sum(e.trace.trajectory.totals.tokens_cached for e in episodes)
    passed = sum(1 for row in per_episode if row.success)
    runs = len(per_episode)

    summary = MetricsSummary(
        episodes=runs,
        k_attempts=k,
        total_runs=runs,
        passed=passed,
        failed=runs - passed,
        pass_rate=passed / runs if runs else None,
        time=TimeSummary(
            total_wall_ms=sum(walls),
            avg_wall_ms=_mean(walls),
            min_wall_ms=min(walls, default=None),
            max_wall_ms=max(walls, default=None),
        ),
        tokens=TokenSummary(
            prompt_tokens_total=prompt,
            completion_tokens_total=sum(row.tokens.completion_tokens for row in per_episode),
            total_tokens_total=sum(totals),
            cached_prompt_pct=_pct(cached, prompt),
            avg_total_tokens=_mean(totals),
            min_total_tokens=min(totals, default=None),
            max_total_tokens=max(totals, default=None),
        ),
        qualitative={
            field: ScoreStats(avg=sum(values) / len(values), min=min(values), max=max(values), count=len(values))
            for field, values in _scores(episodes).items()
            if values
        },
        pass_at_k=_mean([t.pass_at_k for t in per_task]),
        pass_hat_k=_mean([t.pass_hat_k for t in per_task]),
        error_episodes=sum(1 for e in episodes if is_error_episode(e)),
        latency_ms=LatencyPercentiles(**{f"p{p}": percentile(walls, p) for p in (50, 90, 95, 99)}),
        scorers=scorer_stats(episodes, confidence=confidence),
        confidence=confidence,
        interval_method=METHOD,
        pass_rate_ci=clustered_interval(
            [[1.0 if _passed(e) else 0.0 for e in group] for group in by_task.values()], confidence
        ),
        pass_at_k_ci=clustered_interval([[t.pass_at_k] for t in per_task], confidence),
        pass_hat_k_ci=clustered_interval([[t.pass_hat_k] for t in per_task], confidence),
        flaky_tasks=[
            FlakyTask(task_id=t.task_id, attempts=t.attempts, passed=t.passed, pass_share=t.passed / t.attempts)
            for t in per_task
            if 0 < t.passed < t.attempts
        ],
    )
    return MetricsFile(per_episode=per_episode, summary=summary, per_task=per_task)


def _episode_metrics(episode: Episode) -> EpisodeMetrics:
    totals = episode.trace.trajectory.totals
    scores = episode.qualitative_scores
    verdict = episode.verdict
    return EpisodeMetrics(
        task_id=episode.task_id,
        expected_outcome=episode.expected_outcome,
        status=episode.final_status,
        success=_passed(episode),
        time=EpisodeTime(wall_ms=episode.trace.wall_ms),
        tokens=EpisodeTokens(
            prompt_tokens=totals.tokens_in,
            completion_tokens=totals.tokens_out,
            total_tokens=totals.tokens_in + totals.tokens_out,
            cached_prompt_pct=_pct(totals.tokens_cached, totals.tokens_in),
        ),
        verdict=EpisodeVerdict(passed=verdict.passed, reason=verdict.reason) if verdict else None,
        qualitative=EpisodeQualitative(
            **{f: getattr(scores, f) for f in QUALITATIVE_FIELDS},
            judge_reasoning=dict(scores.judge_reasoning),
        )
        if scores
        else EpisodeQualitative(),
        scores=list(episode.scores),
    )


def _by_task(episodes: Sequence[Episode]) -> dict[str, list[Episode]]:
    groups: dict[str, list[Episode]] = {}
    for episode in episodes:
        groups.setdefault(episode.task_id, []).append(episode)
    return groups


def _scores(episodes: Sequence[Episode]) -> dict[str, list[float]]:
    """Score field → the non-null scores, every field present."""
    found: dict[str, list[float]] = {f: [] for f in QUALITATIVE_FIELDS}
    for episode in episodes:
        if episode.qualitative_scores is None:
            continue
        for field in QUALITATIVE_FIELDS:
            value = getattr(episode.qualitative_scores, field)
            if value is not None:
                found[field].append(value)
    return found


def _passed(episode: Episode) -> bool:
    return episode.verdict is not None and episode.verdict.passed


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _pct(part: int, whole: int) -> float:
    return round(100.0 * part / whole, 1) if whole else 0.0


def _checked(n: int, c: int, k: int) -> tuple[int, int, int]:
    if n < 1 or k < 1 or not 0 <= c <= n:
        raise ValueError(f"need n >= 1, 0 <= c <= n and k >= 1; got n={n}, c={c}, k={k}")
    return n, c, min(k, n)
