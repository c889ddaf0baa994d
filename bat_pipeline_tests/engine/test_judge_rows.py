"""The judge step's rows: bat-cli's qualitative_scores derived from them, and how they sit
on the episode beside the deterministic rows."""

from __future__ import annotations

from bat_pipeline.engine.contracts import JudgeScores, ScoreRow
from bat_pipeline.engine.judge import mean_scores, qualitative_scores, record
from bat_pipeline.engine.scorers.judging import null_row
from bat_pipeline_tests.support.judge_server import weather_episode

JUDGE = "openai:judge-1"


def scored(scorer: str, criterion: str, value: float, reason: str, **over) -> ScoreRow:
    return ScoreRow(
        scorer=scorer, criterion=criterion, value=value, raw=value, scale="0..1", judge=JUDGE, reason=reason, **over
    )


ROWS = [
    scored("relevance", "response_relevance", 0.9, "on topic"),
    null_row(
        "task_completion", "task_completion_quality", JUDGE, "judge failed: HTTP 500: down (gave up after 3 attempts)"
    ),
    scored("hallucination", "hallucination_score", 1.0, ""),
    null_row("tool_call", "tool_call_appropriateness", JUDGE, "skipped: the task expects no tool calls"),
]


def test_the_four_rubric_rows_give_bat_clis_record():
    assert qualitative_scores(ROWS) == JudgeScores(
        response_relevance=0.9,
        hallucination_score=1.0,
        judge_reasoning={
            "relevance": "on topic",
            "task_completion": "judge failed: HTTP 500: down (gave up after 3 attempts)",
            "hallucination": "",
            "tool_call": "skipped: the task expects no tool calls",
        },
        judge_errors={"task_completion": "HTTP 500: down (gave up after 3 attempts)"},
    )


def test_rubric_order_not_row_order_and_other_rows_left_out():
    other = [
        scored("answers_question", "answers", 1.0, "yes"),
        scored("relevance", "response_relevance", 0.1, "second sample", sample=1),
    ]
    derived = qualitative_scores([*other, *reversed(ROWS)])
    assert derived == qualitative_scores(ROWS)
    assert list(derived.judge_reasoning) == ["relevance", "task_completion", "hallucination", "tool_call"]


def test_a_reasoning_that_reads_like_a_failure_is_not_an_error():
    row = scored("relevance", "response_relevance", 0.5, "judge failed: to see the point, I think")
    assert qualitative_scores([row]).judge_errors == {}


def test_outcome_mode_and_not_judged_rows():
    not_judged = null_row(
        "task_completion", "task_completion_quality", JUDGE, "not judged: the attempt failed (turn timed out)"
    )
    assert qualitative_scores([not_judged]) == JudgeScores(
        judge_reasoning={"task_completion": "not judged: the attempt failed (turn timed out)"}
    )
    assert qualitative_scores([]) == JudgeScores()


def test_record_replaces_llm_rows_and_keeps_deterministic_ones_first():
    episode = weather_episode()
    check = ScoreRow(
        scorer="status",
        criterion="status",
        value=1.0,
        raw=1,
        scale="pass/fail",
        passed=True,
        gating=True,
        reason="completed, as expected",
    )
    episode.scores = [scored("relevance", "response_relevance", 0.2, "old run"), check]
    record(episode, ROWS)
    assert episode.scores == [check, *ROWS]
    assert episode.qualitative_scores.response_relevance == 0.9
    record(episode, ROWS[:1])
    assert episode.scores == [check, ROWS[0]] and episode.qualitative_scores.task_completion_quality is None


def test_mean_scores_over_non_null_values():
    means = mean_scores([qualitative_scores(ROWS), JudgeScores(response_relevance=0.5), JudgeScores()])
    assert means == {
        "response_relevance": 0.7,
        "task_completion_quality": None,
        "hallucination_score": 1.0,
        "tool_call_appropriateness": None,
    }
