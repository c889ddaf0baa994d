"""A turn past `evaluation.turn_timeout_s`: the episode is an error episode that says which
turn ran out after how long; it is stored, counted, and not sent to the judge, while the
other episodes of the run are judged as usual."""

from __future__ import annotations

import json

import dagster as dg
import pytest

from bat_pipeline_tests.support.dagster_runs import episodes_in, evaluate, failure_messages, only_run_dir
from bat_pipeline_tests.support.example_agent import JUDGE_KEY_VAR, LLM_URL_VAR, copy_example_agent

pytestmark = pytest.mark.slow(seconds=5)

MODEL = "slow-competent"
JUDGE = "judge-after-timeout"
PARTITION = f"openai-{MODEL}"
# Every model answer takes 1.2 s: a task answered in one model call fits in the 2 s a turn
# may take, one needing a tool call and a second model call does not.
LATENCY_MS, TURN_TIMEOUT_S = 1200, 2


def test_a_timed_out_turn_is_an_error_episode_kept_counted_and_not_judged(scripted_llm, tmp_path, monkeypatch):
    monkeypatch.setenv(LLM_URL_VAR, scripted_llm.url)
    monkeypatch.setenv(JUDGE_KEY_VAR, "scripted-judge-takes-any-key")
    agent = copy_example_agent(
        tmp_path / "agent",
        tasks=("capital_of_france", "add_numbers"),
        models=(MODEL,),
        evaluation={"concurrency": 2, "turn_timeout_s": TURN_TIMEOUT_S},
        judge={"model": JUDGE},
    )
    scripted_llm.set_model(MODEL, latency_ms=LATENCY_MS)
    instance = dg.DagsterInstance.ephemeral()
    try:
        result = evaluate(agent, tmp_path / "home", instance, PARTITION)
    finally:
        instance.dispose()
        scripted_llm.set_model(MODEL, latency_ms=0)
    assert result.success, failure_messages(result)

    run_dir = only_run_dir(tmp_path / "home", PARTITION)
    episodes = episodes_in(run_dir)
    assert sorted(episodes) == ["add_numbers__try0", "capital_of_france__try0"]
    timed_out, answered = episodes["add_numbers__try0"], episodes["capital_of_france__try0"]
    reason = f"turn 1 of 1 timed out: no answer within {TURN_TIMEOUT_S}s (evaluation.turn_timeout_s)"
    assert timed_out["aux"]["eval_error"] == reason
    assert timed_out["final_status"] == "error"
    assert timed_out["verdict"]["passed"] is False and reason in timed_out["verdict"]["reason"]
    assert set(timed_out["qualitative_scores"]["judge_reasoning"]) == {
        "relevance",
        "task_completion",
        "hallucination",
        "tool_call",
    }
    for why in timed_out["qualitative_scores"]["judge_reasoning"].values():
        assert why == f"not judged: the attempt failed ({reason})"
    assert timed_out["qualitative_scores"]["task_completion_quality"] is None

    assert "eval_error" not in answered["aux"] and answered["verdict"]["passed"]
    assert answered["qualitative_scores"]["task_completion_quality"] is not None
    judge_calls = scripted_llm.stats()["by_model"][JUDGE]
    assert judge_calls == 3  # relevance, task completion, hallucination: capital_of_france only

    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["summary"]["episodes"] == 2 and metrics["summary"]["error_episodes"] == 1
    assert metrics["summary"]["passed"] == 1
