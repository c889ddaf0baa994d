"""Chat model calls over HTTP: OpenAI chat completions or Anthropic messages.

History is kept in OpenAI's message shape and converted for Anthropic.
`BASE_URL` conventions follow each vendor's SDK: for OpenAI-compatible providers it includes
`/v1` (the client appends `/chat/completions`; for `ollama` a missing `/v1` is added); for
`anthropic` it is the bare host (the client appends `/v1/messages`; a trailing `/v1` is
tolerated).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

import httpx

OPENAI_LIKE = {"openai", "ollama", "deepseek", "nvidia"}
DEFAULT_BASE = {
    "openai": "https://api.openai.com/v1",
    "ollama": "http://localhost:11434/v1",
    "deepseek": "https://api.deepseek.com/v1",
    "nvidia": "https://integrate.api.nvidia.com/v1",
    "anthropic": "https://api.anthropic.com",
}
KEY_ENV = {
    "openai": "OPENAI_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "nvidia": "NVIDIA_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "ollama": "OLLAMA_API_KEY",
}


class ModelError(RuntimeError):
    """The model provider answered with an error or something unreadable."""


@dataclass
class ModelTurn:
    """One model answer: text, tool calls `{id, name, arguments}` and token usage."""

    text: str
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0

    def as_message(self) -> dict[str, Any]:
        """The assistant message to append to the history (OpenAI shape)."""
        message: dict[str, Any] = {"role": "assistant", "content": self.text}
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
                }
                for c in self.tool_calls
            ]
        return message


class ModelClient:
    """Calls one model of one provider."""

    def __init__(self, provider: str, model: str, base_url: str | None, timeout_s: float = 60.0) -> None:
        if provider not in OPENAI_LIKE and provider != "anthropic":
            raise ValueError(
                f"unknown MODEL_PROVIDER {provider!r}; use one of {', '.join(sorted(OPENAI_LIKE | {'anthropic'}))}"
            )
        self.provider, self.model = provider, model
        base = (base_url or DEFAULT_BASE[provider]).rstrip("/")
        if provider == "anthropic":
            self.url = base.removesuffix("/v1") + "/v1/messages"
        else:
            if provider == "ollama" and not base.endswith("/v1"):
                base += "/v1"
            self.url = base + "/chat/completions"
        self.key = os.environ.get(KEY_ENV[provider], "")
        self.http = httpx.AsyncClient(timeout=timeout_s)

    async def aclose(self) -> None:
        await self.http.aclose()

    async def complete(self, system: str, history: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelTurn:
        """One model call; raises `ModelError` on an HTTP error or an unreadable answer."""
        if self.provider == "anthropic":
            headers = {"x-api-key": self.key, "anthropic-version": "2023-06-01"}
            body = {
                "model": self.model,
                "max_tokens": 1024,
                "system": system,
                "messages": to_anthropic(history),
                "tools": [
                    {
                        "name": t["function"]["name"],
                        "description": t["function"].get("description", ""),
                        "input_schema": t["function"]["parameters"],
                    }
                    for t in tools
                ],
            }
        else:
            headers = {"Authorization": f"Bearer {self.key or 'none'}"}
            body = {"model": self.model, "messages": [{"role": "system", "content": system}, *history], "tools": tools}
        try:
            response = await self.http.post(self.url, json=body, headers=headers)
        except httpx.HTTPError as exc:
            raise ModelError(f"{type(exc).__name__} calling {self.url}: {exc}") from exc
        if response.status_code >= 400:
            raise ModelError(f"HTTP {response.status_code} from {self.url}: {response.text[:500]}")
        try:
            data = response.json()
            return read_anthropic(data) if self.provider == "anthropic" else read_openai(data)
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ModelError(f"unreadable answer from {self.url}: {response.text[:200]!r}") from exc


def read_openai(data: dict[str, Any]) -> ModelTurn:
    message = data["choices"][0]["message"]
    calls = [
        {"id": c["id"], "name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"] or "{}")}
        for c in message.get("tool_calls") or []
    ]
    usage = data.get("usage") or {}
    return ModelTurn(
        text=message.get("content") or "",
        tool_calls=calls,
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        cached_tokens=int((usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0),
        reasoning_tokens=int((usage.get("completion_tokens_details") or {}).get("reasoning_tokens") or 0),
    )


def read_anthropic(data: dict[str, Any]) -> ModelTurn:
    text = "".join(b.get("text", "") for b in data["content"] if b.get("type") == "text")
    calls = [
        {"id": b["id"], "name": b["name"], "arguments": b.get("input") or {}}
        for b in data["content"]
        if b.get("type") == "tool_use"
    ]
    usage = data.get("usage") or {}
    cached = int(usage.get("cache_read_input_tokens") or 0)
    # Anthropic's input_tokens leaves out cache reads; the prompt is both.
    return ModelTurn(
        text=text,
        tool_calls=calls,
        prompt_tokens=int(usage.get("input_tokens") or 0) + cached,
        completion_tokens=int(usage.get("output_tokens") or 0),
        cached_tokens=cached,
    )


def to_anthropic(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI-shaped history as Anthropic messages (tool results become user blocks)."""
    out: list[dict[str, Any]] = []
    for message in history:
        role = message["role"]
        if role == "tool":
            block = {"type": "tool_result", "tool_use_id": message["tool_call_id"], "content": message["content"]}
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
        elif role == "assistant" and message.get("tool_calls"):
            blocks: list[dict[str, Any]] = [{"type": "text", "text": message["content"]}] if message["content"] else []
            blocks += [
                {
                    "type": "tool_use",
                    "id": c["id"],
                    "name": c["function"]["name"],
                    "input": json.loads(c["function"]["arguments"]),
                }
                for c in message["tool_calls"]
            ]
            out.append({"role": "assistant", "content": blocks})
        else:
            out.append({"role": role, "content": message["content"]})
    return out
