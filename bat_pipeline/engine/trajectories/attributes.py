"""What instrumentations (OpenInference, OpenTelemetry GenAI, LangChain) put in span
attributes, read into plain values; which attribute is which is engine.spans.conventions."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from bat_pipeline.engine.conversation import a2a_state_name
from bat_pipeline.engine.spans import parse_json_text
from bat_pipeline.engine.spans.conventions import MODEL_OUTPUT_JSON

THINK_END = "</think>"
_OUT = "llm.output_messages."
_INDEXED_OUT = "gen_ai.completion."

Call = tuple["str | None", str, Any]
"""A tool call a model decided: its id, the tool's name, the arguments."""


def llm_output(a: Mapping[str, Any]) -> tuple[str | None, list[Call]]:
    """What the model said (after a final `</think>`) and the tool calls it decided, from
    the first convention that has any: OpenInference's `llm.output_messages.<i>.*`, the
    indexed `gen_ai.completion.<i>.*`, then the JSON messages of MODEL_OUTPUT_JSON."""
    texts, calls = _openinference_output(a)
    if not texts and not calls:
        texts, calls = _indexed_output(a)
    if not texts and not calls:
        for key in MODEL_OUTPUT_JSON:
            if a.get(key) is not None:
                texts, calls = _json_output(a[key])
                break
    said = "\n".join(texts)
    if THINK_END in said:
        said = said.rsplit(THINK_END, 1)[1]
    said = said.strip()
    return (said or None), calls


def _openinference_output(a: Mapping[str, Any]) -> tuple[list[str], list[Call]]:
    """Probes `llm.output_messages.<i>...` for i, j = 0, 1, ... (OpenInference numbers them
    without gaps) rather than scanning every attribute."""
    texts: list[str] = []
    calls: list[tuple[str | None, str, Any]] = []
    i = 0
    while True:
        p = f"{_OUT}{i}.message."
        found = p + "role" in a
        content = a.get(p + "content")
        if isinstance(content, str) and content:
            texts.append(content)
            found = True
        else:
            parts, j = [], 0
            while True:
                q = f"{p}contents.{j}.message_content."
                text = a.get(q + "text")
                if text is None and q + "type" not in a:
                    break
                if isinstance(text, str) and text:
                    parts.append(text)
                j += 1
            if parts:
                texts.append("\n".join(parts))
            found = found or j > 0
        j = 0
        while True:
            q = f"{p}tool_calls.{j}.tool_call."
            name, call_id = a.get(q + "function.name"), a.get(q + "id")
            if name is None and call_id is None:
                break
            if isinstance(name, str) and name:
                calls.append((str_value(call_id), name, json_or_text(a.get(q + "function.arguments"))))
            j += 1
        if not (found or j):
            break
        i += 1
    return texts, calls


def _indexed_output(a: Mapping[str, Any]) -> tuple[list[str], list[Call]]:
    """`gen_ai.completion.<i>.content` and `.tool_calls.<j>.{id,name,arguments}`."""
    texts: list[str] = []
    calls: list[Call] = []
    i = 0
    while True:
        p = f"{_INDEXED_OUT}{i}."
        content = a.get(p + "content")
        found = p + "role" in a or content is not None
        if isinstance(content, str) and content:
            texts.append(content)
        j = 0
        while True:
            q = f"{p}tool_calls.{j}."
            name, call_id = a.get(q + "name"), a.get(q + "id")
            if name is None and call_id is None:
                break
            if isinstance(name, str) and name:
                calls.append((str_value(call_id), name, json_or_text(a.get(q + "arguments"))))
            j += 1
        if not (found or j):
            break
        i += 1
    return texts, calls


def _json_output(value: object) -> tuple[list[str], list[Call]]:
    """Output messages as JSON (text or already decoded): GenAI's `{role, parts: [{type:
    text|tool_call, ...}]}` or OpenAI's `{role, content, tool_calls: [{id, function}]}`."""
    if isinstance(value, str):
        text = value
        try:
            value = parse_json_text(text)
        except ValueError:
            return ([text] if text.strip() else []), []
    messages = value if isinstance(value, list) else [value]
    texts: list[str] = []
    calls: list[Call] = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        message = message.get("message", message) if isinstance(message.get("message"), dict) else message
        parts = message.get("parts")
        if isinstance(parts, list):
            for part in parts:
                if not isinstance(part, dict):
                    continue
                kind = part.get("type")
                if kind == "text" and isinstance(part.get("content"), str) and part["content"]:
                    texts.append(part["content"])
                elif kind == "tool_call" and str_value(part.get("name")):
                    calls.append((str_value(part.get("id")), part["name"], json_or_text(part.get("arguments"))))
            continue
        content = _content_text(message.get("content"))
        if content:
            texts.append(content)
        tool_calls = message.get("tool_calls")
        for call in tool_calls if isinstance(tool_calls, list) else []:
            if not isinstance(call, dict):
                continue
            function: dict[str, Any] = call["function"] if isinstance(call.get("function"), dict) else call
            name = str_value(function.get("name"))
            if name:
                calls.append((str_value(call.get("id")), name, json_or_text(function.get("arguments"))))
    return texts, calls


