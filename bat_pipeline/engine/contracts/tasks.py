"""A task of the dataset and what it expects (SPEC §3)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from bat_pipeline.engine.contracts.adk import AdkCase
from bat_pipeline.engine.contracts.agentv import AgentvCase
from bat_pipeline.engine.contracts.scenario import Scenario
from bat_pipeline.engine.contracts.strict import Strict
from bat_pipeline.engine.contracts.trajectory_assertion import TrajectoryAssertion

TaskStatus = Literal["working", "input-required", "completed", "error"]


class ToolCallExpectation(Strict):
    name: str = Field(min_length=1)
    """Tool name, matched exactly."""
    args_subset: dict[str, Any] = Field(default_factory=dict)
    """Arguments the call must contain (recursively; see engine.scorers.arguments.args_contain)."""
    times: int = Field(default=1, ge=0)
    """Minimum number of matching calls (0: always holds, as in bat-cli)."""


class AgentCallExpectation(Strict):
    agent: str = Field(min_length=1)
    """Name of the called agent (`gen_ai.agent.name` of the CLIENT span)."""
    times: int = Field(default=1, ge=0)
    """Minimum number of calls (0: always holds)."""


class Expected(Strict):
    status: TaskStatus | None = "completed"
    """Final status the episode must end in; None skips the check."""
    expected_outcome: str = ""
    """Prose for the judge."""
    output_must_contain: list[str] = Field(default_factory=list)
    """Phrases that must be substrings of the final output."""
    tool_calls: list[ToolCallExpectation] = Field(default_factory=list)
    agent_calls: list[AgentCallExpectation] = Field(default_factory=list)
    max_model_calls: int | None = Field(default=None, ge=0)
    max_tokens: int | None = Field(default=None, ge=0)
    """Upper bound on tokens in + out over the whole conversation."""
    no_errors: bool = False
    """Fail when any step of the trajectory failed."""
    trajectory: TrajectoryAssertion | None = None
    """What the tool calls must look like (ours; engine.scorers.trajectory)."""
    expected_label: str | None = None
    """The class the answer should name, for the classification metrics (ours)."""
    expected_output: Any = None
    """A structured expected answer; `metrics.label_field` names its label (ours)."""

    @property
    def needs_spans(self) -> bool:
        """True when a check reads the trajectory rather than the A2A answer."""
        return bool(
            self.tool_calls
            or self.agent_calls
            or self.no_errors
            or self.trajectory is not None
            or self.max_model_calls is not None
            or self.max_tokens is not None
        )


class TaskJudge(Strict):
    """A task's own judge choices, in place of eval.yaml's (ours)."""

    rubrics: list[str] | None = None
    kinds: list[Literal["choice", "quality", "standard", "pattern"]] | None = None
    pattern: Literal["react", "cove", "reflexion", "rag"] | None = None


class Task(Strict):
    """One task: fixed `turns`, and optionally a scenario whose simulated user carries
    the conversation on after them."""

    id: str = Field(min_length=1)
    turns: list[str] = Field(min_length=1)
    """User messages, one A2A message each, in order."""
    expected: Expected = Field(default_factory=Expected)
    meta: dict[str, Any] = Field(default_factory=dict)
    """Free-form labels (category, ...) carried to metrics."""
    judge: TaskJudge | None = None
    """Rubrics and judge kinds for this task only (ours); unset: eval.yaml's."""
    agentv: AgentvCase | None = None
    """The AgentV test this task is (engine.config.project): its graders and pass rule
    decide the verdict; None for a bat-cli task."""
    scenario: Scenario | None = None
    """The EvalBench scenario this task is or carries (engine.datasets.evalbench): its
    plan drives a simulated user after `turns`, its fields select the EvalBench scorers."""
    adk: AdkCase | None = None
    """The Google ADK eval case this task is (engine.datasets.adk): its criteria select the
    ADK scorers (engine/scorers/adk_*.py) and decide the case."""
