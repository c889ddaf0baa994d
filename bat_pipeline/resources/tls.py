"""One TLS context per process for every HTTP client the pipeline opens.

httpx builds a fresh context for each client it creates — reading the whole CA bundle,
tens of milliseconds of CPU — and one partition opens several (the agent's readiness
probe, the conversations, the judge, LLM targets), mostly to plain-HTTP servers on
127.0.0.1. The context is httpx's own default (certifi's bundle, or SSL_CERT_FILE /
SSL_CERT_DIR), made on first use; a forked partition inherits it."""

from __future__ import annotations

import functools
import ssl

import httpx


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The `verify=` every httpx client of the pipeline is given."""
    return httpx.create_ssl_context()
