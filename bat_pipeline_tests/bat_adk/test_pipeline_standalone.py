"""The standalone bat-adk agent through the whole pipeline: `bat-pipeline run <agent dir>`
as a subprocess on a copy of agents/standalone_weather (its eval/ folder exactly as a
`bat eval` user keeps it). The pipeline starts the agent itself with `uv run .`; the models
are the scripted model server.

The evaluations of the module start together (they overlap on this 2-core machine):
- `main`: both models, default concurrency;
- `twin`: the same agent folder at the same time, another BAT_PIPELINE_HOME;
- `serial`: a copy whose eval.yaml says `concurrency: 1` and adds a third model,
  `ollama:competent`, with which the agent cannot start (bat-adk lacks langchain-ollama
  here): a failed run, whose other models still complete.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import signal
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from bat_pipeline.resources.warehouse import Warehouse
from bat_pipeline_tests.support.bat_adk import STANDALONE, copy_agent
from bat_pipeline_tests.support.example_agent import edit_eval
from bat_pipeline_tests.support.files import read_json, sha256
from bat_pipeline_tests.support.pipeline_runs import PipelineRun, pipeline_env, start_pipeline
from bat_pipeline_tests.support.polling import wait_for
from bat_pipeline_tests.support.processes import processes, working_in
from bat_pipeline_tests.support.spans import read_spans, roots

pytestmark = pytest.mark.slow(seconds=32)

RUN_NAME = "benchmark"
TASKS = ["weather_paris", "add_numbers", "weather_no_city", "clarify_then_berlin"]
TOOL_TASKS = {"weather_paris", "add_numbers", "clarify_then_berlin"}
MODELS = {"openai:competent": "openai-competent", "openai:sloppy": "openai-sloppy"}
BROKEN = "ollama:competent"


@dataclass
class Evaluations:
    main: PipelineRun
    twin: PipelineRun
    serial: PipelineRun
    config_sha: dict[Path, str]
    """sha256 of each copy's config.yaml before anything ran."""


def _serial_and_a_broken_model(config: dict) -> None:
    config["evaluation"]["concurrency"] = 1
    config["models"].append(BROKEN)


@pytest.fixture(scope="module")
def evaluations(bat_adk_env, scripted_llm, tmp_path_factory) -> Evaluations:
    base = tmp_path_factory.mktemp("standalone")
    agent = copy_agent(STANDALONE, base / "weather")
    serial = copy_agent(STANDALONE, base / "weather_serial")
    edit_eval(serial, _serial_and_a_broken_model)
    shas = {p: sha256(p / "config.yaml") for p in (agent, serial)}

    def start(folder: Path, home: str, *args: str) -> PipelineRun:
        env = pipeline_env(bat_adk_env, base / home, scripted_llm.url)
        return start_pipeline(folder, env, base / home, *args)

    runs = Evaluations(
        main=start(agent, "home-main"),
        twin=start(agent, "home-twin", "--model", "openai:competent"),
        serial=start(serial, "home-serial"),
        config_sha=shas,
    )
    for run in (runs.main, runs.twin, runs.serial):
        run.wait()
    return runs


def pass_counts(run: PipelineRun, model: str) -> dict[str, int]:
    summary = read_json(run.reference_dir(RUN_NAME, model) / "summary.json")
    return {a["task_id"]: a["passed"] for a in summary["attempts"]}


def episodes(run: PipelineRun, model: str) -> dict[str, dict]:
    folder = run.reference_dir(RUN_NAME, model) / "episodes"
    return {p.name: read_json(p) for p in folder.glob("*.json")}


def test_competent_passes_and_sloppy_fails_the_tool_tasks(evaluations):
    run = evaluations.main
    assert run.proc.returncode == 0, run.output[-4000:]
    assert pass_counts(run, "openai:competent") == dict.fromkeys(TASKS, 1)
    sloppy = pass_counts(run, "openai:sloppy")
    assert all(sloppy[t] == 0 for t in TOOL_TASKS), sloppy

    wrong_add = episodes(run, "openai:sloppy")["add_numbers__try0.json"]
    checks = {c["check"]: c["passed"] for c in wrong_add["verdict"]["checks"]}
    assert checks == {"status": True, "output[0]": False, "tool_call:add": False, "model_calls": True}
    (called,) = wrong_add["trace"]["tool_calls"]
    assert called["name"] == "add" and called["args"] == {"a": 17, "b": 26}
    # The runner's summary table, from the warehouse, and the charts after it.
    assert "openai-competent" in run.output and "100%" in run.output
    assert "charts could not be drawn" not in run.output


