"""One attempt of one task, with its verdict and judge scores (SPEC §4, §6–8)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from bat_pipeline.engine.contracts.names import conversation_id
from bat_pipeline.engine.contracts.scenario import ConversationLog
from bat_pipeline.engine.contracts.scores import RubricScores, ScoreRow
from bat_pipeline.engine.contracts.trajectory import Trajectory


class A2AEvent(BaseModel):
    t_ms: float
    """Milliseconds since the episode started."""
    task_status: str
    content_preview: str = ""
    user_input: str | None = None
    """The user message, on the first event after it was sent."""


class RecordedToolCall(BaseModel):
    name: str
    args: Any = None
    error: str | None = None


class EpisodeTrace(BaseModel):
    events: list[A2AEvent] = Field(default_factory=list)
    """At most 200."""
    wall_ms: float = 0.0
    tool_calls: list[RecordedToolCall] = Field(default_factory=list)
    trajectory: Trajectory = Field(default_factory=Trajectory)


class VerdictCheck(BaseModel):
    """One expectation checked."""

    check: str
    """e.g. `status`, `output[0]`, `tool_call:get_weather`, `model_calls`."""
    passed: bool
    detail: str


class Verdict(BaseModel):
    passed: bool
    reason: str
    """Every check, pass or fail, in order."""
    checks: list[VerdictCheck] = Field(default_factory=list)


class JudgeScores(RubricScores):
    """bat-cli's `qualitative_scores` of an episode."""

    judge_reasoning: dict[str, str] = Field(default_factory=dict)
    """Rubric → the judge's reasoning, or why the score is null (skipped, failed)."""
    judge_errors: dict[str, str] = Field(default_factory=dict)
    """Rubric → why the judge failed; its score stays null."""


class Episode(BaseModel):
    model_name: str
    """`provider:model`."""
    task_id: str
    expected_outcome: str = ""
    final_status: str | None = None
    """working | input-required | completed | error, or None when nothing came back."""
    final_output: str = ""
    verdict: Verdict | None = None
    qualitative_scores: JudgeScores | None = None
    aux: dict[str, Any] = Field(default_factory=dict)
    """attempt_index, agent_url, started_at, `conversation_id` when it is not
    `<task id>__try<n>` (a resumed attempt gets a fresh one), `eval_error` when the
    attempt raised, and a scenario's `conversation` (see `conversation`)."""
    trace: EpisodeTrace = Field(default_factory=EpisodeTrace)
    scores: list[ScoreRow] = Field(default_factory=list)
    """Every scorer's rows for this episode (bat_pipeline's addition to the file): the
    deterministic checks first, then the LLM scorers'. `verdict` and
    `qualitative_scores` are what bat eval's readers expect of them."""

    @property
    def attempt_index(self) -> int:
        return int(self.aux.get("attempt_index", 0))

    @property
    def conversation_id(self) -> str:
        """The A2A context id the attempt used: `aux.conversation_id`, else
        `<task id>__try<n>`."""
        return str(self.aux.get("conversation_id") or conversation_id(self.task_id, self.attempt_index))

    @property
    def eval_error(self) -> str | None:
        """Why the attempt itself failed (not the agent's answer), if it did."""
        return self.aux.get("eval_error")

    @property
    def conversation(self) -> ConversationLog | None:
        """A scenario's conversation (`aux.conversation`): every turn, generated ones
        marked, why it ended, the simulated user's cost; None for other tasks."""
        found = self.aux.get("conversation")
        return ConversationLog.model_validate(found) if isinstance(found, dict) else None
