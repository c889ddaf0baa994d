"""What the EvalBench tests share: EvalBench's own Vertex Gemini model config (the corpus's
judge and simulated user) asked at the scripted server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bat_pipeline_tests.support.scripted import ScriptedServer

VERTEX_GEMINI = "gemini-3.1-pro-preview"
"""The model the corpus's `gcp_vertex_gemini` model config names."""


@pytest.fixture
def vertex(scripted_llm: ScriptedServer) -> Iterator[dict[str, str]]:
    """The environment pointing that Vertex model at the scripted server (Vertex's
    generateContent, a scripted access token), which answers the model's name as its judge
    (and simulated user)."""
    with scripted_llm.restoring():
        scripted_llm.set_model(VERTEX_GEMINI, persona="judge")
        yield {"GOOGLE_VERTEX_BASE_URL": scripted_llm.url, "GOOGLE_OAUTH_ACCESS_TOKEN": "ya29.scripted"}
