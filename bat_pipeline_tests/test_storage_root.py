"""Where results land when $BAT_PIPELINE_HOME is not set (issue 36): beside the agent, so
one agent's results are in one place whatever the working directory, and where the history
commands look from wherever they are started."""

from __future__ import annotations

from pathlib import Path

import pytest

from bat_pipeline import storage
from bat_pipeline.locations import BUNDLED_AGENT_DIR
from bat_pipeline.storage import HOME_VAR, default_root, history_root, project_root
from bat_pipeline_tests.support.example_agent import copy_example_agent

EXAMPLE = BUNDLED_AGENT_DIR.parent


@pytest.fixture(autouse=True)
def no_home(monkeypatch):
    monkeypatch.delenv(HOME_VAR, raising=False)


def test_the_root_is_the_agents_own_whatever_the_working_directory(tmp_path, monkeypatch):
    agent = copy_example_agent(tmp_path / "weather_agent")
    for cwd in (tmp_path, agent, agent / "eval"):
        monkeypatch.chdir(cwd)
        assert default_root(agent) == agent.resolve() / ".bat_pipeline"
        # A bat-cli eval file other than eval/eval.yaml is for the same agent folder.
        assert default_root(agent / "eval" / "judges.yaml") == agent.resolve() / ".bat_pipeline"
    # An AgentV file or an EvalBench run config: beside it.
    assert project_root(EXAMPLE / "assistants" / "assistants.yaml") == (EXAMPLE / "assistants" / ".bat_pipeline")
    assert project_root(EXAMPLE / "scenarios" / "run_config.yaml") == (EXAMPLE / "scenarios" / ".bat_pipeline")
    monkeypatch.setenv(HOME_VAR, str(tmp_path / "elsewhere"))
    assert default_root(agent) == (tmp_path / "elsewhere").resolve()  # $BAT_PIPELINE_HOME wins


def test_the_history_commands_find_the_results_from_where_they_start(tmp_path, monkeypatch):
    agent = copy_example_agent(tmp_path / "weather_agent")
    assert history_root(here=agent) == (agent.resolve() / ".bat_pipeline", None)
    assert history_root(agent, here=tmp_path) == (agent.resolve() / ".bat_pipeline", None)
    # A folder holding a storage root of its own (the layout of earlier releases): that one.
    legacy = tmp_path / "legacy"
    (legacy / ".bat_pipeline").mkdir(parents=True)
    assert history_root(here=legacy) == ((legacy / ".bat_pipeline").resolve(), None)
    # Anywhere else: the bundled example's results once the demo wrote them, said so.
    nowhere = tmp_path / "nowhere"
    nowhere.mkdir()
    demo = copy_example_agent(tmp_path / "bundled" / "weather_agent")
    monkeypatch.setattr(storage, "BUNDLED_AGENT_DIR", demo)
    assert history_root(here=nowhere) == ((nowhere / ".bat_pipeline").resolve(), None)
    (demo / ".bat_pipeline").mkdir()
    root, note = history_root(here=nowhere)
    assert root == (demo / ".bat_pipeline").resolve()
    assert note == f"no agent folder here: reading the bundled example's results ({demo.resolve() / '.bat_pipeline'})"
    monkeypatch.setenv(HOME_VAR, str(tmp_path / "home"))
    assert history_root(here=agent) == ((tmp_path / "home").resolve(), None)


def test_the_example_roots_are_ignored_by_git():
    ignored = (Path(__file__).resolve().parents[1] / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert ".bat_pipeline/" in ignored  # any depth: the example agents' own roots too