def messages_text(value: object) -> str | None:
    """The text of messages an agent was asked or answered: GenAI's `parts` messages (JSON
    text or decoded) joined by line breaks; any other value as text."""
    decoded = value
    if isinstance(value, str):
        if not value.lstrip().startswith("["):
            return value
        try:
            decoded = parse_json_text(value)
        except ValueError:
            return value
    if isinstance(decoded, list) and all(isinstance(m, dict) and "parts" in m for m in decoded):
        texts, _ = _json_output(decoded)
        return "\n".join(texts) if texts else None
    return text_value(value)


def tool_result(output: object) -> tuple[str | None, str | None]:
    """A tool's result text and the call id it answers, from `output.value`: plain text,
    a serialized tool message, or a LangGraph command whose `update` holds tool messages."""
    if output is None:
        return None, None
    if not isinstance(output, str):
        return text_value(output), None
    stripped = output.lstrip()
    if not stripped.startswith("{"):
        return output, None
    try:
        value = parse_json_text(output)
    except ValueError:
        return output, None
    message = _tool_message(value)
    if message is not None:
        return message
    if isinstance(value, dict) and "update" in value:
        found = [m for m in map(_tool_message, _update_items(value["update"])) if m is not None]
        if found:
            ids = {i for _, i in found if i}
            return "\n".join(t for t, _ in found if t is not None), (ids.pop() if len(ids) == 1 else None)
    return output, None


def _update_items(update: object) -> list[object]:
    """The messages in a command's `update` (a dict of channels, or a list of pairs)."""
    values: list[object] = []
    if isinstance(update, dict):
        values = list(update.values())
    elif isinstance(update, list):
        values = [p[1] for p in update if isinstance(p, list | tuple) and len(p) == 2]
    items: list[object] = []
    for v in values:
        items.extend(v if isinstance(v, list) else [v])
    return items


def _tool_message(value: object) -> tuple[str | None, str | None] | None:
    """(content, tool_call_id) of a serialized tool message, in any of LangChain's forms."""
    if not isinstance(value, dict):
        return None
    if value.get("type") == "tool" and isinstance(value.get("data"), dict):
        body = value["data"]
    elif value.get("type") == "tool" and "content" in value:
        body = value
    elif value.get("lc") == 1 and isinstance(value.get("kwargs"), dict) and value["kwargs"].get("type") == "tool":
        body = value["kwargs"]
    else:
        return None
    return _content_text(body.get("content")), str_value(body.get("tool_call_id"))


def _content_text(content: object) -> str | None:
    """A message's content: its text, or its text blocks joined by line breaks."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [text for text in map(_block_text, content) if text is not None]
        if parts:
            return "\n".join(parts)
    return text_value(content)


def _block_text(block: object) -> str | None:
    """A content block's text: a plain string, or the `text` of a block mapping."""
    if isinstance(block, str):
        return block
    if isinstance(block, dict):
        text = block.get("text")
        if isinstance(text, str):
            return text
    return None


def json_or_text(value: object) -> Any:
    """JSON text parsed (kept as text when nested deeper than spans.MAX_DEPTH), other text as is."""
    if isinstance(value, str):
        s = value.lstrip()
        if s[:1] in ("{", "[", '"') or s in ("true", "false", "null") or s[:1].isdigit():
            try:
                return parse_json_text(value)
            except ValueError:
                return value
    return value


def text_value(value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def str_value(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def a2a_state(value: object) -> str | None:
    """An A2A task state as the protocol spells it in JSON (`input-required`), whether the
    span holds that or the protobuf enum name (`TASK_STATE_INPUT_REQUIRED`, bat-adk)."""
    text = str_value(value)
    return None if text is None else a2a_state_name(text)
