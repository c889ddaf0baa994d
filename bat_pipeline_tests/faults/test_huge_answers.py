"""A runaway judge: each answer ten megabytes long (the scripted server pads its
reasoning). The answers are cut at `judge.max_answer_bytes` (a megabyte by default) and not
used: the scores are null, each row's reason says the answer was cut, and what the run
stores stays small instead of holding each answer many times over (episode files, scores,
results, metrics, the judge cache, the reference's folder)."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import pytest

from bat_pipeline_tests.support.dagster_runs import episodes_in, evaluate, failure_messages, only_run_dir
from bat_pipeline_tests.support.example_agent import JUDGE_KEY_VAR, LLM_URL_VAR, copy_example_agent

pytestmark = pytest.mark.slow(seconds=8)

PARTITION = "openai-competent"
JUDGE = "judge-that-runs-away"
ANSWER_CHARS = 10_000_000


def _bytes_under(*folders: Path) -> int:
    return sum(p.stat().st_size for folder in folders for p in folder.rglob("*") if p.is_file())


def test_a_judge_answering_ten_megabytes_is_cut_and_not_stored(scripted_llm, tmp_path, monkeypatch):
    monkeypatch.setenv(LLM_URL_VAR, scripted_llm.url)
    monkeypatch.setenv(JUDGE_KEY_VAR, "scripted-judge-takes-any-key")
    agent = copy_example_agent(
        tmp_path / "agent", tasks=("weather_paris",), models=("competent",), judge={"model": JUDGE}
    )
    root = tmp_path / "home"
    scripted_llm.set_model(JUDGE, pad_reasoning=ANSWER_CHARS)
    instance = dg.DagsterInstance.ephemeral()
    try:
        result = evaluate(agent, root, instance, PARTITION)
    finally:
        instance.dispose()
        scripted_llm.set_model(JUDGE, pad_reasoning=0)
    assert result.success, failure_messages(result)
    (episode,) = episodes_in(only_run_dir(root, PARTITION)).values()
    scores = episode["qualitative_scores"]
    assert scores["judge_errors"], scores
    for rubric, error in scores["judge_errors"].items():
        assert "the answer is longer than 1048576 bytes (max_answer_bytes): cut there and not used" in error, rubric
        assert (
            scores[
                {
                    "relevance": "response_relevance",
                    "task_completion": "task_completion_quality",
                    "hallucination": "hallucination_score",
                    "tool_call": "tool_call_appropriateness",
                }[rubric]
            ]
            is None
        )
    assert "and so on and so on" not in json.dumps(episode)
    stored = _bytes_under(root, agent / "eval" / "output")
    assert stored < 8_000_000, f"{stored} bytes stored for one episode"
