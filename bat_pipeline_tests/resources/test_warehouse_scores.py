"""Score rows in the warehouse: one long table, and the views that keep the shape of the
tables they replaced."""

from __future__ import annotations

import json

from bat_pipeline.engine.contracts import ScoreRow
from bat_pipeline.engine.redaction import Redactor
from bat_pipeline.resources.warehouse import TEXT_CHARS, Warehouse
from bat_pipeline_tests.resources.test_warehouse import TASKS, episode, ref

JUDGE = "openai:judge-1"


def rows_of_every_kind() -> list[ScoreRow]:
    """What a run with the scorer model writes: checks, a plug-in scorer, two judge
    samples, a failed and a skipped rubric, and a gating LLM criterion last."""
    return [
        ScoreRow(
            scorer="status",
            criterion="status",
            value=1.0,
            raw=1.0,
            scale="pass/fail",
            passed=True,
            gating=True,
            reason="completed, as expected",
        ),
        ScoreRow(
            scorer="output",
            criterion="output[0]",
            value=0.0,
            raw=0.0,
            scale="pass/fail",
            passed=False,
            gating=True,
            reason="'Paris' not in the output",
        ),
        ScoreRow(
            scorer="answer_length",
            criterion="chars",
            value=0.4,
            raw=120,
            scale="count",
            reason="120 characters",
            details={"chars": 120, "limit": 300},
        ),
        ScoreRow(
            scorer="relevance",
            criterion="response_relevance",
            value=0.8,
            raw=0.8,
            scale="0..1",
            judge=JUDGE,
            reason="on topic",
        ),
        ScoreRow(
            scorer="relevance",
            criterion="response_relevance",
            value=0.6,
            raw=0.6,
            scale="0..1",
            sample=1,
            judge=JUDGE,
            reason="mostly on topic",
        ),
        ScoreRow(
            scorer="task_completion",
            criterion="task_completion_quality",
            judge=JUDGE,
            reason="judge failed: HTTP 500 from the judge",
        ),
        ScoreRow(
            scorer="tool_call",
            criterion="tool_call_appropriateness",
            judge=JUDGE,
            reason="skipped: the task expects no tool call",
        ),
        ScoreRow(
            scorer="grader",
            criterion="accuracy",
            value=1.0,
            raw=5,
            scale="1..5",
            passed=True,
            gating=True,
            judge=JUDGE,
            reason="x" * (TEXT_CHARS + 10),
        ),
    ]


