"""What the agent did, rebuilt from its spans (SPEC §5)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field


class _Step(BaseModel):
    kind: str
    """model, tool, agent or error: which of the step records this is."""
    node: str | None = None
    """Graph node that ran the step."""


class ModelStep(_Step):
    kind: Literal["model"] = "model"
    model: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_cached: int = 0
    reasoning_tokens: int = 0
    said: str | None = None
    """What the model said, without thinking before a final `</think>`."""
    called: list[str] = Field(default_factory=list)
    """Names of the tools it decided to call."""
    error: str | None = None


class ToolStep(_Step):
    kind: Literal["tool"] = "tool"
    name: str
    args: Any = None
    """Arguments, parsed from JSON when they are JSON."""
    result: str | None = None
    error: str | None = None
    steps: list[Step] = Field(default_factory=list)
    """Steps run inside the tool (e.g. an agent call)."""


class AgentStep(_Step):
    kind: Literal["agent"] = "agent"
    agent: str | None = None
    asked: str | None = None
    answered: str | None = None
    status: str | None = None
    """The called agent's A2A task state."""
    error: str | None = None
    steps: list[Step] = Field(default_factory=list)
    """Steps of the called agent (from its own span file)."""


class ErrorStep(_Step):
    kind: Literal["error"] = "error"
    span: str
    """Name of the failed span."""
    error: str


Step = Annotated[ModelStep | ToolStep | AgentStep | ErrorStep, Field(discriminator="kind")]

ToolStep.model_rebuild()
AgentStep.model_rebuild()


class Turn(BaseModel):
    user: str
    steps: list[Step] = Field(default_factory=list)


def count(value: object) -> int:
    """A count as Totals and steps hold it (a token count), read from a span attribute or a
    target's output: a non-negative whole number, 0 when the value is missing or is anything
    else (a bool, text that is no number, a negative or infinite value)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return 0
    try:
        number = int(float(value)) if isinstance(value, str) else int(value)
    except (ValueError, OverflowError):
        return 0
    return max(number, 0)


class Totals(BaseModel):
    """Counts over every step of the conversation, steps nested in tool and agent calls included
    (never negative: an episode file that says otherwise is refused when read)."""

    model_calls: int = Field(0, ge=0)
    """LLM calls the agent made (model steps)."""
    tokens_in: int = Field(0, ge=0)
    """Prompt tokens over all model steps, as the spans report them."""
    tokens_out: int = Field(0, ge=0)
    """Completion tokens over all model steps."""
    tokens_cached: int = Field(0, ge=0)
    """Prompt tokens the provider served from its cache (part of tokens_in)."""
    tool_calls: int = Field(0, ge=0)
    agent_calls: int = Field(0, ge=0)
    """Calls to other agents (sub-agents over A2A)."""
    errors: int = Field(0, ge=0)
    """Failed steps, nested ones included."""


class Trajectory(BaseModel):
    found: bool = False
    """False when no root span of the conversation was found."""
    turns: list[Turn] = Field(default_factory=list)
    totals: Totals = Field(default_factory=Totals)
    truncated: bool = False
    """True when a long text field was cut."""
