"""bat-cli's four rubrics as LLM scorers: which rows each episode gets in each mode, and
their shape, asked through the real client against the scripted judge server."""

from __future__ import annotations

import asyncio

import pytest

from bat_pipeline.engine.contracts import JudgeSettings
from bat_pipeline.engine.judge import JudgeRunResult
from bat_pipeline.resources.judge import JudgeClient, judge_episodes
from bat_pipeline_tests.support.judge_server import Reply, answer, serve_judge, weather_episode, weather_task

ENV = {"OPENAI_API_KEY": "sk-scorers-test-key-1a2b"}
FIELDS = {
    "relevance": "response_relevance",
    "task_completion": "task_completion_quality",
    "hallucination": "hallucination_score",
    "tool_call": "tool_call_appropriateness",
}


@pytest.fixture(scope="module")
def server():
    with serve_judge() as running:
        yield running


@pytest.fixture(autouse=True)
def fresh(server):
    server.reset()
    server.script(default=answer(0.8, reasoning="looks right"))


def judge(server, episodes, tasks, **over) -> JudgeRunResult:
    settings = JudgeSettings(
        **{"provider": "openai", "model": "judge-1", "base_url": server.base_url, "max_retries": 0, **over}
    )
    return asyncio.run(judge_episodes(JudgeClient(settings, environ=ENV), episodes, tasks))


def by_scorer(rows) -> dict[str, tuple[float | None, str]]:
    return {row.scorer: (row.value, row.reason) for row in rows}


def test_full_mode_asks_the_four_rubrics_one_row_each(server):
    episode = weather_episode()
    result = judge(server, [episode], [weather_task()])
    rows = result.rows[0]
    assert [r.scorer for r in rows] == list(FIELDS) and len(server.requests) == 4
    for row in rows:
        assert row.criterion == FIELDS[row.scorer] and row.value == row.raw == 0.8 and row.scale == "0..1"
        assert row.passed is None and row.gating is False and row.sample == 0
        assert row.judge == "openai:judge-1" and row.reason == "looks right"
    assert episode.scores == rows and episode.qualitative_scores == result.scores[0]


def test_tool_call_is_skipped_for_a_task_without_expected_calls(server):
    result = judge(server, [weather_episode()], [weather_task(tool_calls=False)])
    assert by_scorer(result.rows[0])["tool_call"] == (None, "skipped: the task expects no tool calls")
    assert len(server.requests) == 3 and result.stats.skipped == 1 and result.stats.questions == 3


def test_outcome_mode_asks_task_completion_in_outcome_form_only(server):
    result = judge(server, [weather_episode()], [weather_task()], mode="outcome")
    rows = by_scorer(result.rows[0])
    assert rows["task_completion"] == (0.8, "looks right")
    why = "skipped: judge mode is outcome (only task completion is judged)"
    assert rows["relevance"] == rows["hallucination"] == rows["tool_call"] == (None, why)
    assert len(server.requests) == 1 and result.stats.skipped == 3
    prompt = server.requests[0]["body"]["messages"]
    assert "judged from the outcome alone" in prompt[0]["content"]
    assert "Recorded steps" not in prompt[1]["content"]


@pytest.mark.parametrize("mode, rubrics", [("full", list(FIELDS)), ("outcome", ["task_completion"])])
def test_an_episode_whose_attempt_failed_is_not_judged(server, mode, rubrics):
    broken = weather_episode(attempt=1)
    broken.aux["eval_error"] = "TimeoutError: turn 1 took longer than 5 s"
    result = judge(server, [broken], [weather_task(tool_calls=False)], mode=mode)
    why = "not judged: the attempt failed (TimeoutError: turn 1 took longer than 5 s)"
    assert by_scorer(result.rows[0]) == dict.fromkeys(rubrics, (None, why))
    assert server.requests == [] and result.stats.episodes == 0 and result.stats.failures == 0
    assert result.scores[0].judge_errors == {}


@pytest.mark.parametrize("mode, rubrics", [("full", list(FIELDS)), ("outcome", ["task_completion"])])
def test_an_episode_whose_task_left_the_dataset_fails_what_the_mode_asks(server, mode, rubrics):
    result = judge(server, [weather_episode()], [], mode=mode)
    why = "task 'weather_paris' is not in the dataset"
    assert by_scorer(result.rows[0]) == dict.fromkeys(rubrics, (None, f"judge failed: {why}"))
    assert result.scores[0].judge_errors == dict.fromkeys(rubrics, why)
    assert server.requests == [] and result.stats.failures == len(rubrics)


def test_a_failed_question_is_a_null_row_with_the_cause(server):
    def reply(request):
        return (
            Reply(status=500, error="down") if "RELEVANCE" in request["body"]["messages"][0]["content"] else answer(0.6)
        )

    server.script(default=reply)
    result = judge(server, [weather_episode()], [weather_task()])
    relevance = result.rows[0][0]
    assert relevance.value is None and relevance.reason == "judge failed: HTTP 500: down (gave up after 1 attempt)"
    assert relevance.details == {"error": "HTTP 500: down (gave up after 1 attempt)"}
    assert [r.value for r in result.rows[0][1:]] == [0.6, 0.6, 0.6] and result.stats.failures == 1
