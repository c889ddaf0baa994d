"""Which wire format and endpoint each provider of SPEC §2 uses."""

from __future__ import annotations

from urllib.parse import urlsplit

from bat_pipeline.resources.llm.anthropic_messages import AnthropicMessages
from bat_pipeline.resources.llm.openai_chat import OpenAIChat
from bat_pipeline.resources.llm.wire import WireFormat

DEFAULT_BASE_URLS = {
    "openai": "https://api.openai.com/v1",
    "deepseek": "https://api.deepseek.com/v1",
    "nvidia": "https://integrate.api.nvidia.com/v1",
    "ollama": "http://localhost:11434/v1",
    "anthropic": "https://api.anthropic.com",
}
"""Where each provider is asked when no `base_url` is given."""


def wire_format(provider: str) -> WireFormat:
    """Anthropic's own format for `anthropic`, OpenAI's chat completions for the others."""
    return AnthropicMessages() if provider == "anthropic" else OpenAIChat()


def endpoint_url(provider: str, base_url: str | None) -> str:
    """The URL a provider is asked at, from an optional base (see each format's `url`).
    Raises ValueError for a base that is not an http(s) URL."""
    base = (base_url or DEFAULT_BASE_URLS[provider]).strip().rstrip("/")
    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"base_url must be an http(s) URL such as http://localhost:11434, got '{base_url}'")
    return wire_format(provider).url(base)
