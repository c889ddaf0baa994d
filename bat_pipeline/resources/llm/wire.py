"""What every wire format shares: the shape a format implements, and reading errors.

Texts returned here are not shortened or redacted: a caller holding secrets redacts
before it shortens, so a cut can never leave part of a key behind.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Protocol

import httpx

from bat_pipeline.engine.contracts.config import MAX_ANSWER_BYTES

__all__ = ["MAX_ANSWER_BYTES"]

RETRY_AFTER_CAP_S = 60.0
"""Longest wait honoured from a `Retry-After` header."""

_STRUCTURED_REJECTION = re.compile(
    r"response_format|json_schema|json schema|structured|tool_choice|tools?\b|not supported|"
    r"unsupported|not implemented|unknown (?:field|parameter|name)|unrecognized|extra inputs|responseJsonSchema",
    re.IGNORECASE,
)
"""What a 400/422 says when the server cannot do structured output (OpenAI-compatible
servers without json_schema, e.g. DeepSeek; vLLM/llama.cpp builds without it)."""


class UnreadableAnswer(ValueError):
    """A successful HTTP response without a usable answer text. `quote` is the part of
    the response worth showing, unredacted and unshortened."""

    def __init__(self, message: str, quote: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.quote = quote


@dataclass(frozen=True)
class ChatRequest:
    """What is asked of a model, whatever the wire format."""

    model: str
    messages: list[dict[str, str]]
    """Chat messages, `{"role": system|user|assistant, "content": text}`."""
    schema: dict[str, Any] | None = None
    """The answer asked as structured output of this JSON schema; None: plain text."""
    schema_name: str = "answer"
    """What the answer's shape is called, where the format names it."""
    temperature: float | None = None
    """None leaves the server's default."""
    max_tokens: int | None = None
    """The longest answer asked for; None leaves the format's default."""


class WireFormat(Protocol):
    """One API's request and answer shapes."""

    def url(self, base: str, model: str = "") -> str:
        """The endpoint under `base` (an http(s) URL without a trailing slash) for
        `model` (only formats that name the model in the URL use it)."""

    def headers(self, key: str | None) -> dict[str, str]:
        """Headers of every request; the key's header only when there is a key."""

    def body(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body asking `request`."""

    def answer_text(self, data: Any) -> str:
        """The answer as text (a structured answer as its JSON text) from the decoded
        response; raises UnreadableAnswer when there is none."""


class AnswerTooLarge(Exception):
    """A response body longer than the limit it was read with; the rest was never read."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the answer is longer than {limit} bytes (max_answer_bytes): cut there and not used")
        self.limit = limit


_DROPPED_HEADERS = ("content-encoding", "content-length", "transfer-encoding")


async def post_capped(http: httpx.AsyncClient, url: str, *, json: Any, limit: int) -> httpx.Response:
    """POST `json` to `url`, reading at most `limit` bytes of the (decoded) body: the
    response with its body read. Raises AnswerTooLarge, the connection closed with the
    rest unread, when the body is longer (a compressed one is counted as it inflates)."""
    async with http.stream("POST", url, json=json) as response:
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > limit:
                raise AnswerTooLarge(limit)
            chunks.append(chunk)
    headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in _DROPPED_HEADERS]
    return httpx.Response(response.status_code, headers=headers, content=b"".join(chunks), request=response.request)


def response_text(wire: WireFormat, response: httpx.Response) -> str:
    """The answer text of a successful response; raises UnreadableAnswer (not JSON, no
    message, a refusal, empty)."""
    try:
        data = response.json()
    except ValueError:
        raise UnreadableAnswer("the response is not JSON", response.text) from None
    text = wire.answer_text(data)
    if not text.strip():
        raise UnreadableAnswer("the answer is empty")
    return text


def token_usage(response: httpx.Response) -> tuple[int, int]:
    """(prompt, completion) tokens of a response as its `usage` reports them: OpenAI's
    `prompt_tokens`/`completion_tokens`, Anthropic's `input_tokens`/`output_tokens`,
    Google's `usageMetadata`; (0, 0) when it says nothing."""
    try:
        data = response.json()
        usage = data.get("usage")
    except (ValueError, AttributeError):
        return 0, 0
    if usage is None and isinstance(data.get("usageMetadata"), dict):
        usage = {
            "prompt_tokens": data["usageMetadata"].get("promptTokenCount"),
            "completion_tokens": data["usageMetadata"].get("candidatesTokenCount"),
        }
    if not isinstance(usage, dict):
        return 0, 0

    def number(*names: str) -> int:
        for name in names:
            value = usage.get(name)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        return 0

    return number("prompt_tokens", "input_tokens"), number("completion_tokens", "output_tokens")


def error_detail(response: httpx.Response) -> str:
    """The server's error message (`error.message`, `message`, `detail`, else the body)."""
    try:
        data = response.json()
    except ValueError:
        return response.text or response.reason_phrase
    message: Any = data
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict):
            message = error.get("message") or error
        elif error:
            message = error
        else:
            message = data.get("message") or data.get("detail") or data
    return message if isinstance(message, str) else json.dumps(message, ensure_ascii=False)


def refuses_structured_output(status: int, detail: str) -> bool:
    """Whether an error response says the server cannot give structured output."""
    return status in (400, 404, 422) and bool(_STRUCTURED_REJECTION.search(detail))


def refuses_temperature(status: int, detail: str) -> bool:
    """Whether the server refused the temperature parameter (reasoning models accept only
    their default)."""
    return status in (400, 422) and "temperature" in detail.lower()


def worth_retrying(status: int) -> bool:
    """Rate limits, request timeouts and server errors pass; asking again may work."""
    return status in (408, 429) or status >= 500


def retry_after(value: str | None) -> float | None:
    """Seconds to wait from a `Retry-After` header (seconds or an HTTP date), capped."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    if seconds != seconds:  # NaN
        return None
    return min(max(seconds, 0.0), RETRY_AFTER_CAP_S)


def clip(text: str, limit: int = 300) -> str:
    """One line of at most `limit` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
