"""The span conventions read, in one table: which span is a model call, a tool call, a call to
another agent or the root of a request, where its conversation id is, and which attribute
holds each field of a step. docs/formats.md §6 prints the same table.

Conventions covered (first key found wins, in the order of each tuple):

- OpenInference (`openinference.span.kind`, `llm.*`, `tool.*`, `input.value`,
  `output.value`, `session.id`), as openinference-semantic-conventions 0.1 defines them and
  bat-adk writes them;
- OpenTelemetry GenAI semantic conventions v1.27.0 to v1.43.0 (`gen_ai.operation.name`
  `chat` / `text_completion` / `generate_content` / `execute_tool` / `invoke_agent`,
  `gen_ai.usage.input_tokens`, `gen_ai.tool.call.*`, `gen_ai.output.messages`,
  `gen_ai.conversation.id`), whose registry moved unchanged to the separate GenAI
  conventions repository at v1.44.0;
- the previous GenAI names: `gen_ai.usage.prompt_tokens` / `.completion_tokens` and a model
  span known by `gen_ai.system` alone (v1.26.0), its `gen_ai.content.completion` event
  with `gen_ai.completion` (v1.26.0, v1.27.0), and the indexed `gen_ai.completion.<i>.*`
  attributes instrumentations derived from it;
- the A2A context id (`a2a.context_id`) as the conversation of a request's root.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MODEL, TOOL, AGENT_CALL, AGENT_ROOT = "model", "tool", "agent_call", "agent_root"
INVOKE_AGENT = "invoke_agent"

OPENINFERENCE_KIND = "openinference.span.kind"
GENAI_OPERATION = "gen_ai.operation.name"

OPENINFERENCE_ROLES = {"LLM": MODEL, "TOOL": TOOL, "AGENT": AGENT_ROOT}
"""`openinference.span.kind` → role (an AGENT span is a root only without parent)."""
GENAI_ROLES = {
    "chat": MODEL,
    "text_completion": MODEL,
    "generate_content": MODEL,
    "execute_tool": TOOL,
    INVOKE_AGENT: AGENT_ROOT,
}
"""`gen_ai.operation.name` → role; `invoke_agent` on a CLIENT span is an agent call."""
GENAI_SYSTEM_ONLY = "gen_ai.system"
"""v1.26.0: a model span had no operation name, only its system."""

CONVERSATION = ("gen_ai.conversation.id", "session.id", "a2a.context_id")
"""Where a request's root holds the conversation (A2A context) id."""

MODEL_NAME = ("llm.model_name", "gen_ai.response.model", "gen_ai.request.model")
TOKENS_IN = ("llm.token_count.prompt", "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens")
TOKENS_OUT = ("llm.token_count.completion", "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens")
TOKENS_CACHED = ("llm.token_count.prompt_details.cache_read", "gen_ai.usage.cache_read.input_tokens")
TOKENS_REASONING = ("llm.token_count.completion_details.reasoning", "gen_ai.usage.reasoning.output_tokens")
MODEL_OUTPUT_JSON = ("gen_ai.output.messages", "gen_ai.completion")
"""JSON text of the model's output messages: GenAI `parts` messages (v1.37.0 on), or the
OpenAI-style messages of v1.26.0/v1.27.0. `llm.output_messages.<i>.*` (OpenInference) and
`gen_ai.completion.<i>.*` (indexed) are probed before these."""
MODEL_OUTPUT_EVENTS = {
    "gen_ai.client.inference.operation.details": "gen_ai.output.messages",
    "gen_ai.content.completion": "gen_ai.completion",
}
"""Span events that carry the output instead of an attribute: event name → its attribute."""
MODEL_INPUT = (
    "llm.input_messages",
    "input.",
    "llm.invocation_parameters",
    "llm.tools",
    "llm.prompt",
    "gen_ai.input.messages",
    "gen_ai.prompt",
    "gen_ai.system_instructions",
    "gen_ai.tool.definitions",
)
"""Prefixes of a model call's input attributes, dropped as the span is read."""

TOOL_NAME = ("tool.name", "gen_ai.tool.name")
TOOL_ARGS = ("input.value", "gen_ai.tool.call.arguments")
TOOL_RESULT = ("output.value", "gen_ai.tool.call.result")
TOOL_CALL_ID = ("tool_call.id", "tool.call_id", "tool.id", "gen_ai.tool.call.id")

AGENT_NAME = ("gen_ai.agent.name", "agent.name")
AGENT_ASKED = ("input.value", "gen_ai.input.messages")
AGENT_ANSWERED = ("output.value", "gen_ai.output.messages")
AGENT_STATE = ("bat.a2a.task_state", "a2a.task_state")

ERROR_TYPE = "error.type"
"""GenAI's failure class, the reason when a failed span says nothing else."""


def span_role(attrs: Mapping[str, Any], kind: str, parentless: bool) -> str | None:
    """MODEL, TOOL, AGENT_CALL (a CLIENT span calling an agent), AGENT_ROOT (an agent
    serving a request; a root when parentless) or None."""
    role: str | None = None
    operation = attrs.get(GENAI_OPERATION)
    if type(operation) is str:
        role = GENAI_ROLES.get(operation)
    if role is None:
        oi_kind = attrs.get(OPENINFERENCE_KIND)
        if type(oi_kind) is str:
            role = OPENINFERENCE_ROLES.get(oi_kind)
    if role is None and parentless and kind != "CLIENT" and conversation_id(attrs) is not None:
        role = AGENT_ROOT
    if role is None and operation is None and GENAI_SYSTEM_ONLY in attrs:
        role = MODEL
    if role == AGENT_ROOT and kind == "CLIENT":
        role = AGENT_CALL if operation == INVOKE_AGENT else None
    return role


def first(attrs: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    """The value of the first key present and not null."""
    for key in keys:
        value = attrs.get(key)
        if value is not None:
            return value
    return None


def conversation_id(attrs: Mapping[str, Any]) -> str | None:
    for key in CONVERSATION:
        value = attrs.get(key)
        if type(value) is str and value:
            return value
    return None
