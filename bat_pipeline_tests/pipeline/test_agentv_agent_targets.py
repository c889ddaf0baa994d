"""AgentV a2a and LLM targets end to end (issue 15 point 2): `bat-pipeline run` on a copy
of the bundled assistants example — the weather agent folder started over A2A, plain
OpenAI, Anthropic and Ollama targets, all answered by the scripted model server the run
starts — plus an a2a target at the URL of a weather agent this test started, each target
its own partition, graded by text and script graders."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from bat_pipeline.engine.config import load_eval_config
from bat_pipeline.locations import BUNDLED_AGENT_DIR
from bat_pipeline.resources.agent_process import AgentLauncher
from bat_pipeline.resources.scripted_llm import with_scripted_llm
from bat_pipeline_tests.pipeline.test_agentv_example import environment, lines
from bat_pipeline_tests.support.dagster_runs import materialize_command
from bat_pipeline_tests.support.example_agent import run
from bat_pipeline_tests.support.paths import VENV_BIN
from bat_pipeline_tests.support.processes import leftover_agents

pytestmark = pytest.mark.slow(seconds=10)

EXAMPLES = BUNDLED_AGENT_DIR.parent
PARTITIONS = ("weather_agent", "openai_competent", "anthropic_competent", "ollama_sloppy", "remote")


def episodes(partition: Path) -> dict[str, dict]:
    found = {}
    for path in (partition / "episodes").glob("*.json"):
        episode = json.loads(path.read_text(encoding="utf-8"))
        found[episode["task_id"]] = episode
    return found


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory, scripted_llm):
    base = tmp_path_factory.mktemp("agentv_agents")
    weather = base / "weather_agent"
    shutil.copytree(BUNDLED_AGENT_DIR, weather, ignore=shutil.ignore_patterns("output", "__pycache__"))
    shutil.copytree(EXAMPLES / "assistants", base / "assistants")
    eval_file = base / "assistants" / "assistants.yaml"
    # A weather agent already running, for a target at its URL; its span file is named.
    config = with_scripted_llm(load_eval_config(weather), scripted_llm.url)
    launcher = AgentLauncher(config, config.models[0], base / "remote_agent")
    with launcher.running() as agent:
        data = yaml.safe_load(eval_file.read_text(encoding="utf-8"))
        data["providers"]["remote"] = {"provider": "a2a", "url": agent.url, "spans": [str(agent.spans_files[0])]}
        eval_file.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        root, output = base / "home", base / "out"
        env = {k: v for k, v in environment(root, eval_file).items() if k != "BAT_DEMO_LLM_URL"}
        done = run([str(VENV_BIN / "bat-pipeline"), "run", str(eval_file), "--output", str(output)], env, timeout_s=280)
    partitions = {key: next(output.glob(f"*/{key}")) for key in PARTITIONS if list(output.glob(f"*/{key}"))}
    return done, partitions, root, weather, eval_file


def test_every_target_is_a_partition_graded_by_its_tests(evaluated):
    done, partitions, *_ = evaluated
    assert done.returncode == 0, done.stdout[-4000:]
    assert set(partitions) == set(PARTITIONS)
    outcomes = {
        key: {t: (r["pass"], r["error"]) for t, r in lines(folder / "results.jsonl").items()}
        for key, folder in partitions.items()
    }
    agent = {"capital": (True, None), "weather": (True, None), "follow-up": (True, None)}
    assert outcomes["weather_agent"] == agent and outcomes["remote"] == agent
    # Plain LLMs have no tools: the weather test fails, the others pass.
    for key in ("openai_competent", "anthropic_competent"):
        assert outcomes[key] == {**agent, "weather": (False, None)}, key
        checks = lines(partitions[key] / "results.jsonl")["weather"]["checks"]
        assert [c["pass"] for c in checks if c["name"] in ("tool-used", "trajectory")] == [False, False]
    assert outcomes["ollama_sloppy"]["follow-up"] == (False, None)
    assert "weather_agent: 3 passed, 0 failed, 0 errors" in done.stdout


def test_a2a_targets_give_trajectories_from_spans(evaluated):
    _, partitions, root, weather, _ = evaluated
    for key in ("weather_agent", "remote"):
        found = episodes(partitions[key])
        paris = found["weather"]
        assert paris["final_output"] == "Weather in Paris: sunny, 22°C."
        assert paris["trace"]["tool_calls"] == [{"name": "get_weather", "args": {"city": "Paris"}, "error": None}]
        checks = lines(partitions[key] / "results.jsonl")["weather"]["checks"]
        check = next(c for c in checks if c["name"] == "tool-used")
        assert check["pass"] and check["reason"] == "called get_weather with {'city': 'Paris'}"
        assert next(c for c in checks if c["name"] == "trajectory")["pass"]
        # Two user messages are two turns of one conversation: the agent remembers the first.
        follow_up = found["follow-up"]
        assert [t["user"] for t in follow_up["trace"]["trajectory"]["turns"]] == [
            "What is the weather in Berlin?",
            "Which city did I ask about?",
        ]
        assert follow_up["final_output"] == "You asked about Berlin."
    # The agent at a URL writes spans other runs share: its conversations get fresh ids.
    assert episodes(partitions["remote"])["weather"]["aux"]["conversation_id"].startswith("weather__try0-r")
    # The folder's agent was launched by `bat-pipeline run` before Dagster, and stopped.
    logs = "".join(p.read_text(encoding="utf-8") for p in (root / "logs").glob("*weather_agent*.log"))
    assert "started ahead by bat-pipeline run" in logs
    assert leftover_agents(weather, "no-url") == []


def test_llm_targets_record_tokens_and_time(evaluated):
    _, partitions, *_ = evaluated
    for key, api in (("openai_competent", "openai"), ("anthropic_competent", "anthropic"), ("ollama_sloppy", "ollama")):
        capital = episodes(partitions[key])["capital"]
        assert capital["aux"]["llm"] == f"{api}:{key.split('_')[1]}"
        assert capital["aux"]["token_usage"]["input"] > 0 and capital["aux"]["token_usage"]["output"] > 0
        assert capital["trace"]["trajectory"]["totals"]["tokens_in"] == capital["aux"]["token_usage"]["input"]
        assert capital["trace"]["wall_ms"] > 0
    # The scripted personas answered: competent plainly, sloppy with its preamble.
    assert episodes(partitions["anthropic_competent"])["capital"]["final_output"] == "The capital of France is Paris."
    assert episodes(partitions["ollama_sloppy"])["capital"]["final_output"].startswith("Great question")


@pytest.mark.parametrize(
    "provider, field, message",
    [
        (
            {"provider": "openai", "model": "competent", "api_key": "${{ NOT_SET_ANYWHERE }}"},
            "api_key",
            "needs an API key in NOT_SET_ANYWHERE, and it is not set: looked in",
        ),
        ({"provider": "bedrock", "model": "g"}, "provider", "provider 'bedrock' cannot be run yet"),
    ],
)
def test_run_refuses_before_anything_starts(tmp_path, capsys, monkeypatch, provider, field, message):
    from bat_pipeline import cli

    monkeypatch.setenv("BAT_PIPELINE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    eval_file = tmp_path / "e.yaml"
    eval_file.write_text(
        yaml.safe_dump({"providers": {"llm": provider}, "tests": [{"id": "a", "vars": {"input": "hi"}}]}),
        encoding="utf-8",
    )
    assert cli.main(["run", str(eval_file)]) == 2
    err = capsys.readouterr().err
    assert message in err and f"field '{field}'" in err and "Traceback" not in err
    assert not (tmp_path / "home" / "runs").exists()


def test_materialize_starts_the_agent_of_an_a2a_partition_itself(evaluated, tmp_path):
    """Without `bat-pipeline run` there is no head start: the step starts the agent, and
    the code location's scripted model resource fills `{scripted_llm}` in the target."""
    import dagster as dg

    *_, weather, eval_file = evaluated
    root = tmp_path / "home"
    env = {k: v for k, v in environment(root, eval_file).items() if k != "BAT_DEMO_LLM_URL"}
    with dg.DagsterInstance.from_config(env["DAGSTER_HOME"]):
        pass
    done = run(materialize_command("weather_agent"), env)
    assert done.returncode == 0, done.stdout[-4000:]
    [partition] = root.glob("runs/*/weather_agent")
    results = lines(partition / "results.jsonl")
    assert {t: r["pass"] for t, r in results.items()} == {"capital": True, "weather": True, "follow-up": True}
    assert "starting agent for openai:competent" in done.stdout and "started ahead" not in done.stdout
    assert leftover_agents(weather, "no-url") == []


