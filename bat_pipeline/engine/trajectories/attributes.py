"""What instrumentations (OpenInference, OpenTelemetry GenAI, LangChain) put in span
attributes, read into plain values."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from bat_pipeline.engine.conversation import a2a_state_name
from bat_pipeline.engine.spans import parse_json_text

THINK_END = "</think>"
_OUT = "llm.output_messages."


def llm_output(a: Mapping[str, Any]) -> tuple[str | None, list[tuple[str | None, str, Any]]]:
    """What the model said (after a final `</think>`) and the tool calls it decided.

    Probes `llm.output_messages.<i>...` for i, j = 0, 1, ... (OpenInference numbers them
    without gaps) rather than scanning every attribute: a model span also carries the
    whole input history.
    """
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
    said = "\n".join(texts)
    if THINK_END in said:
        said = said.rsplit(THINK_END, 1)[1]
    said = said.strip()
    return (said or None), calls


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
