"""Google ADK's eval files run as a user has them (issue 37): `bat-pipeline run
x.evalset.json` on a copy of the example agent (the file in its folder, as ADK keeps an
app's eval sets), the scripted server playing the agent's models. A multi-turn
conversation replayed turn by turn, a conversation_scenario driven by the simulated user,
ADK's verdicts and figures, and ADK's `*.evalset_result.json` beside our outputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bat_pipeline.resources.warehouse import Warehouse
from bat_pipeline_tests.support.example_agent import copy_example_agent, edit_eval, pipeline_env, run
from bat_pipeline_tests.support.paths import VENV_BIN

STARTER_PACK = Path(__file__).resolve().parents[1] / "fixtures" / "adk" / "starter_pack" / "tests" / "eval"

USER = {
    "provider": "openai",
    "model": "scripted-user",
    "base_url": "{scripted_llm}/v1",
    "api_key_env": "BAT_DEMO_JUDGE_KEY",
    "max_turns": 3,
}


@pytest.fixture(scope="module")
def adk_run(tmp_path_factory, scripted_llm):
    """One run of a folder of ADK files: the bundled evalset (adk/ of the example agent, with
    its test_config.json) and a scenario file below it (its own config, no reference metric), two models, k=1."""
    tmp = tmp_path_factory.mktemp("adk")
    agent = copy_example_agent(tmp / "weather_agent", models=("openai-competent", "openai-sloppy"))
    edit_eval(agent, simulated_user=USER)
    scenarios = agent / "adk" / "scenarios"
    scenarios.mkdir()
    (scenarios / "clarify.evalset.json").write_text(
        json.dumps(
            {
                "eval_set_id": "clarify",
                "eval_cases": [
                    {
                        "eval_id": "clarify_city",
                        "conversation_scenario": {
                            "starting_prompt": "What's the weather like today?",
                            "conversation_plan": "When the assistant asks which city, answer 'Berlin'.",
                        },
                    }
                ],
            }
        )
    )
    tool_use = {
        "threshold": 0.5,
        "judge_model_options": {"num_samples": 1},
        "rubrics": [{"rubricId": "weather_tool", "rubricContent": {"textProperty": "the agent calls 'get_weather'"}}],
    }
    trajectory = {
        "threshold": 1.0,
        "judge_model_options": {"num_samples": 1},
        "rubrics": [
            {"rubricId": "berlin", "rubricContent": {"textProperty": "the agent calls 'get_weather' for 'Berlin'"}}
        ],
    }
    criteria = {
        "rubric_based_tool_use_quality_v1": tool_use,
        "rubric_based_multi_turn_trajectory_quality_v1": trajectory,
    }
    (scenarios / "test_config.json").write_text(json.dumps({"criteria": criteria}))
    root = tmp / "home"
    result = run(
        [str(VENV_BIN / "bat-pipeline"), "run", str(agent / "adk")], pipeline_env(agent, root, scripted_llm.url)
    )
    return agent, root, result


def test_adk_folder_runs_with_adks_verdicts(adk_run):
    """The bundled evalset and config: trajectory, ROUGE, final_response_match_v2, a rubric
    metric and hallucinations_v1 through the scripted judge decide each case."""
    _, root, result = adk_run
    assert result.returncode == 0, result.stdout
    warehouse = Warehouse(root / "warehouse.duckdb")
    episodes = {
        (r["model_key"], r["task_id"]): r
        for r in warehouse.query("SELECT model_key, task_id, passed, final_output FROM episodes")
    }
    weather, chained, clarify = (
        "weather_agent_adk.weather_paris",
        "weather_agent_adk.add_then_capital",
        "clarify.clarify_city",
    )
    assert {task for _, task in episodes} == {weather, chained, clarify}
    passed = {key: row["passed"] for key, row in episodes.items()}
    assert passed[("openai-competent", weather)] and passed[("openai-competent", chained)]
    assert not passed[("openai-sloppy", weather)] and not passed[("openai-sloppy", chained)]
    scores = {
        (r["model_key"], r["task_id"], r["criterion"]): r
        for r in warehouse.query("SELECT model_key, task_id, criterion, value, passed FROM episode_scores")
    }
    # ROUGE-1 (final_response_match_v1.py, stemmed): "weather in pari sunni 22 c" against
    # "the weather in pari is sunni 22 c": 6 of 6 and 6 of 8, F = 6/7.
    assert scores[("openai-competent", weather, "response_match_score")]["value"] == pytest.approx(6 / 7)
    assert scores[("openai-competent", weather, "tool_trajectory_avg_score")]["value"] == 1.0
    # Replayed turn by turn: each turn's calls against its own invocation (add, then none).
    assert scores[("openai-competent", chained, "tool_trajectory_avg_score")]["value"] == 1.0
    assert scores[("openai-competent", chained, "tool_call_count_v1")]["value"] == 0.5
    # final_response_match_v2 through the scripted judge, 3 samples a turn: the sloppy
    # persona's sum misses the reference's figures (invalid), its capital is right: 1 of 2.
    assert scores[("openai-competent", chained, "final_response_match_v2")]["value"] == 1.0
    assert scores[("openai-sloppy", chained, "final_response_match_v2")]["value"] == 0.5
    # hallucinations_v1: each sentence against the user's message and the tool results; the
    # competent sum and capital are backed, half the sloppy persona's chatter is not.
    assert scores[("openai-competent", chained, "hallucinations_v1")]["value"] == 1.0
    assert scores[("openai-sloppy", chained, "hallucinations_v1")]["value"] == pytest.approx(0.5)
    # The rubric names '42' and 'Paris': the sloppy persona's sum and capital give neither.
    assert scores[("openai-competent", chained, "rubric_based_final_response_quality_v1")]["value"] == 1.0
    assert scores[("openai-sloppy", chained, "rubric_based_final_response_quality_v1")]["value"] == 0.0
    # The sloppy persona answers without the tool: EXACT fails, recall 0, precision n/a.
    assert scores[("openai-sloppy", weather, "tool_trajectory_avg_score")]["value"] == 0.0
    assert scores[("openai-sloppy", weather, "trajectory_recall")]["value"] == 0.0
    assert scores[("openai-sloppy", weather, "trajectory_precision")]["value"] is None


def test_the_scenario_is_driven_by_the_simulated_user(adk_run):
    _, root, _ = adk_run
    warehouse = Warehouse(root / "warehouse.duckdb")
    [conversation] = warehouse.query(
        "SELECT turns, generated_turns FROM conversations WHERE task_id = 'clarify.clarify_city' "
        "AND model_key = 'openai-competent'"
    )
    assert conversation["generated_turns"] >= 1 and conversation["turns"] >= 2
    [row] = warehouse.query(
        "SELECT value, passed, details FROM episode_scores WHERE task_id = 'clarify.clarify_city' "
        "AND model_key = 'openai-competent' AND criterion = 'rubric_based_tool_use_quality_v1'"
    )
    # rubric_based_evaluator.py: one vote per rubric and turn, the case's score the mean of
    # every rubric score: the agent asks for the city first (no call: 0), then calls (1).
    assert json.loads(row["details"])["per_invocation"] == [0.0, 1.0]
    assert (row["value"], row["passed"]) == (0.5, True)
    # rubric_based_multi_turn_trajectory_evaluator.py: the whole dialogue judged once, as of the
    # last turn (the earlier turns not evaluated).
    [row] = warehouse.query(
        "SELECT value, passed, details FROM episode_scores WHERE task_id = 'clarify.clarify_city' "
        "AND model_key = 'openai-competent' AND criterion = 'rubric_based_multi_turn_trajectory_quality_v1'"
    )
    assert json.loads(row["details"])["per_invocation"] == [None, 1.0]
    assert (row["value"], row["passed"]) == (1.0, True)


def test_adk_result_files_beside_ours(adk_run):
    agent, _, _ = adk_run
    [competent] = (agent / "eval" / "output").glob("*/demo_openai-competent")
    files = {p.name.split("_", 2)[-1].rsplit("_", 1)[0]: p for p in competent.glob("*.evalset_result.json")}
    found = {json.loads(p.read_text())["eval_set_id"]: json.loads(p.read_text()) for p in files.values()}
    assert set(found) == {"weather_agent_adk", "clarify"}
    result = found["weather_agent_adk"]
    assert result["eval_set_result_name"].endswith(str(result["creation_timestamp"]))
    cases = {c["eval_id"]: c for c in result["eval_case_results"]}
    assert {c["final_eval_status"] for c in cases.values()} == {1}  # PASSED
    chained = cases["add_then_capital"]
    metrics = {m["metric_name"]: m for m in chained["overall_eval_metric_results"]}
    assert metrics["tool_trajectory_avg_score"]["criterion"]["match_type"] == 0  # EXACT
    assert metrics["token_usage_v1"]["eval_status"] == 4 and metrics["token_usage_v1"]["threshold"] is None
    rubric = metrics["rubric_based_final_response_quality_v1"]
    assert rubric["details"]["rubric_scores"] == [{"rubric_id": "direct_answer", "rationale": None, "score": 1.0}]
    assert rubric["criterion"]["judge_model_options"]["num_samples"] == 3
    [first, second] = chained["eval_metric_result_per_invocation"]
    assert first["actual_invocation"]["user_content"]["parts"][0]["text"] == "Please add 17 and 25."
    assert [u["name"] for u in first["actual_invocation"]["intermediate_data"]["tool_uses"]] == ["add"]
    assert second["expected_invocation"]["final_response"]["parts"][0]["text"] == "The capital of France is Paris."


def test_a_bad_adk_file_is_refused_with_exit_2(tmp_path, scripted_llm):
    agent = copy_example_agent(tmp_path / "weather_agent", models=("openai-competent",))
    bad = agent / "bad.evalset.json"
    bad.write_text(json.dumps({"eval_set_id": "s", "eval_cases": [{"eval_id": "c", "conversation": []}]}))
    result = run(
        [str(VENV_BIN / "bat-pipeline"), "run", str(bad)], pipeline_env(agent, tmp_path / "home", scripted_llm.url)
    )
    assert result.returncode == 2, result.stdout
    assert "eval_cases[0] (eval_id 'c'), field 'conversation'" in result.stdout
    assert "Traceback" not in result.stdout


def test_agent_starter_pack_files_as_they_are(tmp_path, scripted_llm):
    """agent-starter-pack's adk_a2a scaffold (fixtures/adk/starter_pack, copied unchanged):
    its evalsets folder and eval_config.json (camelCase, a rubric metric, gemini as judge)
    run on an agent with --dataset and --config; eval.yaml's judge answers, as said."""
    agent = copy_example_agent(tmp_path / "weather_agent", models=("openai-competent",))
    command = [
        str(VENV_BIN / "bat-pipeline"),
        "run",
        str(agent),
        "--dataset",
        str(STARTER_PACK / "evalsets"),
        "--config",
        str(STARTER_PACK / "eval_config.json"),
    ]
    root = tmp_path / "home"
    result = run(command, pipeline_env(agent, root, scripted_llm.url))
    assert result.returncode == 0, result.stdout
    assert "'gemini-3-flash-preview' is not asked; eval.yaml's judge answers" in result.stdout
    rows = Warehouse(root / "warehouse.duckdb").query(
        "SELECT task_id, value FROM episode_scores WHERE criterion = 'rubric_based_final_response_quality_v1'"
    )
    # Both of the scaffold's cases, each judged on its two rubrics (relevance, helpfulness).
    assert sorted(r["task_id"] for r in rows) == ["capability_query", "greeting"]
    assert all(r["value"] is not None for r in rows)
    # The file's criteria, not ADK's defaults, in every step (the code location's too).
    criteria = Warehouse(root / "warehouse.duckdb").query("SELECT DISTINCT criterion FROM episode_scores")
    assert "response_match_score" not in {r["criterion"] for r in criteria}
