"""Shared real processes: one scripted model server, a competent and a sloppy agent."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from bat_pipeline.resources.scripted_llm import start_scripted_llm
from bat_pipeline_tests.example.processes import Agent, launch_agent


class LLMControl:
    """Drives a scripted model server subprocess over `/_control` and `/_stats`."""

    def __init__(self, url: str) -> None:
        self.url = url

    def set(self, **knobs: object) -> None:
        httpx.post(self.url + "/_control", json=knobs).raise_for_status()

    def reset(self) -> None:
        self.set(reset=True)

    def stats(self) -> dict:
        return httpx.get(self.url + "/_stats").json()


@pytest.fixture(scope="session")
def llm() -> Iterator[LLMControl]:
    proc, url = start_scripted_llm()
    assert url.startswith("http://127.0.0.1:"), url
    try:
        yield LLMControl(url)
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture(scope="session")
def agents(llm: LLMControl, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Agent]]:
    tmp = tmp_path_factory.mktemp("agents")
    started = {"competent": launch_agent(tmp, llm.url, "competent"), "sloppy": launch_agent(tmp, llm.url, "sloppy")}
    try:
        for agent in started.values():
            agent.wait_ready()
        yield started
    finally:
        for agent in started.values():
            agent.stop()
