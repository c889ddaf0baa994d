"""Workspaces of the end-to-end tests: a trimmed copy of the example agent in a tmp dir, the
storage root its results go to, and the environment of the processes under test."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from bat_pipeline_tests.support.example_agent import copy_example_agent, pipeline_env, run
from bat_pipeline_tests.support.paths import BAT_PIPELINE


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

    def bat_pipeline_run(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        """`bat-pipeline run <agent copy> [args]` to completion (`env`: in place of the workspace's)."""
        return run([str(BAT_PIPELINE), "run", str(self.agent), *args], env or self.env)

    def only_run_dir(self) -> Path:
        """The one run folder under the storage root."""
        runs = sorted((self.root / "runs").iterdir())
        assert len(runs) == 1, runs
        return runs[0]

    def pass_counts(self, run_id: str) -> dict[str, dict[str, int]]:
        """{model key: {task: attempts passed}} of a run, from the warehouse."""
        rows = self.warehouse.query(
            "SELECT model_key, task_id, sum(CASE WHEN passed THEN 1 ELSE 0 END) AS passed FROM episodes "
            "WHERE run_id = ? GROUP BY model_key, task_id",
            [run_id],
        )
        counts: dict[str, dict[str, int]] = {}
        for r in rows:
            counts.setdefault(r["model_key"], {})[r["task_id"]] = int(r["passed"])
        return counts


@pytest.fixture(scope="session")
def workspace_factory(tmp_path_factory: pytest.TempPathFactory, scripted_llm):
    """`make(name, **copy_example_agent options)` → a fresh Workspace in its own tmp dir."""

    def make(name: str, **copy_options) -> Workspace:
        tmp = tmp_path_factory.mktemp(name)
        agent = copy_example_agent(tmp / "weather_agent", **copy_options)
        root = tmp / "pipeline_home"
        return Workspace(
            agent=agent, root=root, env=pipeline_env(agent, root, scripted_llm.url), llm_url=scripted_llm.url
        )

    return make
