"""One neutral view of a chat request, whichever API (OpenAI, Anthropic, Ollama, Google) sent it."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ToolCall:
    """A tool call decided by the assistant."""

    id: str
    name: str
    arguments: dict[str, Any]


@dataclass
class Message:
    """One message: `role` is system, user, assistant or tool."""

    role: str
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None


@dataclass
class Tool:
    """A tool the client offers: its name and parameter names in schema order."""

    name: str
    params: list[str]
    param_types: dict[str, str]


@dataclass
class Conversation:
    """A request's model, messages, offered tools and requested JSON schema, if any."""

    model: str
    messages: list[Message]
    tools: list[Tool]
    json_schema: dict[str, Any] | None = None
    wants_json: bool = False

    def user_texts(self) -> list[str]:
        """Text of every user message, oldest first."""
        return [m.text for m in self.messages if m.role == "user" and m.text]

    def last_user_text(self) -> str:
        texts = self.user_texts()
        return texts[-1] if texts else ""

    def prompt_text(self) -> str:
        """All system and user text, joined."""
        return "\n".join(m.text for m in self.messages if m.role in ("system", "user"))

    def results_since_last_user(self) -> list[tuple[ToolCall, str]]:
        """Tool results that arrived after the last user text, paired with their calls."""
        last_user = max((i for i, m in enumerate(self.messages) if m.role == "user" and m.text), default=-1)
        calls: dict[str, ToolCall] = {}
        out: list[tuple[ToolCall, str]] = []
        for message in self.messages[last_user + 1 :]:
            for call in message.tool_calls:
                calls[call.id] = call
            if message.role == "tool":
                call = calls.get(message.tool_call_id or "") or ToolCall(message.tool_call_id or "", "tool", {})
                out.append((call, message.text))
        return out

    def previous_assistant_text(self) -> str:
        """Text of the last assistant message before the last user message."""
        last_user = max((i for i, m in enumerate(self.messages) if m.role == "user" and m.text), default=-1)
        for message in reversed(self.messages[:last_user]):
            if message.role == "assistant" and message.text:
                return message.text
        return ""

    def tool(self, fragment: str) -> Tool | None:
        """The first offered tool whose name contains `fragment`."""
        return next((t for t in self.tools if fragment in t.name.lower()), None)

    def fingerprint(self) -> str:
        """A stable digest of the conversation, for deterministic ids and choices."""
        raw = json.dumps([[m.role, m.text, [c.name for c in m.tool_calls]] for m in self.messages])
        return hashlib.sha256(raw.encode()).hexdigest()


def count_tokens(text: str) -> int:
    """Deterministic token estimate: one token per four characters, at least one."""
    return max(1, math.ceil(len(text) / 4))


