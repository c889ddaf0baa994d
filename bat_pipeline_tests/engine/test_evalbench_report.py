"""EvalBench's CSV tables from warehouse rows (SPEC §12): scores on 0–100, one line per
episode and scorer, the summary's counts."""

from __future__ import annotations

from bat_pipeline.engine.evalbench_report import csv_score, csv_tables

KEY = {"run_id": "r1", "model_key": "m", "task_id": "s1", "attempt": 0}


def score(position, scorer, criterion, value, raw, scale, passed=None, **extra):
    return {
        **KEY,
        "position": position,
        "scorer": scorer,
        "criterion": criterion,
        "value": value,
        "raw": raw,
        "scale": scale,
        "passed": passed,
        "judge": None,
        "reason": extra.pop("reason", "why"),
        "details": extra.pop("details", None),
        **extra,
    }


ROWS = [
    score(0, "trajectory_matcher", "trajectory_matcher", 0.5, 50.0, "0..100", False),
    score(1, "trajectory_matcher", "trajectory_matcher:exact", 0.0, 0.0, "pass/fail", False),
    score(2, "turn_count", "turn_count", None, 3.0, "count"),
    score(3, "relevance", "response_relevance", 0.8, 0.8, "0..1"),
    score(
        4,
        "goal_completion",
        "goal_completion",
        None,
        None,
        "0..100",
        reason="judge failed: HTTP 500",
        details='{"error": "HTTP 500"}',
    ),
    score(
        5,
        "sql_result_match",
        "sql_result_match",
        0.0,
        0.0,
        "0..100",
        False,
        details='{"comparison_error": "no such column: nope"}',
    ),
    {**score(0, "trajectory_matcher", "trajectory_matcher", 1.0, 100.0, "0..100", True), "task_id": "s2"},
]


def test_scores_are_on_evalbenchs_scale_one_line_per_scorer():
    assert [csv_score(r) for r in ROWS[:5]] == [50.0, 0.0, 3.0, 80.0, None]
    lines = csv_tables([], [], [], ROWS)["scores"][1]
    assert [(line["id"], line["comparator"], line["criterion"]) for line in lines] == [
        ("s1", "trajectory_matcher", "trajectory_matcher"),
        ("s1", "turn_count", "turn_count"),
        ("s1", "relevance", "response_relevance"),
        ("s1", "goal_completion", "goal_completion"),
        ("s1", "sql_result_match", "sql_result_match"),
        ("s2", "trajectory_matcher", "trajectory_matcher"),
    ]
    assert lines[3]["comparison_error"] == "HTTP 500" and lines[4]["comparison_error"] == "no such column: nope"
    assert lines[0]["comparison_error"] == "" and lines[0]["comparison_logs"] == "why"
    assert lines[0]["job_id"] == "r1" and lines[0]["target"] == "m"


def test_the_summary_counts_correct_results_per_comparator():
    summary = {s["metric_name"]: s for s in csv_tables([], [], [], ROWS)["summary"][1]}
    assert summary["trajectory_matcher"] == {
        "job_id": "r1",
        "target": "m",
        "metric_name": "trajectory_matcher",
        "metric_score": 75.0,
        "correct_results_count": 1,
        "total_results_count": 2,
    }
    assert summary["turn_count"]["correct_results_count"] == 0 and summary["turn_count"]["metric_score"] == 3.0
    assert summary["goal_completion"]["metric_score"] is None


def test_evals_join_the_conversation():
    episode = {
        **KEY,
        "final_status": "completed",
        "passed": True,
        "eval_error": None,
        "final_output": "ok",
        "wall_ms": 10.0,
        "tokens_in": 5,
        "tokens_out": 2,
    }
    conversation = {
        **KEY,
        "turns": 2,
        "generated_turns": 1,
        "max_turns": 4,
        "ended": "terminated",
        "user_model": "openai:u",
        "user_tokens_in": 7,
        "user_tokens_out": 1,
        "transcript": "[]",
    }
    [line] = csv_tables([], [episode], [conversation], [])["evals"][1]
    assert (line["id"], line["turns"], line["ended"], line["simulated_user_tokens_in"]) == ("s1", 2, "terminated", 7)
