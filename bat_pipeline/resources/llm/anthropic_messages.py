"""Anthropic messages (`anthropic`).

`POST <base>/v1/messages` with `x-api-key` and `anthropic-version`; system messages go in
`system`; structured output as a forced tool whose input schema is the answer's.
"""

from __future__ import annotations

import json
from typing import Any

from bat_pipeline.resources.llm.wire import ChatRequest

VERSION = "2023-06-01"
"""The Messages API version header; Anthropic requires one on every request."""
MAX_TOKENS = 2048
"""Anthropic requires `max_tokens`; the answers asked here are a few sentences."""
ANSWER_TOOL = "record_answer"
"""The tool the model is made to call with the answer, in structured mode."""


class AnthropicMessages:
    """The wire format (llm.wire.WireFormat) of the Anthropic Messages API."""

    def url(self, base: str, model: str = "") -> str:
        """A trailing `/v1` or `/v1/messages` is dropped, then `/v1/messages` appended."""
        for suffix in ("/v1/messages", "/v1"):
            if base.endswith(suffix):
                base = base[: -len(suffix)]
                break
        return f"{base}/v1/messages"

    def headers(self, key: str | None) -> dict[str, str]:
        headers = {"anthropic-version": VERSION}
        if key:
            headers["x-api-key"] = key
        return headers

    def body(self, request: ChatRequest) -> dict[str, Any]:
        messages = request.messages
        body: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_tokens if request.max_tokens is not None else MAX_TOKENS,
            "system": "\n\n".join(m["content"] for m in messages if m["role"] == "system"),
            "messages": [m for m in messages if m["role"] != "system"],
        }
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.schema is not None:
            body["tools"] = [
                {
                    "name": ANSWER_TOOL,
                    "input_schema": request.schema,
                    "description": f"Record the answer ({request.schema_name}) in the required shape.",
                }
            ]
            body["tool_choice"] = {"type": "tool", "name": ANSWER_TOOL}
        return body

    def answer_text(self, data: Any) -> str:
        """A tool call's input as JSON text, else the text blocks joined."""
        blocks = data.get("content") if isinstance(data, dict) else None
        blocks = blocks if isinstance(blocks, list) else []
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "tool_use" and isinstance(block.get("input"), dict):
                return json.dumps(block["input"], ensure_ascii=False)
        return "".join(b.get("text") or "" for b in blocks if isinstance(b, dict) and b.get("type") == "text")