def test_the_episode_rows_are_stored_as_they_are(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb")
    ep = episode("t0", 0, False)
    ep.scores = rows_of_every_kind()
    written = wh.write_partition(ref(tmp_path, "r1", "a").model_copy(update={"agent_id": "weather"}), [ep], TASKS)

    assert written["episode_scores"] == 8
    rows = wh.query("SELECT * EXCLUDE (run_id, model_key, task_id, attempt) FROM episode_scores ORDER BY position")
    assert [r["position"] for r in rows] == list(range(8)) and {r["agent_id"] for r in rows} == {"weather"}
    length = rows[2]
    assert (length["scorer"], length["criterion"], length["value"], length["raw"], length["scale"]) == (
        "answer_length",
        "chars",
        0.4,
        120.0,
        "count",
    )
    assert (length["passed"], length["gating"], length["judge"]) == (None, False, None)
    assert json.loads(length["details"]) == {"chars": 120, "limit": 300} and rows[0]["details"] is None
    assert (rows[4]["sample"], rows[4]["judge"]) == (1, JUDGE)
    assert len(rows[7]["reason"]) == TEXT_CHARS

    # The verdict's view: the gating rows, numbered in order (the plug-in row in between is not one).
    checks = wh.query("SELECT position, check_name, passed, detail FROM verdict_checks ORDER BY position")
    assert [(c["position"], c["check_name"], c["passed"]) for c in checks] == [
        (0, "status", True),
        (1, "output[0]", False),
        (2, "accuracy", True),
    ]
    assert checks[1]["detail"] == "'Paris' not in the output"
    # The judge's view: bat-cli's rubrics only, one row per sample; a failure's error and a skip's reason.
    judged = wh.query(
        "SELECT rubric, score_field, score, reasoning, error FROM judge_scores ORDER BY rubric, score DESC NULLS LAST"
    )
    assert judged == [
        {
            "rubric": "relevance",
            "score_field": "response_relevance",
            "score": 0.8,
            "reasoning": "on topic",
            "error": None,
        },
        {
            "rubric": "relevance",
            "score_field": "response_relevance",
            "score": 0.6,
            "reasoning": "mostly on topic",
            "error": None,
        },
        {
            "rubric": "task_completion",
            "score_field": "task_completion_quality",
            "score": None,
            "reasoning": "judge failed: HTTP 500 from the judge",
            "error": "HTTP 500 from the judge",
        },
        {
            "rubric": "tool_call",
            "score_field": "tool_call_appropriateness",
            "score": None,
            "reasoning": "skipped: the task expects no tool call",
            "error": None,
        },
    ]


def test_an_episode_without_rows_loads_the_rows_of_its_verdict_and_judge_scores(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb")
    wh.write_partition(ref(tmp_path, "r1", "a"), [episode("t0", 0, False)], TASKS)

    rows = wh.query(
        "SELECT scorer, criterion, value, passed, gating, reason, details FROM episode_scores ORDER BY position"
    )
    assert [(r["scorer"], r["criterion"], r["value"], r["passed"], r["gating"]) for r in rows] == [
        ("status", "status", 0.0, False, True),
        ("output", "output[0]", 1.0, True, True),
        ("relevance", "response_relevance", 0.75, None, False),
        ("task_completion", "task_completion_quality", None, None, False),
        ("hallucination", "hallucination_score", None, None, False),
        ("tool_call", "tool_call_appropriateness", None, None, False),
    ]
    assert json.loads(rows[3]["details"]) == {"error": "HTTP 500"}
    # The views read as the tables of schema version 2 did.
    assert wh.query("SELECT position, check_name, passed, detail FROM verdict_checks ORDER BY position") == [
        {"position": 0, "check_name": "status", "passed": False, "detail": "status completed"},
        {"position": 1, "check_name": "output[0]", "passed": True, "detail": "contains 'x'"},
    ]
    assert wh.query("SELECT rubric, score, reasoning, error FROM judge_scores ORDER BY rubric") == [
        {"rubric": "hallucination", "score": None, "reasoning": None, "error": None},
        {"rubric": "relevance", "score": 0.75, "reasoning": "on topic", "error": None},
        {"rubric": "task_completion", "score": None, "reasoning": "judge failed", "error": "HTTP 500"},
        {"rubric": "tool_call", "score": None, "reasoning": None, "error": None},
    ]
    # Judge columns of model_metrics are still each rubric's mean.
    metrics = wh.model_summary("r1")[0]
    assert metrics["response_relevance"] == 0.75 and metrics["task_completion_quality"] is None


def test_a_new_scorer_reaches_the_score_means_and_the_charts(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb")
    for model_key, chars in (("a", 0.4), ("b", 0.9)):
        eps = [episode("t0", 0, True, judged=False), episode("t1", 0, True, judged=False)]
        for ep in eps:
            ep.scores = [
                ScoreRow(scorer="status", criterion="status", value=1.0, passed=True, gating=True),
                ScoreRow(scorer="answer_length", criterion="chars", value=chars, raw=100 * chars),
            ]
        wh.write_partition(ref(tmp_path, "r1", model_key), eps, TASKS)

    means = {(s["model_key"], s["scorer"], s["criterion"]): s["mean"] for s in wh.chart_data().scores}
    assert means == {
        ("a", "status", "status"): 1.0,
        ("a", "answer_length", "chars"): 0.4,
        ("b", "status", "status"): 1.0,
        ("b", "answer_length", "chars"): 0.9,
    }
    assert wh.query("SELECT count(*) AS n FROM judge_scores") == [{"n": 0}]


def test_secrets_in_reasons_and_details_are_redacted(tmp_path):
    secret = "sk-scores-canary-51c2e9"
    ep = episode("t0", 0, True)
    ep.scores = [
        ScoreRow(
            scorer="grader",
            criterion="accuracy",
            value=0.5,
            reason=f"saw {secret}",
            details={"answer": f"the key is {secret}", secret: 1},
        )
    ]
    wh = Warehouse(tmp_path / "w.duckdb")
    wh.write_partition(ref(tmp_path, "r1", "a"), [ep], TASKS, redactor=Redactor([secret]))
    row = wh.query("SELECT reason, details FROM episode_scores WHERE scorer = 'grader'")[0]
    assert row["reason"] == "saw [redacted]"
    assert json.loads(row["details"]) == {"answer": "the key is [redacted]", "[redacted]": 1}
