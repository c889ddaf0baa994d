"""OpenAI-compatible chat completions (`openai`, `deepseek`, `nvidia`, `ollama`).

`POST <base>/chat/completions` with `Authorization: Bearer <key>` (no header without a
key: a local ollama needs none); structured output as `response_format: {type:
json_schema}`, strict.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from bat_pipeline.resources.llm.wire import ChatRequest, UnreadableAnswer

PATH = "/chat/completions"


class OpenAIChat:
    """The wire format (llm.wire.WireFormat) of OpenAI-compatible servers."""

    def url(self, base: str, model: str = "") -> str:
        """A base without a path gets `/v1` (`http://localhost:11434` →
        `…:11434/v1/chat/completions`); a base with a path is used as given (`…/v1`,
        `…/v1beta/openai`); a trailing `/chat/completions` is dropped first."""
        if base.endswith(PATH):
            base = base[: -len(PATH)]
        if urlsplit(base).path in ("", "/"):
            base += "/v1"
        return base + PATH

    def headers(self, key: str | None) -> dict[str, str]:
        return {"Authorization": f"Bearer {key}"} if key else {}

    def body(self, request: ChatRequest) -> dict[str, Any]:
        body: dict[str, Any] = {"model": request.model, "messages": request.messages}
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        if request.schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": _schema_name(request.schema_name), "schema": request.schema, "strict": True},
            }
        return body

    def answer_text(self, data: Any) -> str:
        """The first choice's message content (parts joined); a refusal with no content
        is unreadable."""
        choices = data.get("choices") if isinstance(data, dict) else None
        message = (choices[0] or {}).get("message") if isinstance(choices, list) and choices else None
        if not isinstance(message, dict):
            raise UnreadableAnswer("the response has no message", str(data))
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(p.get("text") or "" for p in content if isinstance(p, dict))
        text = content if isinstance(content, str) else ""
        if not text.strip() and message.get("refusal"):
            raise UnreadableAnswer("the model refused", str(message["refusal"]))
        return text


def _schema_name(name: str) -> str:
    """A name OpenAI accepts for a json_schema: `[A-Za-z0-9_-]`, at most 64 characters."""
    name = "".join(c if c.isascii() and (c.isalnum() or c in "_-") else "_" for c in name)
    return name[:64] or "answer"
