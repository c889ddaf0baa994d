"""The judge protocol holds for a scorer family the client was not written for: the yes/no
scorer of yes_no_scorer.py (its own question, parse and samples) goes through the same
retries and cache as bat-cli's rubrics, beside them, against the scripted judge server."""

from __future__ import annotations

import asyncio

import pytest

from bat_pipeline.engine.contracts import JudgeSettings
from bat_pipeline.engine.judge import JudgeRunResult
from bat_pipeline.engine.scorers import load_modules
from bat_pipeline.resources.judge import JudgeClient, judge_episodes
from bat_pipeline.resources.judge_cache import JudgeCache
from bat_pipeline_tests.support.judge_server import Reply, answer, serve_judge, weather_episode, weather_task

ENV = {"OPENAI_API_KEY": "sk-protocol-test-key-77c1"}
PROJECT = ["bat_pipeline_tests.resources.yes_no_scorer"]
"""As `evaluation.scorers` names it: the project's own scorers apply only when named."""


def is_yes_no(request) -> bool:
    return "Answer yes or no" in request["body"]["messages"][0]["content"]


@pytest.fixture
def server():
    load_modules(PROJECT)
    with serve_judge() as running:
        said = iter(["Maybe, hard to tell.", "Yes, it gives the weather in Paris.", "No, it does not."])
        running.script(default=lambda r: Reply(content=next(said)) if is_yes_no(r) else answer(0.8))
        yield running


def judge(server, root, samples: int = 1, **meta) -> JudgeRunResult:
    task = weather_task()
    task.meta.update(yes_no=samples, **meta)
    settings = JudgeSettings(provider="openai", model="judge-1", base_url=server.base_url, max_retries=2)
    client = JudgeClient(settings, environ=ENV, cache=JudgeCache(root), backoff_base_s=0.01)
    return asyncio.run(judge_episodes(client, [weather_episode()], [task], PROJECT))


def test_an_unreadable_answer_is_asked_again_and_the_answer_cached(server, tmp_path):
    first = judge(server, tmp_path)
    rows = first.rows[0]
    assert [r.scorer for r in rows] == [
        "relevance",
        "task_completion",
        "hallucination",
        "tool_call",
        "answers_question",
    ]
    mine = rows[-1]
    assert mine.value == 1.0 and mine.passed is True and mine.scale == "yes/no" and mine.judge == "openai:judge-1"
    assert mine.reason == "Yes, it gives the weather in Paris." and mine.details == {"cached": False}
    asked = [r["body"] for r in server.requests if is_yes_no(r)]
    assert len(asked) == 2 and first.stats.retries == 1 and first.stats.failures == 0
    assert all("response_format" not in b and "temperature" not in b for b in asked)  # plain text, server's default
    assert first.scores[0].response_relevance == 0.8 and set(first.scores[0].judge_reasoning) == {
        "relevance",
        "task_completion",
        "hallucination",
        "tool_call",
    }

    server.reset()
    again = judge(server, tmp_path)
    assert server.requests == [] and again.stats.cache_hits == 5 and again.stats.calls == 0
    assert again.rows[0][-1].value == 1.0 and again.rows[0][-1].details == {"cached": True}
    assert again.scores == first.scores


def test_each_sample_is_its_own_answer_in_the_cache(server, tmp_path):
    judge(server, tmp_path)
    server.reset()
    two = judge(server, tmp_path, samples=2)
    mine = [r for r in two.rows[0] if r.scorer == "answers_question"]
    assert [(r.sample, r.value, r.details["cached"]) for r in mine] == [(0, 1.0, True), (1, 0.0, False)]
    assert len(server.requests) == 1 and two.stats.cache_hits == 5


def test_an_answer_that_never_reads_is_a_failed_row(server, tmp_path):
    server.script(default=lambda r: Reply(content="Perhaps.") if is_yes_no(r) else answer(0.8))
    result = judge(server, tmp_path)
    mine = result.rows[0][-1]
    assert mine.value is None and mine.reason.startswith("judge failed: unusable answer: neither yes nor no")
    assert "(gave up after 3 attempts)" in mine.details["error"] and result.stats.failures == 1
    assert result.scores[0].judge_errors == {}
    assert len(JudgeCache(tmp_path)) == 4  # the rubrics' answers; no failure is stored


def test_a_scorer_that_raises_leaves_one_failed_row_and_the_others_stand(server, tmp_path):
    result = judge(server, tmp_path, broken=True)
    rows = {r.scorer: r for r in result.rows[0]}
    assert rows["broken"].value is None and rows["broken"].criterion == "broken"
    assert rows["broken"].reason == "judge failed: the scorer raised RuntimeError: a bug in the scorer"
    assert rows["broken"].judge == "openai:judge-1" and result.stats.failures == 1
    assert rows["answers_question"].value == 1.0 and rows["relevance"].value == 0.8
