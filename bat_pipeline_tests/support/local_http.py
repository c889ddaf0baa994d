"""HTTP from the tests to the servers they start on 127.0.0.1, with the pipeline's one TLS
context (bat_pipeline.resources.tls): httpx otherwise builds a context for the client of
each request, reading the whole CA bundle (about 25 ms of CPU), and the tests poll an
agent's or a server's readiness every 50 ms while it starts on the same two cores."""

from __future__ import annotations

from typing import Any

import httpx

from bat_pipeline.resources.tls import tls_context


def get(url: str, **options: Any) -> httpx.Response:
    return httpx.get(url, verify=tls_context(), **options)


def post(url: str, **options: Any) -> httpx.Response:
    return httpx.post(url, verify=tls_context(), **options)


def async_client(**options: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(verify=tls_context(), **options)
