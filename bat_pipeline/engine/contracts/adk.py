"""Google ADK's eval files as a task carries them (engine.datasets.adk reads them).

An ADK eval case is one task: its `conversation` (the invocations, each the user's message
and what the agent was expected to do) or its `conversation_scenario` (a starting prompt
and a plan for the simulated user), the criteria of the file's `test_config.json`, and what
the case expects of the session state. The ADK scorers (engine/scorers/adk_*.py) read it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from bat_pipeline.engine.contracts.strict import Strict

MatchType = Literal["EXACT", "IN_ORDER", "ANY_ORDER"]

MATCH_TYPES: dict[int, MatchType] = {0: "EXACT", 1: "IN_ORDER", 2: "ANY_ORDER"}
"""ADK's ToolTrajectoryCriterion.MatchType values."""
TRAJECTORY = "tool_trajectory_avg_score"
RESPONSE_MATCH = "response_match_score"
RESPONSE_MATCH_V2 = "final_response_match_v2"
RUBRIC_RESPONSE = "rubric_based_final_response_quality_v1"
RUBRIC_TOOL_USE = "rubric_based_tool_use_quality_v1"
HALLUCINATIONS = "hallucinations_v1"
RUBRIC_TRAJECTORY = "rubric_based_multi_turn_trajectory_quality_v1"
JUDGED = (RESPONSE_MATCH_V2, RUBRIC_RESPONSE, RUBRIC_TOOL_USE, HALLUCINATIONS, RUBRIC_TRAJECTORY)
"""ADK's LLM-as-a-judge metrics that bat-pipeline scores (through eval.yaml's judge)."""
EFFICIENCY = ("tool_call_count_v1", "inference_call_count_v1", "token_usage_v1")
"""ADK's informational metrics that bat-pipeline reports: never pass or fail, no threshold."""


class AdkToolCall(Strict):
    """A `FunctionCall` of `intermediate_data.tool_uses` (or of an invocation event)."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class AdkInvocation(Strict):
    """One expected invocation: the user's text (sent as one A2A message), the final
    response and the tool calls the agent was expected to make for it."""

    invocation_id: str = ""
    user: str
    final_response: str | None = None
    """The text parts of `final_response`, joined by newlines; None when the case has none."""
    tool_uses: list[AdkToolCall] = Field(default_factory=list)
    intermediate_responses: list[tuple[str, str]] = Field(default_factory=list)
    """(author, text) of the sub-agents' progress messages."""
    rubrics: list[AdkRubric] = Field(default_factory=list)
    """The rubrics of this invocation only."""


class AdkRubric(Strict):
    rubric_id: str
    text: str
    type: str | None = None


AdkInvocation.model_rebuild()


class AdkCriterion(Strict):
    """One entry of `criteria` in test_config.json: the metric, its threshold (None for
    the informational efficiency metrics) and the options ADK reads for it."""

    metric: str
    threshold: float | None = None
    match_type: MatchType = "EXACT"
    ignore_args: bool = False
    judge_model: str | None = None
    num_samples: int = 5
    rubrics: list[AdkRubric] = Field(default_factory=list)


class AdkScenario(Strict):
    """A `conversation_scenario`: ADK's user simulator drives it after the starting prompt."""

    starting_prompt: str
    conversation_plan: str
    user_persona: Any = None


class AdkCase(Strict):
    """One ADK eval case, with the criteria it is scored by."""

    source: str
    """The eval file it came from."""
    eval_set_id: str
    eval_id: str
    format: Literal["evalset", "legacy"] = "evalset"
    conversation: list[AdkInvocation] | None = None
    scenario: AdkScenario | None = None
    session_state: dict[str, Any] = Field(default_factory=dict)
    """`session_input.state`: the state ADK starts the session with."""
    app_name: str | None = None
    final_session_state: dict[str, Any] = Field(default_factory=dict)
    """The state expected at the end; empty: not checked (ADK's default is `{}`)."""
    rubrics: list[AdkRubric] = Field(default_factory=list)
    criteria: list[AdkCriterion] = Field(default_factory=list)
    config_source: str | None = None
    """The test_config.json the criteria came from; None: ADK's defaults."""

    def criterion(self, metric: str) -> AdkCriterion | None:
        return next((c for c in self.criteria if c.metric == metric), None)


RUBRIC_TYPES = {
    RUBRIC_RESPONSE: "FINAL_RESPONSE_QUALITY",
    RUBRIC_TOOL_USE: "TOOL_USE_QUALITY",
    RUBRIC_TRAJECTORY: "TRAJECTORY_QUALITY",
}
"""The rubric `type` each rubric metric takes from the case and its invocations (ADK's RUBRIC_TYPE)."""


def effective_rubrics(case: AdkCase, criterion: AdkCriterion, invocation: AdkInvocation | None) -> list[AdkRubric]:
    """ADK's rubrics for one invocation (rubric_based_evaluator.create_effective_rubrics_list):
    the criterion's, then those of the case and the invocation of the metric's `type`."""
    kind = RUBRIC_TYPES[criterion.metric]
    scoped = [*case.rubrics, *(invocation.rubrics if invocation is not None else [])]
    return [*criterion.rubrics, *(r for r in scoped if r.type == kind)]
