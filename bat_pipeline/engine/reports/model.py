"""The report of one run as records: what every rendering reads."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from bat_pipeline.engine.contracts.scores import ScoreRow


class ScoreSummary(BaseModel):
    """One scorer's criterion over a partition's episodes, from the rows with the last word
    (engine.judge_samples.last_word: a panel's, a median of runs, else the single row)."""

    scorer: str
    criterion: str
    mean: float | None
    ci: tuple[float, float] | None = None
    """The mean's confidence interval, clustered by task (engine.intervals); null with
    fewer than two tasks holding a value."""
    passed: int = 0
    failed: int = 0
    count: int = 0
    spread: float | None = None
    """Mean spread of N judge runs (max − min), where the judge ran several times."""
    agreement: float | None = None
    """Mean agreement of a panel of judges (1 − the spread of their values)."""
    judged: bool = False
    """Written by a judge (an LLM scorer)."""
    summary: bool = False
    """A rubric's summary (weighted score, overall, conformance) rather than one criterion."""


class FlakyTaskReport(BaseModel):
    task_id: str
    attempts: int
    passed: int


class VersusPrevious(BaseModel):
    """This partition against the same partition of the previous run, paired on the tasks
    both ran (engine.intervals.paired_difference)."""

    tasks: int
    difference: float
    low: float | None = None
    high: float | None = None
    significant: bool = False
    verdict: str = "no detectable difference"


class PartitionReport(BaseModel):
    key: str
    model: str
    episodes: int
    passed: int
    pass_rate: float | None
    pass_rate_ci: tuple[float, float] | None = None
    confidence: float = 0.95
    error_episodes: int = 0
    pass_at_k: float | None = None
    pass_at_k_ci: tuple[float, float] | None = None
    flaky_tasks: list[FlakyTaskReport] = Field(default_factory=list)
    """Tasks whose attempts disagree, in dataset order."""
    versus_previous: VersusPrevious | None = None
    provenance: dict[str, Any] = Field(default_factory=dict)
    """Agent commit and dirtiness, dataset and config hashes, judge, pipeline version."""
    p50_ms: float | None = None
    p95_ms: float | None = None
    scores: list[ScoreSummary] = Field(default_factory=list)
    classification: dict[str, Any] | None = None
    performance: dict[str, Any] | None = None
    previous_pass_rate: float | None = None


class TaskCell(BaseModel):
    attempts: int
    passed: int
    mean_score: float | None
    """Mean of the judged values (LLM rows with the last word) over the attempts."""

    @property
    def pass_rate(self) -> float:
        return self.passed / self.attempts if self.attempts else 0.0


class TaskReport(BaseModel):
    task_id: str
    cells: dict[str, TaskCell] = Field(default_factory=dict)
    """Partition key → the task's results there."""
    previous_pass_rate: dict[str, float] = Field(default_factory=dict)

    @property
    def pass_rate(self) -> float:
        attempts = sum(c.attempts for c in self.cells.values())
        return sum(c.passed for c in self.cells.values()) / attempts if attempts else 0.0


class EpisodeReport(BaseModel):
    partition: str
    task_id: str
    attempt: int
    conversation_id: str
    passed: bool | None
    reason: str = ""
    final_status: str = ""
    wall_ms: float = 0.0
    turns: list[str] = Field(default_factory=list)
    events: list[dict[str, Any]] = Field(default_factory=list)
    final_output: str = ""
    trajectory: str = ""
    error: str | None = None
    rows: list[ScoreRow] = Field(default_factory=list)


class Regression(BaseModel):
    partition: str
    what: str
    """`pass rate`, `task <id>` or `<scorer>/<criterion>`."""
    before: float
    after: float


class RunReport(BaseModel):
    run_id: str
    agent_id: str
    generated_at: str
    green: float = 0.8
    amber: float = 0.5
    previous_run_id: str | None = None
    partitions: list[PartitionReport] = Field(default_factory=list)
    tasks: list[TaskReport] = Field(default_factory=list)
    episodes: list[EpisodeReport] = Field(default_factory=list)
    regressions: list[Regression] = Field(default_factory=list)

    def colour(self, value: float | None) -> str:
        """`high` (≥ green), `medium` (≥ amber), `low`, or `none` without a value."""
        if value is None:
            return "none"
        return "high" if value >= self.green else "medium" if value >= self.amber else "low"

    def worst_tasks(self, limit: int = 10) -> list[TaskReport]:
        """Lowest pass rate first, then lowest mean score."""

        def key(task: TaskReport) -> tuple[float, float]:
            scores = [c.mean_score for c in task.cells.values() if c.mean_score is not None]
            return task.pass_rate, sum(scores) / len(scores) if scores else 1.0

        return sorted(self.tasks, key=key)[:limit]
