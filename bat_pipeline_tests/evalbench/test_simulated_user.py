"""Scenarios driven by a simulated user, on real processes: the example agent, the scripted
model server playing the agent's model and the user, a Dagster run of the chain. Each
conversation records every turn (generated ones marked), why it ended and the simulated
user's tokens apart from the agent's; a simulated-user outage gives error episodes."""

from __future__ import annotations

import json

import dagster as dg
import yaml

from bat_pipeline_tests.support.dagster_runs import episodes_in, evaluate, failure_messages, only_run_dir
from bat_pipeline_tests.support.example_agent import JUDGE_KEY_VAR, LLM_URL_VAR, copy_example_agent

USER_KEY_VAR = "SIMULATED_USER_KEY"
ASSETS = ["task_specs", "agent_episodes", "span_trajectories", "episode_verdicts"]

CLARIFY = {
    "id": "clarify_city",
    "starting_prompt": "What's the weather like today?",
    "conversation_plan": "When the assistant asks for the city, answer 'Berlin'. Then check it remembers: "
    "'Which city did I ask about?'. Then you are done.",
    "expected_trajectory": ["get_weather"],
    "max_turns": 5,
}
CUT_SHORT = {
    "id": "cut_short",
    "starting_prompt": "What is the weather in Paris?",
    "conversation_plan": "Ask 'What is the weather in Rome?', then 'And in Oslo?', then 'Which city did I ask about?'.",
    "expected_trajectory": ["get_weather", "get_weather"],
    "max_turns": 2,
}
ONE_TURN = {
    "id": "one_turn",
    "starting_prompt": "Please add 17 and 25.",
    "conversation_plan": "Ask for the sum.",
    "expected_trajectory": ["add"],
}
SELF_CHECK = {
    "id": "self_check_scenario",
    "starting_prompt": "Run a quick self-check and report your status.",
    "conversation_plan": "Then ask 'What is the weather in Paris?'.",
    "max_turns": 3,
}


def _agent(
    tmp_path,
    scenarios: list[dict],
    *,
    user_model: str = "scripted-user",
    models=("competent",),
    tasks: tuple[str, ...] = (),
    qualitative: bool = False,
    **user: object,
):
    agent = copy_example_agent(
        tmp_path / "agent",
        tasks=tasks,
        models=models,
        evaluation={"qualitative": qualitative, "dataset": "eval/input/scenarios.json"},
    )
    (agent / "eval" / "input" / "scenarios.json").write_text(json.dumps({"scenarios": scenarios}))
    path = agent / "eval" / "eval.yaml"
    config = yaml.safe_load(path.read_text())
    config["simulated_user"] = {
        "provider": "openai",
        "model": user_model,
        "base_url": "${BAT_DEMO_LLM_URL}/v1",
        "api_key_env": USER_KEY_VAR,
        **user,
    }
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return agent


def _run(agent, tmp_path, partition: str, assets: list[str] | None = ASSETS):
    instance = dg.DagsterInstance.ephemeral()
    try:
        result = evaluate(agent, tmp_path / "home", instance, partition, assets=assets)
    finally:
        instance.dispose()
    return result, episodes_in(only_run_dir(tmp_path / "home", partition))


def _env(monkeypatch, scripted_llm):
    monkeypatch.setenv(LLM_URL_VAR, scripted_llm.url)
    monkeypatch.setenv(JUDGE_KEY_VAR, "scripted-judge-takes-any-key")
    monkeypatch.setenv(USER_KEY_VAR, "scripted-user-key-not-for-the-agent")


