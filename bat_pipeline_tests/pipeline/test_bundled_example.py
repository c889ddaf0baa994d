"""The bundled example needs no environment variable but DAGSTER_HOME (issue 13): on a
trimmed copy, `bat-pipeline run` and the documented `dagster asset materialize` each start
the scripted model server for their runs (models and judge, the judge's key from the
example's .env) and leave no server or agent behind."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from bat_pipeline_tests.support.dagster_runs import materialize_command
from bat_pipeline_tests.support.example_agent import FEW_TASKS, copy_example_agent
from bat_pipeline_tests.support.paths import VENV_BIN
from bat_pipeline_tests.support.processes import leftover_agents, processes

pytestmark = pytest.mark.slow(seconds=13)

MODEL = "openai-competent"
SCRIPTED_MODULE = "bat_pipeline.example.scripted_llm"


def _start(command: list[str], cwd: Path, home: Path) -> subprocess.Popen:
    home.mkdir(parents=True)
    return subprocess.Popen(
        command,
        cwd=cwd,
        env={"DAGSTER_HOME": str(home)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """Both commands at once, each in its own scratch folder, with nothing in the
    environment but DAGSTER_HOME; {name: (agent copy, exit code, output, DAGSTER_HOME)}."""
    base = tmp_path_factory.mktemp("bundled_example")
    run_agent = copy_example_agent(base / "run" / "weather_agent", models=(MODEL,))
    materialize_agent = copy_example_agent(base / "materialize" / "weather_agent", models=(MODEL,))
    processes = {
        "run": (
            run_agent,
            base / "run" / "dagster_home",
            [str(VENV_BIN / "bat-pipeline"), "run", "weather_agent"],
            base / "run",
        ),
        # From the agent folder: a code location evaluates its working directory.
        "materialize": (
            materialize_agent,
            base / "materialize" / "dagster_home",
            materialize_command(MODEL, str(VENV_BIN / "dagster")),
            materialize_agent,
        ),
    }
    started = {
        name: (agent, home, _start(command, cwd, home)) for name, (agent, home, command, cwd) in processes.items()
    }
    results = {}
    for name, (agent, home, process) in started.items():
        out, _ = process.communicate(timeout=300)
        results[name] = (agent, process.returncode, out, home)
    return results


def scripted_servers(home: Path) -> list[str]:
    """Live scripted model servers started under this DAGSTER_HOME (their environment holds it)."""
    return [
        f"{p.pid}: {p.cmdline}"
        for p in processes()
        if SCRIPTED_MODULE in p.cmdline and p.has_env("DAGSTER_HOME", str(home))
    ]


@pytest.mark.parametrize("name", ["run", "materialize"])
def test_the_example_runs_with_only_dagster_home(finished, name):
    agent, code, out, home = finished[name]
    assert code == 0, out[-4000:]
    (metrics,) = (agent / "eval" / "output").glob(f"*/demo_{MODEL}/metrics.json")
    episodes = json.loads(metrics.read_text())["per_episode"]
    assert sorted(e["task_id"] for e in episodes) == sorted(FEW_TASKS)
    assert all(e["success"] for e in episodes), episodes
    # Judged by the scripted judge, with the key the example's .env holds.
    assert all(isinstance(e["qualitative"]["task_completion_quality"], float) for e in episodes), episodes
    assert scripted_servers(home) == []
    assert leftover_agents(agent, str(home)) == []
