"""What a persona answers: text, tool calls, or an HTTP error."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from bat_pipeline.example.scripted_llm.conversation import Conversation, Tool, ToolCall


@dataclass
class Reply:
    """An assistant turn; `error` = (HTTP status, message) answers with an error instead."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    error: tuple[int, str] | None = None


def call(conv: Conversation, tool: Tool, values: list[Any], index: int = 0) -> ToolCall:
    """A call of `tool` with `values` bound to its parameters in schema order; stable id."""
    args: dict[str, Any] = {}
    for name, value in zip(tool.params, values, strict=False):  # parameters past the values stay unset
        if tool.param_types.get(name) in ("integer", "number") and isinstance(value, str):
            try:
                value = int(value)
            except ValueError:
                pass
        if tool.param_types.get(name) == "string" and not isinstance(value, str):
            value = str(value)
        args[name] = value
    digest = hashlib.sha256(f"{conv.fingerprint()}|{index}|{tool.name}".encode()).hexdigest()
    return ToolCall(id=f"call_{digest[:16]}", name=tool.name, arguments=args)


def result_sentence(tool_call: ToolCall, result: str) -> str:
    """How an answer quotes one tool result."""
    name = tool_call.name.lower()
    values = list(tool_call.arguments.values())
    if result.lower().startswith("error"):
        return f"The {tool_call.name} tool failed: {result}"
    if "weather" in name and values:
        return f"Weather in {values[0]}: {result}."
    if name == "add" and len(values) >= 2:
        return f"{values[0]} + {values[1]} = {result}."
    if "forecast" in name:
        return f"The Forecaster says: {result}"
    return f"{tool_call.name} returned: {result}"