def test_an_a2a_agent_started_ahead_and_never_adopted_is_stopped_and_scrubbed(tmp_path):
    """`bat-pipeline run` launches an a2a folder target's agent before Dagster; when its
    step never adopts it, the run stops it and redacts its log as the step would have."""
    import sys
    import time

    from bat_pipeline.engine.config.project import load_project
    from bat_pipeline.resources.agent_process import HEAD_STARTS
    from bat_pipeline.resources.process_group import group_members
    from bat_pipeline.runner import _release, head_start

    secret = "tok-never-in-a-log-0123456789"
    speak = "import os, time; print('token', os.environ['MY_TOKEN'], flush=True); time.sleep(60)"
    eval_file = tmp_path / "e.yaml"
    eval_file.write_text(
        yaml.safe_dump(
            {
                "providers": {
                    "agent": {
                        "provider": "a2a",
                        "agent": str(BUNDLED_AGENT_DIR),
                        "command": [sys.executable, "-c", speak],
                        "env": {"MY_TOKEN": secret},
                    }
                },
                "tests": [{"id": "a", "vars": {"input": "hi"}}],
            }
        ),
        encoding="utf-8",
    )
    config = load_project(eval_file)
    ahead = head_start(config, ["agent"], tmp_path / "home", "run-1")
    try:
        agent = ahead["agent"]
        log = agent.log_file
        deadline = time.monotonic() + 20
        while secret not in log.read_text(encoding="utf-8") and time.monotonic() < deadline:
            time.sleep(0.1)
        assert secret in log.read_text(encoding="utf-8")
    finally:
        HEAD_STARTS.clear()
        _release(ahead, config, tmp_path / "home")
    assert group_members(agent.process.pid) == []
    text = log.read_text(encoding="utf-8")
    assert secret not in text and "token [redacted]" in text
