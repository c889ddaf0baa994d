"""Google's generateContent (`gemini`: the Google AI API; `vertex`: Vertex AI).

- `gemini`: `POST <base>/v1beta/models/{model}:generateContent` with the API key in
  `x-goog-api-key` (base `https://generativelanguage.googleapis.com`);
- `vertex`: `POST <base>/v1/projects/{project}/locations/{location}/publishers/google/
  models/{model}:generateContent` with `Authorization: Bearer <access token>` (base
  `https://{location}-aiplatform.googleapis.com`, `https://aiplatform.googleapis.com` for
  the `global` location).

System messages go in `systemInstruction`, assistant turns are the `model` role;
structured output is `responseMimeType: application/json` with the schema as
`responseJsonSchema` (JSON Schema as written, not the OpenAPI subset of `responseSchema`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bat_pipeline.resources.llm.wire import ChatRequest, UnreadableAnswer

GOOGLE_AI_BASE = "https://generativelanguage.googleapis.com"
GOOGLE_AI_VERSION = "v1beta"
VERTEX_VERSION = "v1"
_BLOCKED = ("SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "LANGUAGE", "IMAGE_SAFETY")
"""finishReasons of a candidate Google withheld: an answer refused, not an empty one."""


def vertex_base(location: str) -> str:
    """Vertex AI's host for a location (`global` has no regional prefix)."""
    return (
        "https://aiplatform.googleapis.com" if location == "global" else f"https://{location}-aiplatform.googleapis.com"
    )


@dataclass(frozen=True)
class Place:
    """Where a Vertex model is: the Google Cloud project and location."""

    project: str
    location: str


class GoogleGenerate:
    """The wire format (llm.wire.WireFormat) of generateContent; `place` is None for the
    Google AI API, a project and location for Vertex AI."""

    def __init__(self, place: Place | None = None) -> None:
        self.place = place

    def url(self, base: str, model: str = "") -> str:
        """The model's `:generateContent` under `base`; a base that already ends with the
        API version (`…/v1beta`, `…/v1`) keeps it."""
        model = model.removeprefix("models/")
        if self.place is None:
            root = base if base.endswith(f"/{GOOGLE_AI_VERSION}") else f"{base}/{GOOGLE_AI_VERSION}"
            return f"{root}/models/{model}:generateContent"
        root = base if base.endswith(f"/{VERTEX_VERSION}") else f"{base}/{VERTEX_VERSION}"
        where = f"projects/{self.place.project}/locations/{self.place.location}"
        return f"{root}/{where}/publishers/google/models/{model}:generateContent"

    def headers(self, key: str | None) -> dict[str, str]:
        if not key:
            return {}
        return {"x-goog-api-key": key} if self.place is None else {"Authorization": f"Bearer {key}"}

    def body(self, request: ChatRequest) -> dict[str, Any]:
        system = "\n\n".join(m["content"] for m in request.messages if m["role"] == "system")
        contents = [
            {"role": "model" if m["role"] == "assistant" else "user", "parts": [{"text": m["content"]}]}
            for m in request.messages
            if m["role"] != "system"
        ]
        body: dict[str, Any] = {"contents": contents}
        if system:
            body["systemInstruction"] = {"parts": [{"text": system}]}
        config: dict[str, Any] = {}
        if request.temperature is not None:
            config["temperature"] = request.temperature
        if request.max_tokens is not None:
            config["maxOutputTokens"] = request.max_tokens
        if request.schema is not None:
            config["responseMimeType"] = "application/json"
            config["responseJsonSchema"] = request.schema
        if config:
            body["generationConfig"] = config
        return body

    def answer_text(self, data: Any) -> str:
        """The first candidate's text parts joined (thought parts left out); a prompt or a
        candidate Google blocked is unreadable, with the reason."""
        if not isinstance(data, dict):
            raise UnreadableAnswer("the response is not a JSON object", str(data))
        candidates = data.get("candidates")
        if not isinstance(candidates, list) or not candidates or not isinstance(candidates[0], dict):
            feedback = data.get("promptFeedback")
            reason = feedback.get("blockReason") if isinstance(feedback, dict) else None
            if reason:
                raise UnreadableAnswer(f"the prompt was blocked ({reason})", str(feedback))
            raise UnreadableAnswer("the response has no candidates", str(data))
        candidate = candidates[0]
        content = candidate.get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        text = "".join(
            p.get("text") or ""
            for p in (parts if isinstance(parts, list) else [])
            if isinstance(p, dict) and not p.get("thought")
        )
        finish = candidate.get("finishReason")
        if not text.strip() and finish in _BLOCKED:
            raise UnreadableAnswer(f"the model refused (finishReason {finish})", str(candidate))
        return text


def usage_counts(data: Any) -> tuple[int, int, int] | None:
    """(prompt, output, cached) tokens from `usageMetadata`; None without it."""
    meta = data.get("usageMetadata") if isinstance(data, dict) else None
    if not isinstance(meta, dict):
        return None

    def number(name: str) -> int:
        value = meta.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    return number("promptTokenCount"), number("candidatesTokenCount"), number("cachedContentTokenCount")