def _text_of(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and block.get("type") in ("text", "input_text"):
                parts.append(str(block.get("text", "")))
        return "\n".join(parts)
    return str(content)


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        parsed = json.loads(raw or "{}")
    except (TypeError, ValueError):
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _tool(name: str, schema: dict[str, Any] | None) -> Tool:
    props = (schema or {}).get("properties") or {}
    types = {k: str((v or {}).get("type", "string")) for k, v in props.items()}
    return Tool(name=name, params=list(props), param_types=types)


def from_openai(body: dict[str, Any]) -> Conversation:
    """Read an OpenAI (or Ollama) chat request."""
    messages: list[Message] = []
    for raw in body.get("messages") or []:
        role = raw.get("role", "user")
        if role == "developer":
            role = "system"
        calls = []
        for i, call in enumerate(raw.get("tool_calls") or []):
            fn = call.get("function") or {}
            calls.append(ToolCall(call.get("id") or f"call_{i}", fn.get("name", ""), _arguments(fn.get("arguments"))))
        messages.append(Message(role, _text_of(raw.get("content")), calls, raw.get("tool_call_id")))
    # Ollama's native API pairs tool results by order, without ids.
    pending = [c for m in messages for c in m.tool_calls]
    for message in messages:
        if message.role == "tool" and not message.tool_call_id and pending:
            message.tool_call_id = pending.pop(0).id
    tools = [
        _tool((t.get("function") or {}).get("name", ""), (t.get("function") or {}).get("parameters"))
        for t in body.get("tools") or []
        if t.get("type", "function") == "function"
    ]
    fmt = body.get("response_format") or body.get("format") or {}
    schema = None
    wants_json = False
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        schema = (fmt.get("json_schema") or {}).get("schema") or {}
        wants_json = True
    elif isinstance(fmt, dict) and fmt.get("type") == "json_object":
        wants_json = True
    elif fmt == "json" or (isinstance(fmt, dict) and fmt.get("properties")):
        wants_json = True
        schema = fmt if isinstance(fmt, dict) else None
    return Conversation(str(body.get("model", "")), messages, tools, schema, wants_json)


def from_anthropic(body: dict[str, Any]) -> Conversation:
    """Read an Anthropic messages request."""
    messages: list[Message] = []
    system = body.get("system")
    if system:
        messages.append(Message("system", _text_of(system)))
    for raw in body.get("messages") or []:
        role = raw.get("role", "user")
        content = raw.get("content")
        if isinstance(content, str):
            messages.append(Message(role, content))
            continue
        texts, calls = [], []
        for block in content or []:
            kind = block.get("type")
            if kind == "text":
                texts.append(block.get("text", ""))
            elif kind == "tool_use":
                calls.append(ToolCall(block.get("id", ""), block.get("name", ""), _arguments(block.get("input"))))
            elif kind == "tool_result":
                messages.append(Message("tool", _text_of(block.get("content")), tool_call_id=block.get("tool_use_id")))
        if texts or calls:
            messages.append(Message(role, "\n".join(texts), calls))
    tools = [_tool(t.get("name", ""), t.get("input_schema")) for t in body.get("tools") or []]
    return Conversation(str(body.get("model", "")), messages, tools)


def from_google(body: dict[str, Any], model: str) -> Conversation:
    """Read a Google generateContent request (the model is named in its URL); function
    calls and responses are paired by order, as Google names no call ids."""
    messages: list[Message] = []
    system = body.get("systemInstruction") or body.get("system_instruction")
    if isinstance(system, dict):
        messages.append(Message("system", "\n".join(str(p.get("text", "")) for p in system.get("parts") or [])))
    pending: list[ToolCall] = []
    for raw in body.get("contents") or []:
        role = "assistant" if raw.get("role") == "model" else "user"
        texts, calls = [], []
        for part in raw.get("parts") or []:
            if "text" in part and not part.get("thought"):
                texts.append(str(part["text"]))
            elif isinstance(part.get("functionCall"), dict):
                call = part["functionCall"]
                calls.append(ToolCall(f"call_{len(pending)}", call.get("name", ""), _arguments(call.get("args"))))
                pending.append(calls[-1])
            elif isinstance(part.get("functionResponse"), dict):
                answer = part["functionResponse"]
                paired = next((c.id for c in pending if c.name == answer.get("name")), None)
                pending = [c for c in pending if c.id != paired]
                messages.append(Message("tool", json.dumps(answer.get("response")), tool_call_id=paired))
        if texts or calls:
            messages.append(Message(role, "\n".join(texts), calls))
    tools = [
        _tool(d.get("name", ""), d.get("parametersJsonSchema") or d.get("parameters"))
        for t in body.get("tools") or []
        for d in t.get("functionDeclarations") or []
    ]
    config = body.get("generationConfig") or {}
    schema = config.get("responseJsonSchema") or config.get("responseSchema")
    wants_json = config.get("responseMimeType") == "application/json"
    return Conversation(model, messages, tools, schema if isinstance(schema, dict) else None, wants_json)