def test_a_conversation_ends_on_terminate_and_on_max_turns(scripted_llm, tmp_path, monkeypatch):
    _env(monkeypatch, scripted_llm)
    agent = _agent(tmp_path, [CLARIFY, CUT_SHORT, ONE_TURN])
    result, episodes = _run(agent, tmp_path, "openai-competent")
    assert result.success, failure_messages(result)

    clarify = episodes["clarify_city__try0"]
    log = clarify["aux"]["conversation"]
    assert log["ended"] == "terminated" and log["max_turns"] == 5
    assert [(t["user"], t["generated"]) for t in log["turns"]] == [
        ("What's the weather like today?", False),
        ("Berlin", True),
        ("Which city did I ask about?", True),
    ]
    assert log["turns"][0]["status"] == "input-required" and "city" in log["turns"][0]["agent"]
    assert "15" in log["turns"][1]["agent"] and "Berlin" in log["turns"][2]["agent"]
    user = log["simulated_user"]
    assert user["model"] == "openai:scripted-user" and user["calls"] == 3  # two messages, then TERMINATE
    assert user["tokens_in"] > 0 and user["tokens_out"] > 0
    # The agent's tokens are the trajectory's, counted apart: three turns, the tool call in the second.
    trajectory = clarify["trace"]["trajectory"]
    assert [turn["user"] for turn in trajectory["turns"]] == [t["user"] for t in log["turns"]]
    assert [s["name"] for s in trajectory["turns"][1]["steps"] if s["kind"] == "tool"] == ["get_weather"]
    assert trajectory["totals"]["tokens_in"] > 0
    assert [e["user_input"] for e in clarify["trace"]["events"] if e["user_input"]] == [t["user"] for t in log["turns"]]

    cut = episodes["cut_short__try0"]["aux"]["conversation"]
    assert cut["ended"] == "max_turns" and cut["max_turns"] == 2
    assert [t["user"] for t in cut["turns"]] == ["What is the weather in Paris?", "What is the weather in Rome?"]
    assert cut["simulated_user"]["calls"] == 1  # never asked once no agent call remains

    # No max_turns and none in simulated_user: one agent call, the user never asked.
    one = episodes["one_turn__try0"]["aux"]["conversation"]
    assert one["ended"] == "max_turns" and one["max_turns"] == 1 and len(one["turns"]) == 1
    assert one["simulated_user"] is None
    assert all("eval_error" not in e["aux"] for e in episodes.values())

    # The simulated user's key reached the simulated user, never the agent.
    agent_log = (only_run_dir(tmp_path / "home", "openai-competent") / "agent.log").read_text()
    assert "scripted-user-key-not-for-the-agent" not in agent_log


def test_a_conversation_ends_when_the_agent_fails(scripted_llm, tmp_path, monkeypatch):
    _env(monkeypatch, scripted_llm)
    agent = _agent(tmp_path, [SELF_CHECK], models=("sloppy",))
    result, episodes = _run(agent, tmp_path, "openai-sloppy")
    assert result.success, failure_messages(result)
    episode = episodes["self_check_scenario__try0"]
    log = episode["aux"]["conversation"]
    assert log["ended"] == "agent_failed"
    assert [(t["user"], t["status"]) for t in log["turns"]] == [(SELF_CHECK["starting_prompt"], "error")]
    assert log["simulated_user"] is None  # not asked after the failed turn
    assert episode["final_status"] == "error" and "eval_error" not in episode["aux"]


def test_a_simulated_user_outage_gives_error_episodes(scripted_llm, tmp_path, monkeypatch):
    _env(monkeypatch, scripted_llm)
    model = "outage-user"
    agent = _agent(tmp_path, [CLARIFY, {**CUT_SHORT, "max_turns": 3}], user_model=model, max_retries=1)
    scripted_llm.set_model(model, error_rate=1.0, error_status=503, retry_after=0)
    try:
        result, episodes = _run(agent, tmp_path, "openai-competent")
    finally:
        scripted_llm.set_model(model, error_rate=0.0)
    assert result.success, failure_messages(result)
    assert sorted(episodes) == ["clarify_city__try0", "cut_short__try0"]
    for episode in episodes.values():
        log = episode["aux"]["conversation"]
        assert log["ended"] == "simulated_user_failed"
        assert len(log["turns"]) == 1  # the starting prompt was answered; no silent short conversation
        assert "HTTP 503" in episode["aux"]["eval_error"] and "gave up after 2 attempts" in episode["aux"]["eval_error"]
        assert "SimulatedUserError" in episode["aux"]["eval_error"]
        assert episode["final_status"] == "error"
        assert episode["verdict"]["passed"] is False
    assert scripted_llm.stats()["by_model"][model] == 4  # two conversations, each asked twice


