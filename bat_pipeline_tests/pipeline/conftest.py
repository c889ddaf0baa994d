"""Fixtures of the end-to-end tests: one scripted model server for the session, trimmed
copies of the example agent in tmp dirs, and the environment of the processes under test."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bat_pipeline.resources.scripted_llm import start_scripted_llm
from bat_pipeline_tests.pipeline.support import copy_agent, pipeline_env


@dataclass
class Workspace:
    """One trimmed agent copy, the storage root its results go to, and the environment."""

    agent: Path
    root: Path
    env: dict[str, str]
    llm_url: str

    @property
    def dagster_home(self) -> Path:
        return Path(self.env["DAGSTER_HOME"])

    @property
    def warehouse(self):
        from bat_pipeline.resources.warehouse import Warehouse

        return Warehouse(self.root / "warehouse.duckdb")


@pytest.fixture(scope="session")
def llm_url() -> Iterator[str]:
    """A scripted model server process (models and judge) for every test of the session."""
    process, url = start_scripted_llm()
    try:
        yield url
    finally:
        process.terminate()
        process.wait(10)


def make_workspace(tmp: Path, llm_url: str, **copy_options) -> Workspace:
    agent = copy_agent(tmp / "weather_agent", **copy_options)
    root = tmp / "pipeline_home"
    return Workspace(agent=agent, root=root, env=pipeline_env(agent, root, llm_url), llm_url=llm_url)


@pytest.fixture(scope="session")
def workspace_factory(tmp_path_factory: pytest.TempPathFactory, llm_url: str):
    """`make(name, **copy_agent options)` → a fresh Workspace in its own tmp dir."""
    def make(name: str, **copy_options) -> Workspace:
        return make_workspace(tmp_path_factory.mktemp(name), llm_url, **copy_options)
    return make
