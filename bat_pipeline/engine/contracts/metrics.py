"""`summary.json` and `metrics.json` of one run and model (SPEC §8).

Keys, value types and meanings are those bat-cli 2026.10 writes (a script reading its
files reads ours); `per_task`, `pass_at_k`, `pass_hat_k`, `error_episodes`,
`latency_ms`, the per-episode `qualitative` of an episode the judge did not see, the
per-episode `scores` and `summary.scorers` are bat_pipeline's additions. As in bat-cli,
cached-prompt percentages are rounded to one decimal and nothing else is rounded; judge
fields without a single score are left out of the averages. Where bat-cli writes 0 for an
aggregate over no episodes at all (a run that recorded nothing), this writes null: there
is no pass rate or time to report.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from bat_pipeline.engine.contracts.scores import RubricScores, ScoreRow


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
    """When the run's metrics were written, UTC, as `YYYYMMDD_HHMMSS`."""
    k: int
    """Attempts per task the run was configured with."""
    model_name: str
    """The model alone, without its provider (`gpt-4o-mini`, `llama3:8b`)."""
    attempts: list[TaskAttempts] = Field(default_factory=list)
    """One entry per task, in the order tasks first appear among the episodes."""
    qualitative_scores: dict[str, float] = Field(default_factory=dict)
    """Judge score field → mean over the episodes that have it; a field no episode has
    is left out."""
    passed: int
    """Episodes whose verdict passed."""


class EpisodeTime(BaseModel):
    wall_ms: float


class EpisodeTokens(BaseModel):
    prompt_tokens: int
    """Tokens in, over every model call of the conversation (nested agents included)."""
    completion_tokens: int
    total_tokens: int
    cached_prompt_pct: float
    """Share of prompt tokens read from the provider's cache, 0–100 to one decimal; 0 with
    no prompt."""


class EpisodeVerdict(BaseModel):
    passed: bool
    reason: str


class EpisodeQualitative(RubricScores):
    """The judge's scores of one episode, as in its episode file."""

    judge_reasoning: dict[str, str] | None = None
    """Rubric → the judge's reasons (or why the rubric was skipped or failed); null only
    when the judge did not run on this episode."""


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
    qualitative: EpisodeQualitative
    """The judge's scores and reasons; every score null when it did not run."""
    scores: list[ScoreRow] = Field(default_factory=list)
    """Every scorer's rows for the episode, as in its episode file."""


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
    """Cached share of all prompt tokens of the run, 0–100 to one decimal."""
    avg_total_tokens: float | None
    min_total_tokens: int | None
    max_total_tokens: int | None


class ScoreStats(BaseModel):
    avg: float
    min: float
    max: float
    count: int
    """Episodes with a score for this field (at least 1)."""


class CriterionStats(BaseModel):
    """One criterion of one scorer over the rows of every episode (every sample of an
    LLM scorer included)."""

    avg: float | None
    """Mean of the non-null values (0–1); null when no row has one."""
    min: float | None
    max: float | None
    count: int
    """Rows with a value."""
    passed: int
    """Rows that passed."""
    failed: int
    """Rows that did not pass (rows whose `passed` is null are neither)."""
    ci: tuple[float, float] | None = None
    """Confidence interval of `avg`, clustered by task (engine.intervals); null with fewer
    than two tasks holding a value."""
    judge_spread: float | None = None
    """For a criterion asked N times per episode (`judge.runs`): the mean over episodes of
    the largest minus the smallest of its N values; null when asked once."""


class LatencyPercentiles(BaseModel):
    """Percentiles of episode wall time, linearly interpolated between closest ranks
    (rank = p/100 × (n − 1) over the sorted values); null with no episodes."""

    p50: float | None
    p90: float | None
    p95: float | None
    p99: float | None


class FlakyTask(BaseModel):
    """A task whose attempts disagree."""

    task_id: str
    attempts: int
    passed: int
    pass_share: float
    """passed / attempts."""


class MetricsSummary(BaseModel):
    episodes: int
    """Episodes (attempts) counted, as bat-cli counts them; the same as total_runs."""
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
    """Judge score field → its statistics over the episodes that have a score; a field
    without any score is left out."""
    pass_at_k: float | None
    """Mean over tasks of the unbiased pass@k; null with no tasks."""
    pass_hat_k: float | None
    """Mean over tasks of pass^k (all k attempts pass); null with no tasks."""
    error_episodes: int
    """Episodes whose attempt raised (aux.eval_error) or that ended in status `error`."""
    latency_ms: LatencyPercentiles
    scorers: dict[str, dict[str, CriterionStats]] = Field(default_factory=dict)
    """Scorer → criterion → its statistics over every episode's rows, scorers and
    criteria in the order they first appear."""
    confidence: float = 0.95
    """The level of every interval below (eval.yaml `metrics.confidence`)."""
    interval_method: str = ""
    """How the intervals were computed (engine.intervals.METHOD)."""
    pass_rate_ci: tuple[float, float] | None = None
    """Confidence interval of pass_rate, attempts clustered by task; null with fewer than
    two tasks."""
    pass_at_k_ci: tuple[float, float] | None = None
    """Confidence interval of pass_at_k (one value per task)."""
    pass_hat_k_ci: tuple[float, float] | None = None
    flaky_tasks: list[FlakyTask] = Field(default_factory=list)
    """Tasks whose attempts disagree (some passed, some did not), in dataset order."""


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
    timings: dict[str, float] = Field(default_factory=dict)
    """Seconds per phase of the partition's run so far (engine.contracts.timings.PHASES:
    startup … judge; bat_pipeline's addition)."""
