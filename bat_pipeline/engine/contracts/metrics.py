"""`summary.json` and `metrics.json` of one run and model (SPEC §8).

Field names are the reference evaluator's; `per_task`, `pass_at_k`, `pass_hat_k`,
`error_episodes` and `latency_ms` are bat_pipeline's additions. Values are not rounded:
presentation (CLI, charts) rounds. Aggregates over nothing (no episodes, no scores) are
null rather than a made-up 0.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class TaskAttempts(BaseModel):
    """How the attempts of one task went (summary.json)."""

    task_id: str
    attempts: int
    passed: int
    failed: int
    success_percentage: float
    """passed / attempts × 100."""


class SummaryFile(BaseModel):
    """`summary.json`."""

    run_name: str
    timestamp_utc: str
    """ISO 8601, given by the caller so the file is reproducible."""
    k: int
    """Attempts per task the run was configured with."""
    model_name: str
    attempts: list[TaskAttempts] = Field(default_factory=list)
    """One entry per task, in the order tasks first appear among the episodes."""
    qualitative_scores: dict[str, float | None] = Field(default_factory=dict)
    """Judge score field → mean over the episodes that have it; null when none has."""
    passed: bool
    """True when there is at least one episode and every episode's verdict passed."""


class EpisodeTime(BaseModel):
    wall_ms: float


class EpisodeTokens(BaseModel):
    prompt_tokens: int
    """Tokens in, over every model call of the conversation (nested agents included)."""
    completion_tokens: int
    total_tokens: int
    cached_prompt_pct: float
    """Share of prompt tokens read from the provider's cache, 0–100; 0 with no prompt."""


class EpisodeVerdict(BaseModel):
    passed: bool
    reason: str


class EpisodeMetrics(BaseModel):
    """One row of metrics.json's `per_episode`."""

    task_id: str
    expected_outcome: str
    status: str | None
    """The episode's final status."""
    success: bool
    """The verdict passed (false when there is no verdict)."""
    time: EpisodeTime
    tokens: EpisodeTokens
    verdict: EpisodeVerdict | None
    qualitative: dict[str, float | None]
    """Judge score field → score, null when not judged."""


class TimeSummary(BaseModel):
    total_wall_ms: float
    avg_wall_ms: float | None
    min_wall_ms: float | None
    max_wall_ms: float | None


class TokenSummary(BaseModel):
    prompt_tokens_total: int
    completion_tokens_total: int
    total_tokens_total: int
    cached_prompt_pct: float
    """Cached share of all prompt tokens of the run, 0–100."""
    avg_total_tokens: float | None
    min_total_tokens: int | None
    max_total_tokens: int | None


class ScoreStats(BaseModel):
    avg: float | None
    min: float | None
    max: float | None
    count: int
    """Episodes with a score for this field."""


class LatencyPercentiles(BaseModel):
    """Percentiles of episode wall time, linearly interpolated between closest ranks
    (rank = p/100 × (n − 1) over the sorted values); null with no episodes."""

    p50: float | None
    p90: float | None
    p95: float | None
    p99: float | None


class MetricsSummary(BaseModel):
    episodes: int
    """Distinct tasks."""
    k_attempts: int
    total_runs: int
    """Episodes (attempts) counted."""
    passed: int
    failed: int
    pass_rate: float | None
    """passed / total_runs, 0–1; null with no episodes."""
    time: TimeSummary
    tokens: TokenSummary
    qualitative: dict[str, ScoreStats]
    pass_at_k: float | None
    """Mean over tasks of the unbiased pass@k; null with no tasks."""
    pass_hat_k: float | None
    """Mean over tasks of pass^k (all k attempts pass); null with no tasks."""
    error_episodes: int
    """Episodes whose attempt raised (aux.eval_error) or that ended in status `error`."""
    latency_ms: LatencyPercentiles


class TaskPassAtK(BaseModel):
    task_id: str
    attempts: int
    """n: attempts recorded."""
    passed: int
    """c: attempts whose verdict passed."""
    pass_at_k: float
    pass_hat_k: float


class MetricsFile(BaseModel):
    """`metrics.json`."""

    per_episode: list[EpisodeMetrics] = Field(default_factory=list)
    summary: MetricsSummary
    per_task: list[TaskPassAtK] = Field(default_factory=list)
