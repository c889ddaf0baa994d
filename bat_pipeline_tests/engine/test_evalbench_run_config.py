"""An EvalBench run config as the evaluation it describes (SPEC §10, §12, §13): which file
is what, the target, the simulated user and the judge from model configs, the scorer
selection, the scenarios chosen, and the refusals."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from bat_pipeline.engine.config.project import load_project, project_kind, project_tasks
from bat_pipeline.engine.errors import InputError

EXAMPLE = Path(__file__).resolve().parents[2] / "bat_pipeline" / "example" / "weather_agent"
SCENARIOS = {
    "scenarios": [
        {
            "id": "weather-01",
            "starting_prompt": "Weather in Paris?",
            "conversation_plan": "Get it.",
            "expected_trajectory": ["get_weather"],
            "max_turns": 2,
        },
        {"id": "sum-01", "starting_prompt": "Add 1 and 2", "expected_trajectory": ["add"]},
        {"id": "weather-02", "starting_prompt": "Weather in Oslo?", "expected_trajectory": ["get_weather"]},
    ]
}


def write(folder: Path, name: str, data) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if name.endswith(".json") else yaml.safe_dump(data))
    return path


@pytest.fixture
def project(tmp_path):
    write(tmp_path, "datasets/agent.evalset.json", SCENARIOS)
    write(tmp_path, "model_configs/agent.yaml", {"generator": "a2a", "agent": str(EXAMPLE)})
    write(
        tmp_path,
        "model_configs/user.yaml",
        {"provider": "openai", "model_id": "scripted-user", "base_url": "http://127.0.0.1:9/v1", "max_turns": 4},
    )
    write(tmp_path, "model_configs/judge.yaml", {"provider": "openai", "model": "judge"})
    run = {
        "dataset_config": "datasets/agent.evalset.json",
        "dataset_format": "agent-format",
        "orchestrator": "agent",
        "model_config": "model_configs/agent.yaml",
        "simulated_user_model_config": "model_configs/user.yaml",
        "runners": {"agent_runners": 3},
        "scorers": {
            "trajectory_matcher": {"enforce_order": True},
            "turn_count": {},
            "goal_completion": {"model_config": "model_configs/judge.yaml"},
        },
        "reporting": {"csv": {"output_directory": "results"}},
        "num_trials": 2,
    }
    return tmp_path, run


def test_a_run_config_is_an_evaluation_of_its_target(project, tmp_path_factory, monkeypatch):
    folder, run = project
    elsewhere = tmp_path_factory.mktemp("cwd")
    monkeypatch.chdir(elsewhere)
    path = write(folder, "run_config.yaml", run)
    assert project_kind(path) == ("evalbench", path.resolve())
    config = load_project(path)
    assert config.agent_dir == EXAMPLE and config.agent.command  # the example folder's agent, started as usual
    assert [m.partition_key for m in config.models] == ["openai-competent", "openai-sloppy", "anthropic-competent"]
    assert config.evaluation.concurrency == 3 and config.evaluation.k == 2 and config.evaluation.qualitative
    assert config.agent_id == "run_config"
    assert (config.simulated_user.model, config.simulated_user.max_turns) == ("scripted-user", 4)
    assert (config.judge.provider, config.judge.model) == ("openai", "judge")
    # EvalBench's CsvReporter writes <output_directory>/<job id>/ from the working directory.
    assert config.evalbench.csv_dir == (elsewhere / "results").resolve()
    tasks = project_tasks(config)
    assert [t.id for t in tasks] == ["weather-01", "sum-01", "weather-02"]
    assert tasks[0].scenario.options("trajectory_matcher") == {"enforce_order": True}
    assert not tasks[0].scenario.selects("behavioral_metrics") and tasks[0].scenario.selects("turn_count")


def test_scenarios_are_chosen_by_id_and_pattern(project):
    folder, run = project
    config = load_project(write(folder, "run_config.yaml", {**run, "scenario_pattern": "weather-*"}))
    assert [t.id for t in project_tasks(config)] == ["weather-01", "weather-02"]
    # A glob, as EvalBench's docs say (docs/configs/run-config.md): matched whole, case-sensitive.
    config = load_project(write(folder, "run_config.yaml", {**run, "scenario_pattern": "*-0[2]"}))
    assert [t.id for t in project_tasks(config)] == ["weather-02"]
    with pytest.raises(InputError, match="no scenario of the dataset is chosen"):
        project_tasks(load_project(write(folder, "run_config.yaml", {**run, "scenario_pattern": "WEATHER*"})))
    config = load_project(write(folder, "run_config.yaml", {**run, "scenarios": ["sum-01"]}))
    assert [t.id for t in project_tasks(config)] == ["sum-01"]


def test_an_a2a_url_names_its_models(project):
    folder, run = project
    write(
        folder,
        "model_configs/agent.yaml",
        {"generator": "a2a", "url": "http://127.0.0.1:8123", "models": ["openai:competent"]},
    )
    config = load_project(write(folder, "run_config.yaml", run))
    assert config.agent.url == "http://127.0.0.1:8123" and config.agent_dir == folder.resolve()
    assert [m.name for m in config.models] == ["openai:competent"]


@pytest.mark.parametrize(
    ("model_config", "says"),
    [
        ({"generator": "agy_cli"}, "generator 'agy_cli': EvalBench installs the Antigravity CLI from the network"),
        ({"generator": "jetski_cli"}, "generator 'jetski_cli': EvalBench's own generator registry"),
        ({"generator": "grpc_proxy"}, "generator 'grpc_proxy' is not run by this release; these are: claude_code,"),
        ({"generator": "vertex"}, "generator 'vertex' is not run by this release"),
        (
            {"generator": "claude_code", "setup": {"mcp_servers": [{"action": "install_from_repo", "url": "u"}]}},
            "setup.mcp_servers as a list (install_from_repo",
        ),
        ({"generator": "gemini_cli", "setup": {"mcp_servers": {"s": "x"}}}, "setup.mcp_servers.s must be a mapping"),
        ({"generator": "claude_code", "env": ["A=1"]}, "env: expected a mapping"),
        ({"generator": "codex_cli", "setup": {"skills": [{"action": "install_from_repo"}]}}, "setup.skills"),
        ({"generator": "claude_code", "setup": {"skills_dir": "plugins"}}, "setup.skills_dir (a plugin marketplace"),
        ({"generator": "a2a"}, "needs url"),
        ({"generator": "a2a", "url": "http://127.0.0.1:1"}, "name the agent's model"),
    ],
)
def test_targets_refused_by_name(project, model_config, says):
    folder, run = project
    write(folder, "model_configs/agent.yaml", model_config)
    with pytest.raises(InputError, match=re.escape(says)):
        load_project(write(folder, "run_config.yaml", run))


def test_an_llm_scorer_without_a_judge_is_refused(project, tmp_path):
    folder, run = project
    scorers = {"behavioral_metrics": {}}
    write(folder, "model_configs/agent.yaml", {"generator": "a2a", "url": "http://x", "models": ["openai:m"]})
    with pytest.raises(InputError, match="need a judge"):
        load_project(write(folder, "run_config.yaml", {**run, "scorers": scorers}))
    write(folder, "model_configs/judge.yaml", {"generator": "gcp_vertex_claude", "model_id": "g"})
    with pytest.raises(InputError, match="generator 'gcp_vertex_claude' cannot be asked here"):
        load_project(write(folder, "run_config.yaml", run))


def test_evalbenchs_vertex_gemini_model_config_is_a_vertex_judge_and_user(project):
    folder, run = project
    gemini = {
        "generator": "gcp_vertex_gemini",
        "vertex_model": "gemini-3.1-pro-preview",
        "gcp_project_id": "astana-evaluation",
        "gcp_region": "global",
        "base_prompt": "",
        "execs_per_minute": 5,
    }
    write(folder, "model_configs/gemini.yaml", gemini)
    run = {
        **run,
        "simulated_user_model_config": "model_configs/gemini.yaml",
        "scorers": {"goal_completion": {"model_config": "model_configs/gemini.yaml"}},
    }
    config = load_project(write(folder, "run_config.yaml", run))
    place = {"GOOGLE_CLOUD_PROJECT": "astana-evaluation", "GOOGLE_CLOUD_LOCATION": "global"}
    for settings in (config.judge, config.simulated_user):
        assert (settings.provider, settings.model, settings.env) == ("vertex", "gemini-3.1-pro-preview", place)
    write(folder, "model_configs/gemini.yaml", {"generator": "gcp_vertex_gemini", "model_id": "g"})
    with pytest.raises(InputError, match="names its model in vertex_model") as refused:
        load_project(write(folder, "run_config.yaml", run))
    assert refused.value.field == "vertex_model"


def test_an_unknown_scorer_is_warned_about(project):
    folder, run = project
    config = load_project(write(folder, "run_config.yaml", {**run, "scorers": {"dbt_run": {}, "turn_count": {}}}))
    [warning] = [w for w in config.warnings if "scorers.dbt_run" in w]
    assert "no such scorer here" in warning and "trajectory_matcher" in warning


def test_env_tags_are_read_as_pyaml_env_reads_them(project, monkeypatch):
    """EvalBench's .ci/run_config.yaml: `model_config: !ENV .ci/model_configs/${CI_HARNESS}_model.yaml`."""
    folder, run = project
    write(folder, "model_configs/a2a_model.yaml", {"generator": "a2a", "url": "http://x", "models": ["openai:m"]})
    text = yaml.safe_dump({k: v for k, v in run.items() if k not in ("model_config", "reporting")})
    text += "model_config: !ENV model_configs/${CI_HARNESS}_model.yaml\n"
    text += "reporting: {csv: {output_directory: !ENV 'results/ci/${CI_HARNESS}/${CI_SUFFIX:x}'}}\n"
    path = folder / "run_config.yaml"
    path.write_text(text)
    monkeypatch.setenv("CI_HARNESS", "a2a")
    monkeypatch.delenv("CI_SUFFIX", raising=False)
    monkeypatch.chdir(folder)
    config = load_project(path)
    assert config.agent.url == "http://x"
    assert config.evalbench.csv_dir == (folder / "results" / "ci" / "a2a" / "x").resolve()
    monkeypatch.delenv("CI_HARNESS")
    with pytest.raises(InputError, match="environment variable 'CI_HARNESS' is not set") as refused:
        load_project(path)
    assert str(path) in str(refused.value) and "line" in str(refused.value)
