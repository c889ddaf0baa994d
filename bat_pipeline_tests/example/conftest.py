"""The example agent as two long-lived processes, a competent and a sloppy one, on the
session's scripted model server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bat_pipeline_tests.support.example_agent import Agent, launch_agent
from bat_pipeline_tests.support.scripted import ScriptedServer


@pytest.fixture(scope="session")
def agents(scripted_llm: ScriptedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Agent]]:
    tmp = tmp_path_factory.mktemp("agents")
    started = {
        "competent": launch_agent(tmp, scripted_llm.url, "competent"),
        "sloppy": launch_agent(tmp, scripted_llm.url, "sloppy"),
    }
    try:
        for agent in started.values():
            agent.wait_ready()
        yield started
    finally:
        # Both at once: each flushes its spans and stops its Forecaster before it exits.
        for agent in started.values():
            agent.terminate()
        for agent in started.values():
            agent.stop()