def test_episodes_and_reference_files_land_in_the_agents_eval_output(evaluations):
    run = evaluations.main
    for model, key in MODELS.items():
        reference = run.reference_dir(RUN_NAME, model)
        # bat eval's files, and results.jsonl (one line per episode, in every partition folder).
        assert sorted(p.name for p in reference.iterdir()) == [
            "agent.jsonl",
            "agent.log",
            "episodes",
            "metrics.json",
            "results.jsonl",
            "summary.json",
        ]
        assert sorted(episodes(run, model)) == sorted(f"{t}__try0.json" for t in TASKS)
        summary = read_json(reference / "summary.json")
        assert (summary["run_name"], summary["model_name"], summary["k"]) == (RUN_NAME, model.split(":", 1)[1], 1)
        metrics = read_json(reference / "metrics.json")
        assert metrics["summary"]["episodes"] == len(TASKS)
        own = run.partition_dir(key)
        assert (own / "partition.json").is_file()
        assert sorted(p.name for p in (own / "episodes").glob("*.json")) == sorted(episodes(run, model))

    paris = episodes(run, "openai:competent")["weather_paris__try0.json"]
    assert paris["final_status"] == "completed" and "22" in paris["final_output"]
    assert paris["verdict"]["passed"] is True
    trajectory = paris["trace"]["trajectory"]
    assert trajectory["found"] is True
    kinds = [s["kind"] for s in trajectory["turns"][0]["steps"]]
    assert kinds == ["model", "tool", "model"]
    assert trajectory["turns"][0]["steps"][1]["args"] == {"city": "Paris"}

    clarify = episodes(run, "openai:competent")["clarify_then_berlin__try0.json"]
    assert [t["user"] for t in clarify["trace"]["trajectory"]["turns"]] == ["What's the weather like today?", "Berlin"]
    # The charts of `bat eval plot` sit beside the runs.
    assert (run.agent_dir / "eval" / "output" / "charts" / "pass_rate.png").is_file()


def test_history_lands_in_duckdb(evaluations):
    run = evaluations.main
    warehouse = Warehouse(run.home / "warehouse.duckdb")
    rows = warehouse.query(
        "SELECT model_key, task_id, passed FROM episodes WHERE run_id = ? ORDER BY model_key, task_id",
        [run.run_id],
    )
    assert len(rows) == len(TASKS) * len(MODELS)
    by_model = Counter((r["model_key"], r["passed"]) for r in rows)
    assert by_model[("openai-competent", True)] == len(TASKS)
    assert by_model[("openai-sloppy", True)] == 0
    metrics = {
        r["model_key"]: r["pass_rate"]
        for r in warehouse.query("SELECT model_key, pass_rate FROM model_metrics WHERE run_id = ?", [run.run_id])
    }
    assert metrics == {"openai-competent": 1.0, "openai-sloppy": 0.0}
    checks = warehouse.query(
        "SELECT count(*) AS n FROM verdict_checks WHERE run_id = ? AND check_name = 'tool_call:add'",
        [run.run_id],
    )
    assert checks[0]["n"] == len(MODELS)


def test_config_yaml_untouched_after_a_good_and_a_failed_run(evaluations):
    failed = evaluations.serial
    assert evaluations.main.proc.returncode == 0, evaluations.main.output[-4000:]
    assert failed.proc.returncode == 1, failed.output[-4000:]
    assert "✗ ollama-competent failed" in failed.output
    assert "langchain-ollama" in failed.output  # the agent's last log lines
    assert not (failed.agent_dir / "eval" / "output" / failed.run_id / "benchmark_ollama-competent").exists()
    for folder, before in evaluations.config_sha.items():
        assert sha256(folder / "config.yaml") == before, folder
        assert working_in(folder) == []


def test_two_evaluations_of_one_agent_at_the_same_time_do_not_collide(evaluations):
    main, twin = evaluations.main, evaluations.twin
    assert main.proc.returncode == 0, main.output[-4000:]
    assert twin.proc.returncode == 0, twin.output[-4000:]
    assert main.run_id != twin.run_id
    assert main.reference_dir(RUN_NAME, "openai:competent") != twin.reference_dir(RUN_NAME, "openai:competent")
    assert pass_counts(twin, "openai:competent") == dict.fromkeys(TASKS, 1)

    urls = {
        run.run_id: {e["aux"]["agent_url"] for e in episodes(run, "openai:competent").values()} for run in (main, twin)
    }
    assert len(urls[main.run_id]) == 1 and len(urls[twin.run_id]) == 1
    assert urls[main.run_id] != urls[twin.run_id]

    for run in (main, twin):
        spans = read_spans(run.partition_dir("openai-competent") / "spans" / "agent.jsonl")
        # Each run's span file holds its own conversations once: one root per turn.
        assert len(roots(spans, "weather_paris__try0")) == 1
        assert len(roots(spans, "clarify_then_berlin__try0")) == 2


def _conversation_spans(run: PipelineRun, key: str) -> list[tuple[int, int]]:
    spans = read_spans(run.partition_dir(key) / "spans" / "agent.jsonl")
    intervals = []
    for task in TASKS:
        found = roots(spans, f"{task}__try0")
        intervals.append((min(s["start_time"] for s in found), max(s["end_time"] for s in found)))
    return sorted(intervals)


def _overlapping(intervals: list[tuple[int, int]]) -> bool:
    return any(later[0] < earlier[1] for earlier, later in itertools.pairwise(intervals))


