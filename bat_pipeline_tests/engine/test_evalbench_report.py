"""EvalBench's CSV tables from warehouse rows (SPEC §12): scores on 0–100, one line per
episode and scorer, the summary's counts."""

from __future__ import annotations

import json

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


RUNS = [{"run_id": "r1", "model_key": "m", "started_at": "2026-01-05T10:00:00.123456+00:00", "k": 1}]


def test_scores_are_on_evalbenchs_scale_one_line_per_comparator():
    assert [csv_score(r) for r in ROWS[:5]] == [50.0, 0.0, 3.0, 80.0, None]
    columns, lines = csv_tables(RUNS, [], [], ROWS)["scores"]
    # EvalBench's columns first (ComparisonResult.to_dict and the scoring item's), then ours.
    assert columns[:10] == [
        "comparator",
        "score",
        "comparison_error",
        "comparison_logs",
        "id",
        "generated_sql",
        "generated_error",
        "dialects",
        "database",
        "job_id",
    ]
    # In the order EvalBench's score.compare runs its comparators, each episode's together.
    assert [(line["id"], line["comparator"], line["criterion"]) for line in lines] == [
        ("s1", "trajectory_matcher", "trajectory_matcher"),
        ("s1", "goal_completion", "goal_completion"),
        ("s1", "turn_count", "turn_count"),
        ("s1", "relevance", "response_relevance"),
        ("s1", "sql_result_match", "sql_result_match"),
        ("s2", "trajectory_matcher", "trajectory_matcher"),
    ]
    by = {(line["id"], line["comparator"]): line for line in lines}
    assert by[("s1", "goal_completion")]["comparison_error"] == "HTTP 500"
    assert by[("s1", "goal_completion")]["score"] == 0.0  # EvalBench's ComparisonResult starts at 0
    assert by[("s1", "sql_result_match")]["comparison_error"] == "no such column: nope"
    assert lines[0]["comparison_error"] == "" and lines[0]["comparison_logs"] == "why"
    assert (lines[0]["job_id"], lines[0]["target"], lines[0]["generated_sql"], lines[0]["database"]) == (
        "r1",
        "m",
        "skipped",
        "unknown",
    )


def test_indexed_comparators_are_lines_of_their_own():
    rows = [
        score(0, "binary_rubric_scorer", "binary_rubric_scorer_0", 1.0, 100.0, "0..100", True),
        score(1, "binary_rubric_scorer", "binary_rubric_scorer_1", 0.0, 0.0, "0..100", False),
    ]
    lines = csv_tables(RUNS, [], [], rows)["scores"][1]
    assert [(line["comparator"], line["score"]) for line in lines] == [
        ("binary_rubric_scorer_0", 100.0),
        ("binary_rubric_scorer_1", 0.0),
    ]


def test_the_summary_is_evalbenchs_analyzer():
    """evalbench/reporting/analyzer.py: a binary metric scores 100 and counts the lines at
    100; a count metric gives the mean and the sum; behavioral_metrics is only logged; the
    executable line closes; a column with a fraction is all floats, as pandas writes it."""
    run = {
        "orchestrator": "agent",
        "num_trials": 1,
        "scorers": {"trajectory_matcher": {}, "turn_count": {}, "goal_completion": {}, "behavioral_metrics": {}},
    }
    columns, lines = csv_tables(RUNS, [], [], ROWS, run=run, run_time="2026-01-05 10:00:00.123456")["summary"]
    assert columns == [
        "metric_name",
        "metric_score",
        "correct_results_count",
        "total_results_count",
        "job_id",
        "run_time",
        "target",
    ]
    table = [
        (line["metric_name"], line["metric_score"], line["correct_results_count"], line["total_results_count"])
        for line in lines
    ]
    assert table == [
        ("trajectory_matcher", 100.0, 1.0, 2),
        ("turn_count", 3.0, 3.0, 1),
        ("goal_completion", 100.0, 0.0, 1),
        ("executable", 1.0, 2.0, 2),
    ]
    assert {line["run_time"] for line in lines} == {"2026-01-05 10:00:00.123456"} and lines[0]["job_id"] == "r1"
    only_binary = csv_tables(RUNS, [], [], ROWS[:1], run={"scorers": {"trajectory_matcher": {}}})["summary"][1]
    assert [(x["metric_score"], x["correct_results_count"]) for x in only_binary] == [(100, 0), (1, 1)]


def test_configs_are_evalbenchs_flattened_config():
    run = {
        "dataset_config": "d.json",
        "scorers": {"trajectory_matcher": {}, "exact_match": None, "goal": {"model_config": "j.yaml"}},
    }
    lines = csv_tables(RUNS, [], [], [], run=run, model={"generator": "cli", "env": {"A": "1"}})["configs"][1]
    assert [(line["config"], line["value"]) for line in lines] == [
        ("experiment_config.dataset_config", "d.json"),
        ("experiment_config.scorers.exact_match", None),  # an empty mapping leaves no key, as json_normalize
        ("experiment_config.scorers.goal.model_config", "j.yaml"),
        ("model_config.generator", "cli"),
        ("model_config.env.A", "1"),
        ("db_configs", "[]"),
    ]
    assert lines[0]["job_id"] == "r1" and lines[0]["run_time"] == ""


def test_evals_are_evalbenchs_eval_output_joined_with_the_conversation():
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
    envelope = '{"response": "ok", "stats": {"tools": {"byName": {"srv__a": {}, "Read": {}}}}}'
    conversation = {
        **KEY,
        "turns": 2,
        "generated_turns": 1,
        "max_turns": 4,
        "ended": "terminated",
        "user_model": "openai:u",
        "user_tokens_in": 7,
        "user_tokens_out": 1,
        "transcript": json.dumps([{"user": "hi", "agent": "ok", "harness_output": envelope}]),
    }
    [line] = csv_tables([], [episode], [conversation], [], scenarios={"s1": {"id": "s1", "max_turns": 4}})["evals"][1]
    assert (line["eval_id"], line["turns"], line["ended"], line["simulated_user_tokens_in"]) == (
        "s1",
        2,
        "terminated",
        7,
    )
    assert json.loads(line["conversation_history"]) == [{"user": "hi", "agent": envelope}]
    assert line["stdout"] == envelope and line["prompt"] == "hi" and line["returncode"] == 0
    assert line["accumulated_tools"] == "['srv__a', 'Read']" and line["scenario"] == "{'id': 's1', 'max_turns': 4}"
