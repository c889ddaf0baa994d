"""Score rows of an episode written without them: derived from its verdict and judge scores."""

from __future__ import annotations

from bat_pipeline.engine.contracts import Episode, JudgeScores, ScoreRow, Verdict, VerdictCheck
from bat_pipeline.engine.contracts.scores import SCORE_FIELDS
from bat_pipeline.engine.derived_scores import score_rows

CHECKS = [
    ("status", "status"),
    ("output[0]", "output"),
    ("output[1]", "output"),
    ("tool_call:get_weather", "tool_calls"),
    ("agent_call:planner", "agent_calls"),
    ("model_calls", "limits"),
    ("tokens", "limits"),
    ("no_errors", "errors"),
    ("spans", "spans"),
    ("attempt", "attempt"),
]


def test_each_check_is_a_gating_pass_fail_row_of_its_scorer_in_order():
    checks = [VerdictCheck(check=name, passed=i % 3 != 0, detail=f"detail {i}") for i, (name, _) in enumerate(CHECKS)]
    episode = Episode(model_name="openai:m", task_id="t", verdict=Verdict(passed=False, reason="", checks=checks))
    rows = score_rows(episode)
    assert [(r.scorer, r.criterion) for r in rows] == [(scorer, name) for name, scorer in CHECKS]
    for i, row in enumerate(rows):
        ok = i % 3 != 0
        assert (row.value, row.raw, row.passed, row.scale, row.gating) == (float(ok), float(ok), ok, "pass/fail", True)
        assert (row.reason, row.sample, row.judge, row.details) == (f"detail {i}", 0, None, {})


def test_judge_scores_are_one_row_per_rubric_after_the_checks():
    episode = Episode(
        model_name="openai:m",
        task_id="t",
        verdict=Verdict(passed=True, reason="", checks=[VerdictCheck(check="status", passed=True, detail="ok")]),
        qualitative_scores=JudgeScores(
            response_relevance=0.5,
            judge_reasoning={
                "relevance": "on topic",
                "task_completion": "judge failed: HTTP 500",
                "tool_call": "skipped: no tool calls expected",
            },
            judge_errors={"task_completion": "HTTP 500", "hallucination": "timed out"},
        ),
    )
    rows = score_rows(episode)[1:]
    assert [(r.scorer, r.criterion, r.value, r.reason, r.details) for r in rows] == [
        ("relevance", "response_relevance", 0.5, "on topic", {}),
        ("task_completion", "task_completion_quality", None, "judge failed: HTTP 500", {"error": "HTTP 500"}),
        ("hallucination", "hallucination_score", None, "judge failed: timed out", {"error": "timed out"}),
        ("tool_call", "tool_call_appropriateness", None, "skipped: no tool calls expected", {}),
    ]
    assert all(not r.gating and r.passed is None and r.scale == "0..1" for r in rows)


def test_rows_on_the_episode_are_used_as_they_are():
    own = [
        ScoreRow(scorer="status", criterion="status", value=1.0, gating=True, passed=True),
        ScoreRow(scorer="relevance", criterion="response_relevance", value=0.25, judge="openai:j"),
    ]
    episode = Episode(model_name="openai:m", task_id="t", scores=own, verdict=VERDICT, qualitative_scores=JUDGED)
    assert score_rows(episode) == own
    assert score_rows(Episode(model_name="openai:m", task_id="t")) == []


def test_what_the_rows_lack_comes_from_the_verdict_and_the_judge_scores():
    checks_only = [
        ScoreRow(scorer="status", criterion="status", value=1.0, gating=True, passed=True),
        ScoreRow(scorer="answer_length", criterion="chars", value=0.5),
    ]
    rows = score_rows(
        Episode(model_name="openai:m", task_id="t", scores=checks_only, verdict=VERDICT, qualitative_scores=JUDGED)
    )
    assert rows[:2] == checks_only and [r.scorer for r in rows[2:]] == list(SCORE_FIELDS)
    judge_only = [ScoreRow(scorer="relevance", criterion="response_relevance", value=0.25)]
    rows = score_rows(
        Episode(model_name="openai:m", task_id="t", scores=judge_only, verdict=VERDICT, qualitative_scores=JUDGED)
    )
    assert [(r.scorer, r.criterion, r.gating) for r in rows] == [
        ("output", "output[0]", True),
        ("relevance", "response_relevance", False),
    ]
    assert rows[1] == judge_only[0]


VERDICT = Verdict(passed=False, reason="", checks=[VerdictCheck(check="output[0]", passed=False, detail="missing")])
JUDGED = JudgeScores(response_relevance=0.75)


def test_derived_rows_name_the_scorers_that_write_the_checks_live():
    from bat_pipeline.engine.derived_scores import check_scorer
    from bat_pipeline.engine.verdicts import score_checks
    from bat_pipeline_tests.engine import verdict_corpus

    seen = set()
    for _, task, episode in verdict_corpus.cases():
        for row in score_checks(task, episode):
            assert check_scorer(row.criterion) == row.scorer, row
            seen.add(row.scorer)
    assert seen >= {"status", "output", "tool_calls", "agent_calls", "limits", "errors", "spans", "attempt"}