def test_concurrency_one_gives_the_same_pass_counts(evaluations):
    main, serial = evaluations.main, evaluations.serial
    # The progress line once both are done: what each model's episodes gave.
    assert re.search(r"openai-competent 4/4 done: \d passed, \d failed · openai-sloppy 4/4 done: ", serial.output), (
        serial.output[-3000:]
    )
    for model in MODELS:
        assert pass_counts(serial, model) == pass_counts(main, model), model
    # concurrency 1: one conversation after another; the default has several in flight.
    assert not _overlapping(_conversation_spans(serial, "openai-competent"))
    assert _overlapping(_conversation_spans(main, "openai-competent"))


@pytest.fixture
def slow_model(scripted_llm):
    """`competent-slow`: the competent persona, answering after a delay."""
    scripted_llm.set_model("competent-slow", latency_ms=700)
    yield "competent-slow"
    scripted_llm.set_model("competent-slow", latency_ms=0)


def _pipeline_processes(home: Path) -> list[int]:
    """Live processes whose environment has BAT_PIPELINE_HOME=home (runner, partitions)."""
    return [p.pid for p in processes() if p.has_env("BAT_PIPELINE_HOME", str(home))]


def test_killing_the_pipeline_leaves_config_intact_and_no_agent(bat_adk_env, scripted_llm, slow_model, tmp_path):
    agent = copy_agent(STANDALONE, tmp_path / "weather")

    def one_slow_model(config: dict) -> None:
        config["models"] = [
            {
                "provider": "openai",
                "model": slow_model,
                "env": {"BASE_URL": "${BAT_DEMO_LLM_URL}/v1", "OPENAI_API_KEY": "scripted"},
            }
        ]
        config["evaluation"]["concurrency"] = 1

    edit_eval(agent, one_slow_model)
    before = sha256(agent / "config.yaml")
    home = tmp_path / "home"
    run = start_pipeline(agent, pipeline_env(bat_adk_env, home, scripted_llm.url), home)
    try:
        wait_for(
            lambda: run.proc.poll() is not None or list(home.glob("runs/*/*/episodes/*.json")),
            180,
            what="the first episode file",
        )
        assert run.proc.poll() is None, run.output[-4000:]
        agents = working_in(agent)
        assert agents, "no agent process runs in the agent folder"
        assert len(_pipeline_processes(home)) >= 2  # the runner and the model's partition
    finally:
        # The runner and its partition process share the runner's process group.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.proc.pid, signal.SIGKILL)
        run.proc.wait(timeout=10)

    # PR_SET_PDEATHSIG: the agent is told to stop when its parent dies, even by SIGKILL.
    wait_for(lambda: not working_in(agent), 30, what=f"the agent processes {agents} to exit")
    wait_for(lambda: not _pipeline_processes(home), 10, what="the partition process to be gone")
    assert sha256(agent / "config.yaml") == before
    done = list(home.glob("runs/*/*/episodes/*.json"))
    assert 1 <= len(done) < len(TASKS)


def test_redacting_privacy_is_refused_before_anything_starts(bat_adk_env, scripted_llm, tmp_path):
    agent = copy_agent(STANDALONE, tmp_path / "weather")
    config = agent / "config.yaml"
    config.write_text(config.read_text().replace("privacy: none", "privacy: content"))
    before = sha256(config)
    asked = scripted_llm.count()
    home = tmp_path / "home"
    run = start_pipeline(agent, pipeline_env(bat_adk_env, home, scripted_llm.url), home)
    assert run.wait(120) == 2, run.output[-4000:]
    assert str(config) in run.output
    assert "telemetry.privacy" in run.output
    assert sha256(config) == before
    # Nothing started: no agent log, no run folder, no output, no model call.
    assert list(home.rglob("agent.log")) == []
    assert not (home / "runs").exists()
    assert not (agent / "eval" / "output").exists()
    assert scripted_llm.count() == asked
    assert working_in(agent) == []


def test_privacy_floor_in_the_agents_code_is_refused_before_anything_starts(bat_adk_env, scripted_llm, tmp_path):
    agent = copy_agent(STANDALONE, tmp_path / "weather")
    code = agent / "weather_agent.py"
    code.write_text(
        code.read_text().replace(
            "        AgentStateType=WeatherState,\n",
            '        AgentStateType=WeatherState,\n        telemetry_privacy_floor="names",\n',
        )
    )
    asked = scripted_llm.count()
    home = tmp_path / "home"
    run = start_pipeline(agent, pipeline_env(bat_adk_env, home, scripted_llm.url), home)
    assert run.wait(120) == 2, run.output[-4000:]
    line = next(n for n, text in enumerate(code.read_text().splitlines(), 1) if "telemetry_privacy_floor" in text)
    assert str(code) in run.output and f"line {line}" in run.output
    assert 'telemetry_privacy_floor="names"' in run.output and "Traceback" not in run.output
    assert not (home / "runs").exists() and scripted_llm.count() == asked
    assert working_in(agent) == []
