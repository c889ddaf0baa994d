"""Which wire format and endpoint each provider of SPEC §2 uses."""

from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import urlsplit

from bat_pipeline.engine.environment import VERTEX_LOCATION_ENV, VERTEX_PROJECT_ENV
from bat_pipeline.resources.llm.anthropic_messages import AnthropicMessages
from bat_pipeline.resources.llm.google_generate import GOOGLE_AI_BASE, GoogleGenerate, Place, vertex_base
from bat_pipeline.resources.llm.openai_chat import OpenAIChat
from bat_pipeline.resources.llm.wire import WireFormat

DEFAULT_BASE_URLS = {
    "openai": "https://api.openai.com/v1",
    "deepseek": "https://api.deepseek.com/v1",
    "nvidia": "https://integrate.api.nvidia.com/v1",
    "ollama": "http://localhost:11434/v1",
    "anthropic": "https://api.anthropic.com",
    "gemini": GOOGLE_AI_BASE,
}
"""Where each provider is asked when no `base_url` is given (Vertex AI: by location)."""
BASE_URL_ENV = {"gemini": "GOOGLE_GEMINI_BASE_URL", "vertex": "GOOGLE_VERTEX_BASE_URL"}
"""Where Google's Gen AI SDK reads another host for each API; used when no `base_url` is
given (a proxy, or a test's local server)."""
DEFAULT_VERTEX_LOCATION = "global"
"""Vertex AI's location without GOOGLE_CLOUD_LOCATION (the Gen AI SDK's default)."""


def vertex_place(environ: Mapping[str, str] | None = None) -> Place:
    """The project and location of Vertex AI from `environ` (default `os.environ`):
    GOOGLE_CLOUD_PROJECT, GOOGLE_CLOUD_LOCATION (default `global`). Raises ValueError
    naming the variable when the project is not set."""
    environ = os.environ if environ is None else environ
    project = (environ.get(VERTEX_PROJECT_ENV) or "").strip()
    if not project:
        raise ValueError(
            f"a vertex model needs its Google Cloud project: set {VERTEX_PROJECT_ENV} "
            "(an EvalBench model config's gcp_project_id sets it)"
        )
    return Place(project, (environ.get(VERTEX_LOCATION_ENV) or "").strip() or DEFAULT_VERTEX_LOCATION)


def wire_format(provider: str, environ: Mapping[str, str] | None = None) -> WireFormat:
    """Anthropic's own format for `anthropic`, Google's generateContent for `gemini` and
    `vertex` (whose project and location are read from `environ`, see vertex_place),
    OpenAI's chat completions for the others."""
    if provider == "anthropic":
        return AnthropicMessages()
    if provider == "gemini":
        return GoogleGenerate()
    if provider == "vertex":
        return GoogleGenerate(vertex_place(environ))
    return OpenAIChat()


def endpoint_url(provider: str, base_url: str | None, model: str = "", environ: Mapping[str, str] | None = None) -> str:
    """The URL `model` of a provider is asked at, from an optional base (see each
    format's `url`; for `gemini` and `vertex` without one, BASE_URL_ENV in `environ`).
    Raises ValueError for a base that is not an http(s) URL, or a vertex model without
    its project."""
    wire = wire_format(provider, environ)
    overridden = (os.environ if environ is None else environ).get(BASE_URL_ENV.get(provider, ""), "")
    if base_url or overridden:
        base = base_url or overridden
    elif isinstance(wire, GoogleGenerate) and wire.place is not None:
        base = vertex_base(wire.place.location)
    else:
        base = DEFAULT_BASE_URLS[provider]
    base = base.strip().rstrip("/")
    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"base_url must be an http(s) URL such as http://localhost:11434, got '{base_url}'")
    return wire.url(base, model)
