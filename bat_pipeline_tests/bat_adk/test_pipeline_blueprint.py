"""The blueprint's concierge through the whole pipeline: `bat-pipeline run <root>/concierge`
on a copy of the blueprint root. The pipeline sees the blueprint layout and starts
`uv run . concierge` from the root; the weather agent it calls is a service the test
starts beforehand (as the user would), whose span file the concierge's eval.yaml lists
under `extra_spans`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from bat_pipeline.engine.conversation import normalise_state
from bat_pipeline.resources.ports import free_port
from bat_pipeline.resources.warehouse import Warehouse
from bat_pipeline_tests.support.bat_adk import BLUEPRINT, agent_config, agent_env, copy_agent, running_agent
from bat_pipeline_tests.support.files import read_json, sha256
from bat_pipeline_tests.support.pipeline_runs import PipelineRun, pipeline_env, start_pipeline
from bat_pipeline_tests.support.processes import working_in

pytestmark = pytest.mark.slow(seconds=22)

TASKS = ["weather_berlin", "clarify_then_london"]
MODEL = "openai:competent"


@dataclass
class BlueprintRun:
    run: PipelineRun
    root: Path
    config_sha: dict[Path, str]
    weather_log: Path

    def episode(self, task: str) -> dict:
        return read_json(self.run.reference_dir("benchmark", MODEL) / "episodes" / f"{task}__try0.json")


def _point_at(config_file: Path, weather_url: str) -> None:
    """The user's setup: the concierge's `remote-agents` entry names where WeatherAgent runs."""
    config = yaml.safe_load(config_file.read_text())
    (entry,) = [e for e in config["remote-agents"] if e["name"] == "WeatherAgent"]
    entry["url"] = weather_url
    config_file.write_text(yaml.safe_dump(config, sort_keys=False))


@pytest.fixture(scope="module")
def evaluated(bat_adk_env, scripted_llm, tmp_path_factory) -> BlueprintRun:
    base = tmp_path_factory.mktemp("blueprint")
    root = copy_agent(BLUEPRINT, base / "blueprint")
    port = free_port()
    _point_at(root / "concierge" / "config.yaml", f"http://127.0.0.1:{port}")
    configs = [root / "concierge" / "config.yaml", root / "weather" / "config.yaml"]
    shas = {c: sha256(c) for c in configs}

    # The weather agent as its config.yaml says, on the chosen port: spans in
    # <root>/weather/spans.jsonl, which the concierge's eval.yaml lists in extra_spans.
    weather_cfg = agent_config(
        root / "weather" / "config.yaml",
        base / "weather-config.yaml",
        port=port,
        spans=root / "weather" / "spans.jsonl",
    )
    weather_env = agent_env(bat_adk_env, weather_cfg, scripted_llm.url, "competent")
    home = base / "home"
    with running_agent(root, ["weather"], weather_env, port, base / "weather.log"):
        run = start_pipeline(root / "concierge", pipeline_env(bat_adk_env, home, scripted_llm.url), home)
        run.wait()
    return BlueprintRun(run=run, root=root, config_sha=shas, weather_log=base / "weather.log")


def test_the_pipeline_starts_the_concierge_from_the_blueprint_root(evaluated):
    run = evaluated.run
    assert run.proc.returncode == 0, run.output[-4000:] + evaluated.weather_log.read_text()[-2000:]
    (log,) = run.home.glob(f"logs/{run.run_id}-openai-competent.log")
    assert f"uv run . concierge (cwd {evaluated.root}," in log.read_text()
    agent_log = (run.reference_dir("benchmark", MODEL) / "agent.log").read_text()
    assert "Traceback" not in agent_log
    for config, before in evaluated.config_sha.items():
        assert sha256(config) == before, config
    assert working_in(evaluated.root) == []


def test_verdicts_count_the_called_agent_and_its_tools(evaluated):
    summary = read_json(evaluated.run.reference_dir("benchmark", MODEL) / "summary.json")
    assert {a["task_id"]: a["passed"] for a in summary["attempts"]} == dict.fromkeys(TASKS, 1)
    berlin = evaluated.episode("weather_berlin")
    checks = {c["check"]: c["passed"] for c in berlin["verdict"]["checks"]}
    assert checks == {
        "status": True,
        "output[0]": True,
        "agent_call:WeatherAgent": True,
        "tool_call:get_weather": True,
        "no_errors": True,
    }
    london = evaluated.episode("clarify_then_london")
    (agent_check,) = [c for c in london["verdict"]["checks"] if c["check"] == "agent_call:WeatherAgent"]
    assert agent_check["passed"] is True and "2" in agent_check["detail"]


def test_trajectory_nests_the_called_agents_steps(evaluated):
    trajectory = evaluated.episode("weather_berlin")["trace"]["trajectory"]
    assert trajectory["found"] is True
    (turn,) = trajectory["turns"]
    (call,) = turn["steps"]  # the concierge asks no model: its one step is the agent call
    assert call["kind"] == "agent" and call["agent"] == "WeatherAgent"
    assert "Berlin" in call["asked"] and "15" in call["answered"]
    # The called agent's A2A state as its span records it (bat-adk: TASK_STATE_COMPLETED).
    assert normalise_state(call["status"]) == "completed"
    # From the weather agent's own span file: its model calls and its tool call.
    assert [s["kind"] for s in call["steps"]] == ["model", "tool", "model"]
    tool = call["steps"][1]
    assert tool["name"] == "get_weather" and tool["args"] == {"city": "Berlin"}
    assert "15" in tool["result"]
    totals = trajectory["totals"]
    assert (totals["agent_calls"], totals["tool_calls"], totals["model_calls"]) == (1, 1, 2)

    asked, answered = evaluated.episode("clarify_then_london")["trace"]["trajectory"]["turns"]
    assert [s["kind"] for s in asked["steps"]] == ["agent"]
    assert normalise_state(asked["steps"][0]["status"]) == "input-required"
    assert [s["kind"] for s in asked["steps"][0]["steps"]] == ["model"]
    assert normalise_state(answered["steps"][0]["status"]) == "completed"
    assert [s["name"] for s in answered["steps"][0]["steps"] if s["kind"] == "tool"] == ["get_weather"]


def test_history_and_reference_files(evaluated):
    run = evaluated.run
    reference = run.reference_dir("benchmark", MODEL)
    assert sorted(p.name for p in (reference / "episodes").iterdir()) == sorted(f"{t}__try0.json" for t in TASKS)
    assert (reference / "summary.json").is_file() and (reference / "metrics.json").is_file()
    assert str(evaluated.root) in str(reference)  # under the concierge's eval/output
    rows = Warehouse(run.home / "warehouse.duckdb").query(
        "SELECT task_id, agent_calls, tool_calls FROM trajectory_totals WHERE run_id = ? ORDER BY task_id",
        [run.run_id],
    )
    assert [(r["task_id"], r["agent_calls"], r["tool_calls"]) for r in rows] == [
        ("clarify_then_london", 2, 1),
        ("weather_berlin", 1, 1),
    ]