def test_a_scenarios_scores_from_the_episode_to_the_warehouse(scripted_llm, tmp_path, monkeypatch):
    _env(monkeypatch, scripted_llm)
    # A bat-cli task carrying scenario fields runs beside the scenario, with bat-cli's checks too.
    with_plan = {
        "id": "weather_then_recall",
        "turns": ["What is the weather in Rome?"],
        "conversation_plan": "Then ask 'Which city did I ask about?'. It must say Rome.",
        "expected_trajectory": ["get_weather"],
        "max_turns": 3,
        "expected": {"output_must_contain": ["Rome"]},
    }
    agent = _agent(tmp_path, [CLARIFY, with_plan], qualitative=True)
    result, episodes = _run(agent, tmp_path, "openai-competent", assets=None)
    assert result.success, failure_messages(result)

    clarify = {r["criterion"]: r for r in episodes["clarify_city__try0"]["scores"]}
    assert clarify["trajectory_matcher"]["value"] == 1.0 and clarify["trajectory_matcher"]["gating"]
    assert clarify["turn_count"]["raw"] == 3
    goal = clarify["goal_completion"]
    assert goal["judge"] == "openai:judge" and goal["scale"] == "0..100" and goal["details"]["sub_goals"]
    assert goal["value"] == 1.0 and goal["raw"] == 100.0
    behaviour = clarify["behavioral_metrics"]
    assert behaviour["raw"] == 100.0 and behaviour["value"] == 1.0  # the question came before any city
    assert clarify["behavioral_metrics:unnecessary_clarifications"]["raw"] == 0
    assert "status" not in clarify  # a scenario has no bat-cli status check
    assert episodes["clarify_city__try0"]["verdict"]["passed"] is True

    recall = {r["criterion"]: r for r in episodes["weather_then_recall__try0"]["scores"]}
    assert {"status", "output[0]", "trajectory_matcher", "turn_count", "goal_completion"} <= set(recall)
    log = episodes["weather_then_recall__try0"]["aux"]["conversation"]
    assert [t["generated"] for t in log["turns"]] == [False, True] and log["ended"] == "terminated"

    import duckdb

    with duckdb.connect(str(tmp_path / "home" / "warehouse.duckdb"), read_only=True) as db:
        stored = db.execute(
            "SELECT criterion, value, raw, scale FROM episode_scores WHERE task_id = 'clarify_city' "
            "AND scorer IN ('trajectory_matcher', 'turn_count', 'goal_completion') "
            "ORDER BY criterion"
        ).fetchall()
    assert ("turn_count", None, 3.0, "count") in stored
    assert ("goal_completion", 1.0, 100.0, "0..100") in stored

    # The CSV report holds what the warehouse holds: `bat-pipeline export --csv`.
    import csv

    from bat_pipeline.cli import main

    monkeypatch.setenv("BAT_PIPELINE_HOME", str(tmp_path / "home"))
    assert main(["export", "--csv", str(tmp_path / "csv")]) == 0
    [folder] = (tmp_path / "csv").iterdir()
    assert sorted(p.name for p in folder.iterdir()) == ["configs.csv", "evals.csv", "scores.csv", "summary.csv"]
    lines = list(csv.DictReader((folder / "scores.csv").open()))
    line = next(x for x in lines if x["id"] == "clarify_city" and x["comparator"] == "goal_completion")
    assert (line["score"], line["criterion"]) == ("100.0", "goal_completion")
    evals = {x["eval_id"]: x for x in csv.DictReader((folder / "evals.csv").open())}
    assert evals["clarify_city"]["ended"] == "terminated" and evals["clarify_city"]["generated_turns"] == "2"
