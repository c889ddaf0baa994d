"""A `Reply` in the wire format of each API: OpenAI (JSON and SSE), Anthropic, Ollama, Google."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from bat_pipeline.example.scripted_llm.conversation import Conversation, count_tokens
from bat_pipeline.example.scripted_llm.reply import Reply

CREATED = 1_700_000_000


@dataclass
class Usage:
    prompt: int
    completion: int
    cached: int


def usage(conv: Conversation, body: dict[str, Any], reply: Reply) -> Usage:
    """Deterministic token counts from character counts.

    The cached share is the system text plus tool schemas once the conversation already holds
    an assistant turn (a prefix the provider would have seen before).
    """
    prompt = count_tokens(
        json.dumps(body.get("messages", body.get("contents", [])), ensure_ascii=False)
        + json.dumps(body.get("tools", []), ensure_ascii=False)
        + str(body.get("system", body.get("systemInstruction", "")))
    )
    said = reply.text + "".join(json.dumps(c.arguments) + c.name for c in reply.tool_calls)
    cached = 0
    if any(m.role == "assistant" for m in conv.messages):
        prefix = "".join(m.text for m in conv.messages if m.role == "system")
        cached = min(prompt, count_tokens(prefix + json.dumps(body.get("tools", []), ensure_ascii=False)))
    return Usage(prompt, count_tokens(said), cached)


def _openai_usage(u: Usage) -> dict[str, Any]:
    return {
        "prompt_tokens": u.prompt,
        "completion_tokens": u.completion,
        "total_tokens": u.prompt + u.completion,
        "prompt_tokens_details": {"cached_tokens": u.cached},
        "completion_tokens_details": {"reasoning_tokens": 0},
    }


def _completion_id(conv: Conversation) -> str:
    return f"chatcmpl-scripted-{conv.fingerprint()[:12]}"


def openai_json(conv: Conversation, reply: Reply, u: Usage) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
            for c in reply.tool_calls
        ]
    return {
        "id": _completion_id(conv),
        "object": "chat.completion",
        "created": CREATED,
        "model": conv.model,
        "system_fingerprint": "scripted",
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
            }
        ],
        "usage": _openai_usage(u),
    }


def openai_chunks(conv: Conversation, reply: Reply, u: Usage, include_usage: bool) -> Iterator[str]:
    """SSE `data:` payloads of a streamed chat completion, ending with `[DONE]`."""
    base = {
        "id": _completion_id(conv),
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": conv.model,
        "system_fingerprint": "scripted",
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        return json.dumps(
            {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}
        )

    yield chunk({"role": "assistant", "content": ""})
    words = reply.text.split(" ")
    third = max(1, len(words) // 3)
    for start in range(0, len(words) if reply.text else 0, third):
        piece = " ".join(words[start : start + third])
        yield chunk({"content": piece if start == 0 else " " + piece})
    for i, c in enumerate(reply.tool_calls):
        yield chunk(
            {
                "tool_calls": [
                    {"index": i, "id": c.id, "type": "function", "function": {"name": c.name, "arguments": ""}}
                ]
            }
        )
        yield chunk({"tool_calls": [{"index": i, "function": {"arguments": json.dumps(c.arguments)}}]})
    yield chunk({}, "tool_calls" if reply.tool_calls else "stop")
    if include_usage:
        yield json.dumps({**base, "choices": [], "usage": _openai_usage(u)})
    yield "[DONE]"


def anthropic_json(conv: Conversation, reply: Reply, u: Usage) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if reply.text:
        content.append({"type": "text", "text": reply.text})
    content += [
        {"type": "tool_use", "id": c.id.replace("call_", "toolu_"), "name": c.name, "input": c.arguments}
        for c in reply.tool_calls
    ]
    return {
        "id": f"msg_scripted_{conv.fingerprint()[:12]}",
        "type": "message",
        "role": "assistant",
        "model": conv.model,
        "content": content,
        "stop_reason": "tool_use" if reply.tool_calls else "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": u.prompt - u.cached,
            "output_tokens": u.completion,
            "cache_read_input_tokens": u.cached,
            "cache_creation_input_tokens": 0,
        },
    }


def anthropic_events(conv: Conversation, reply: Reply, u: Usage) -> Iterator[tuple[str, str]]:
    """(event, data) pairs of a streamed Anthropic message."""
    whole = anthropic_json(conv, reply, u)
    start = {**whole, "content": [], "stop_reason": None, "usage": {**whole["usage"], "output_tokens": 0}}
    yield "message_start", json.dumps({"type": "message_start", "message": start})
    for i, block in enumerate(whole["content"]):
        opening: dict[str, object]
        delta: dict[str, str]
        if block["type"] == "text":
            opening, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
        else:
            opening = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield "content_block_start", json.dumps({"type": "content_block_start", "index": i, "content_block": opening})
        yield "content_block_delta", json.dumps({"type": "content_block_delta", "index": i, "delta": delta})
        yield "content_block_stop", json.dumps({"type": "content_block_stop", "index": i})
    yield (
        "message_delta",
        json.dumps(
            {
                "type": "message_delta",
                "delta": {"stop_reason": whole["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": u.completion},
            }
        ),
    )
    yield "message_stop", json.dumps({"type": "message_stop"})


def ollama_json(conv: Conversation, reply: Reply, u: Usage) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.tool_calls:
        message["tool_calls"] = [{"function": {"name": c.name, "arguments": c.arguments}} for c in reply.tool_calls]
    return {
        "model": conv.model,
        "created_at": "2023-11-14T22:13:20Z",
        "message": message,
        "done": True,
        "done_reason": "stop",
        "prompt_eval_count": u.prompt,
        "eval_count": u.completion,
    }


def google_json(conv: Conversation, reply: Reply, u: Usage) -> dict[str, Any]:
    """A generateContent response: one candidate, text and function-call parts."""
    parts: list[dict[str, Any]] = [{"text": reply.text}] if reply.text else []
    parts += [{"functionCall": {"name": c.name, "args": c.arguments}} for c in reply.tool_calls]
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {
            "promptTokenCount": u.prompt,
            "candidatesTokenCount": u.completion,
            "totalTokenCount": u.prompt + u.completion,
            "cachedContentTokenCount": u.cached,
        },
        "modelVersion": conv.model,
        "responseId": f"scripted-{conv.fingerprint()[:12]}",
    }


_GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    503: "UNAVAILABLE",
}


def error_body(api: str, status: int, message: str) -> dict[str, Any]:
    """An error in the API's own shape."""
    kind = {400: "invalid_request_error", 404: "not_found_error", 429: "rate_limit_error"}.get(status, "api_error")
    if api == "google":
        return {"error": {"code": status, "message": message, "status": _GOOGLE_STATUS.get(status, "INTERNAL")}}
    if api == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    if api == "ollama":
        return {"error": message}
    return {"error": {"message": message, "type": kind, "code": "scripted_error", "param": None}}
