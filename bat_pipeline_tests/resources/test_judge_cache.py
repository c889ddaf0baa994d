"""The judge cache: answers kept by content, on disk, across runs."""

from __future__ import annotations

import asyncio

import pytest

from bat_pipeline.engine.contracts import JudgeSettings
from bat_pipeline.engine.judge import JudgeRunResult
from bat_pipeline.engine.rubrics import build_messages
from bat_pipeline.resources.judge import JudgeClient, judge_episodes
from bat_pipeline.resources.judge_cache import JudgeCache, cache_key, legacy_key
from bat_pipeline.storage import write_json
from bat_pipeline_tests.support.judge_server import (
    Reply,
    answer,
    serve_judge,
    weather_episode,
    weather_task,
)

ENV = {"OPENAI_API_KEY": "sk-test"}
EPISODES = [weather_episode(attempt=0), weather_episode(attempt=1, answer_text="It is sunny in Paris, 21 C.")]


@pytest.fixture
def server():
    with serve_judge() as running:
        yield running


def judge(server, cache: JudgeCache, **over) -> JudgeRunResult:
    settings = JudgeSettings(
        **{"provider": "openai", "model": "judge-1", "base_url": server.base_url, "max_retries": 0, **over}
    )
    client = JudgeClient(settings, cache=cache, environ=ENV)
    return asyncio.run(judge_episodes(client, EPISODES, [weather_task()]))


def test_second_run_asks_nothing(server, tmp_path):
    first = judge(server, JudgeCache(tmp_path))
    assert len(server.requests) == 8 and first.stats.cache_hits == 0
    files = sorted((tmp_path / "judge_cache").glob("*/*.json"))
    assert len(files) == 8 and all(f.parent.name == f.stem[:2] for f in files)

    server.reset()
    cache = JudgeCache(tmp_path)  # a new run: only the files carry over
    second = judge(server, cache)
    assert server.requests == []
    assert second.stats.cache_hits == 8 and second.stats.calls == 0
    assert cache.hits == 8 and cache.misses == 0
    assert [s.model_dump() for s in second.scores] == [s.model_dump() for s in first.scores]


def test_changing_the_judge_model_asks_again(server, tmp_path):
    judge(server, JudgeCache(tmp_path))
    server.reset()
    judge(server, JudgeCache(tmp_path), model="judge-2")
    assert len(server.requests) == 8
    assert {r["body"]["model"] for r in server.requests} == {"judge-2"}


def test_changing_one_rubric_prompt_asks_only_that_rubric(server, tmp_path):
    judge(server, JudgeCache(tmp_path))
    server.reset()
    result = judge(server, JudgeCache(tmp_path), prompts={"hallucination": "Rounding is not a fabrication."})
    assert len(server.requests) == 2
    assert all("Rounding" in r["body"]["messages"][0]["content"] for r in server.requests)
    assert result.stats.cache_hits == 6


def test_failures_are_not_cached(server, tmp_path):
    server.script(default=Reply(content="no verdict today"))
    first = judge(server, JudgeCache(tmp_path), mode="outcome")
    assert first.scores[0].task_completion_quality is None
    assert not (tmp_path / "judge_cache").exists()
    server.script(default=answer(0.6))
    second = judge(server, JudgeCache(tmp_path), mode="outcome")
    assert [s.task_completion_quality for s in second.scores] == [0.6, 0.6]


def test_text_mode_answers_are_found_next_run(server, tmp_path):
    def no_schema(request):
        if "response_format" in request["body"]:
            return Reply(status=400, error="response_format is not supported")
        return Reply(content='Fine. {"reasoning": "ok", "score": 0.3}')

    server.script(default=no_schema)
    judge(server, JudgeCache(tmp_path), mode="outcome")
    server.reset()
    again = judge(server, JudgeCache(tmp_path), mode="outcome")
    assert server.requests == [] and [s.task_completion_quality for s in again.scores] == [0.3, 0.3]


def test_clear_and_corrupt_files(tmp_path):
    cache = JudgeCache(tmp_path)
    messages = [{"role": "user", "content": "x"}]
    key = cache_key("openai", "m", "relevance", messages, structured=True, schema={"type": "object"})
    assert key != cache_key("openai", "m", "relevance", messages, structured=False, schema={"type": "object"})
    assert key != cache_key("openai", "m", "relevance", messages, structured=True, schema={"type": "array"})
    assert key != cache_key("openai", "m", "relevance", messages, structured=True, schema={"type": "object"}, sample=1)
    cache.put(key, '{"score": 0.5}', purpose="relevance")
    assert cache.get(key) == '{"score": 0.5}' and len(cache) == 1
    cache.path(key).write_text("{not json")
    assert cache.get(key) is None
    assert (cache.hits, cache.misses) == (1, 1)
    assert cache.clear() == 1 and len(cache) == 0 and cache.clear() == 0


def test_answers_cached_before_the_scorer_model_are_still_found(server, tmp_path):
    """Entries of the earlier layout ({score, reasoning, rubric, ...} under a key without
    schema and sample) answer sample 0 of the same rubric question."""
    settings = JudgeSettings(provider="openai", model="judge-1", base_url=server.base_url, mode="outcome")
    cache = JudgeCache(tmp_path)
    for episode in EPISODES:
        messages = build_messages("task_completion", weather_task(), episode, settings)
        write_json(
            cache.path(legacy_key("openai", "judge-1", "task_completion", messages, True)),
            {
                "score": 0.4,
                "reasoning": "kept from before",
                "rubric": "task_completion",
                "provider": "openai",
                "model": "judge-1",
            },
        )
    result = judge(server, cache, mode="outcome")
    assert server.requests == [] and result.stats.cache_hits == 2
    assert [s.task_completion_quality for s in result.scores] == [0.4, 0.4]
    assert result.scores[0].judge_reasoning["task_completion"] == "kept from before"
