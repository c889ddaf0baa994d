"""The judge client against real HTTP servers on 127.0.0.1, scripted per test."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from bat_pipeline.engine.contracts import JudgeSettings
from bat_pipeline.engine.judge import JudgeRunResult
from bat_pipeline.resources.judge import JudgeClient, JudgeConfigError, judge_episodes
from bat_pipeline.resources.llm.providers import endpoint_url
from bat_pipeline.resources.llm.wire import retry_after as _retry_after
from bat_pipeline_tests.support.judge_server import (
    JudgeServer,
    Reply,
    answer,
    error,
    serve_judge,
    weather_episode,
    weather_task,
)

KEY = "sk-CANARY-7f3a9c1e5b2d4680"
ENV = {"OPENAI_API_KEY": KEY, "ANTHROPIC_API_KEY": KEY}


@pytest.fixture
def server():
    with serve_judge() as running:
        yield running


def settings(server: JudgeServer, **over) -> JudgeSettings:
    values = {
        "provider": "openai",
        "model": "judge-1",
        "base_url": server.base_url,
        "max_retries": 2,
        "timeout_s": 5.0,
        **over,
    }
    return JudgeSettings(**values)


def run(server: JudgeServer, episodes=None, tasks=None, **over) -> JudgeRunResult:
    client = JudgeClient(settings(server, **over), environ=ENV, backoff_base_s=0.01)
    return asyncio.run(judge_episodes(client, episodes or [weather_episode()], tasks or [weather_task()]))


def rubric_of(body: dict) -> str:
    system = body.get("system") or body["messages"][0]["content"]
    for word, rubric in (
        ("RELEVANCE", "relevance"),
        ("COMPLETION", "task_completion"),
        ("GROUNDEDNESS", "hallucination"),
        ("TOOL CALL", "tool_call"),
    ):
        if word in system:
            return rubric
    raise AssertionError("no rubric in the prompt")


# --- answers ---------------------------------------------------------------------------


def test_structured_answers(server):
    result = run(server, [weather_episode(attempt=0), weather_episode(attempt=1)])
    for scores in result.scores:
        assert scores.response_relevance == scores.task_completion_quality == 0.8
        assert scores.hallucination_score == scores.tool_call_appropriateness == 0.8
        assert scores.judge_reasoning == dict.fromkeys(
            ["relevance", "task_completion", "hallucination", "tool_call"], "looks right"
        )
        assert scores.judge_errors == {}
    assert result.stats.calls == result.stats.requests == 8 and result.stats.failures == 0
    request = server.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["authorization"] == f"Bearer {KEY}"
    fmt = request["body"]["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["schema"]["required"] == ["reasoning", "score"]
    assert result.mean_scores()["task_completion_quality"] == 0.8


def test_tool_call_skipped_without_expected_calls(server):
    result = run(server, tasks=[weather_task(tool_calls=False)])
    scores = result.scores[0]
    assert scores.tool_call_appropriateness is None
    assert scores.judge_reasoning["tool_call"].startswith("skipped: ")
    assert "tool_call" not in scores.judge_errors
    assert len(server.requests) == 3 and result.stats.skipped == 1


def test_outcome_mode_asks_once(server):
    result = run(server, mode="outcome")
    assert len(server.requests) == 1 and rubric_of(server.requests[0]["body"]) == "task_completion"
    assert result.scores[0].task_completion_quality == 0.8
    assert result.scores[0].response_relevance is None


def test_refused_structured_output_switches_that_rubric_to_text(server):
    def reply(request):
        body = request["body"]
        if rubric_of(body) == "relevance" and "response_format" in body:
            return error(400, "response_format json_schema is not supported by this model")
        verdict = json.dumps({"reasoning": "on topic", "score": 0.6})
        return Reply(content=verdict if "response_format" in body else f"Let me think.\n{verdict}\nDone.")

    server.script(default=reply)
    result = run(server, [weather_episode(attempt=0), weather_episode(attempt=1)])
    assert [s.response_relevance for s in result.scores] == [0.6, 0.6]
    relevance = [r["body"] for r in server.requests if rubric_of(r["body"]) == "relevance"]
    assert ["response_format" in b for b in relevance] == [True, False, False]
    others = [r["body"] for r in server.requests if rubric_of(r["body"]) != "relevance"]
    assert len(others) == 6 and all("response_format" in b for b in others)
    assert result.stats.text_fallbacks == ["relevance"] and result.stats.calls == 8


UNREADABLE = [
    (Reply(content="I would rather not say."), "unusable answer: no JSON object"),
    (Reply(content='{"reasoning": "scale of ten", "score": 7}'), "outside 0..1"),
    (Reply(raw=b'{"choices": ['), "response is not JSON"),
    (Reply(content=""), "answer is empty"),
]


@pytest.mark.parametrize(
    "reply, reason, asked",
    [
        *((reply, reason, 3) for reply, reason in UNREADABLE),
        (error(400, "model does not exist"), "HTTP 400: model does not exist", 1),
    ],
)
def test_unusable_answers_leave_null_with_the_reason(server, reply, reason, asked):
    server.script(default=reply)
    result = run(server, mode="outcome")
    scores = result.scores[0]
    assert scores.task_completion_quality is None
    assert reason in scores.judge_errors["task_completion"]
    assert scores.judge_reasoning["task_completion"].startswith("judge failed: ")
    assert result.stats.failures == 1 and len(server.requests) == asked
    if asked > 1:
        assert f"(gave up after {asked} attempts)" in scores.judge_errors["task_completion"]


@pytest.mark.parametrize("reply, reason", UNREADABLE)
def test_an_unreadable_answer_is_asked_again(server, reply, reason):
    server.script(reply, reply, answer(0.3, reasoning="third time"))
    result = run(server, mode="outcome", max_retries=2)
    scores = result.scores[0]
    assert scores.task_completion_quality == 0.3 and scores.judge_reasoning["task_completion"] == "third time"
    assert scores.judge_errors == {} and len(server.requests) == 3
    assert result.stats.retries == 2 and result.stats.failures == 0


def test_an_answer_over_max_answer_bytes_is_cut_not_used_and_not_asked_again(server):
    server.script(answer(0.9, reasoning="x" * 5000), answer(0.4, reasoning="short"))
    result = run(server, mode="outcome", max_answer_bytes=4096)
    scores = result.scores[0]
    assert scores.task_completion_quality is None and len(server.requests) == 1
    assert (
        "the answer is longer than 4096 bytes (max_answer_bytes): cut there and not used"
        in (scores.judge_errors["task_completion"])
    )
    assert "x" * 100 not in json.dumps(scores.model_dump())
    # Under the limit (the default's one megabyte), the same answer is read.
    server.script(answer(0.9, reasoning="x" * 5000))
    assert run(server, mode="outcome").scores[0].task_completion_quality == 0.9


def test_one_bad_rubric_keeps_the_others(server):
    server.script(
        default=lambda r: Reply(content="nonsense") if rubric_of(r["body"]) == "hallucination" else answer(0.9)
    )
    scores = run(server).scores[0]
    assert scores.hallucination_score is None and scores.task_completion_quality == 0.9
    assert set(scores.judge_errors) == {"hallucination"}


# --- retries ---------------------------------------------------------------------------


def test_429_honours_retry_after(server):
    server.script(error(429, "slow down", retry_after="1"), answer(0.7))
    started = time.monotonic()
    result = run(server, mode="outcome")
    elapsed = time.monotonic() - started
    assert result.scores[0].task_completion_quality == 0.7
    assert len(server.requests) == 2 and result.stats.retries == 1
    assert elapsed >= 0.9  # waited as told, not the 10 ms backoff


def test_5xx_then_success(server):
    server.script(error(500), error(503), answer(0.5))
    result = run(server, mode="outcome")
    assert result.scores[0].task_completion_quality == 0.5
    assert len(server.requests) == 3


def test_5xx_gives_up_after_max_retries(server):
    server.script(default=error(502, "bad gateway"))
    scores = run(server, mode="outcome", max_retries=2).scores[0]
    assert scores.task_completion_quality is None
    assert "HTTP 502: bad gateway (gave up after 3 attempts)" in scores.judge_errors["task_completion"]
    assert len(server.requests) == 3


def test_hanging_server_times_out_quickly(server):
    server.script(default=Reply(hang=True))
    started = time.monotonic()
    result = run(server, mode="outcome", timeout_s=0.3, max_retries=1)
    assert time.monotonic() - started < 5
    assert result.scores[0].task_completion_quality is None
    assert "no answer within 0.3 s (gave up after 2 attempts)" in result.scores[0].judge_errors["task_completion"]


def test_connection_refused_is_a_failure_not_a_crash():
    with serve_judge() as gone:
        base = gone.base_url
    client = JudgeClient(
        JudgeSettings(provider="openai", model="j", base_url=base, max_retries=1), environ=ENV, backoff_base_s=0.01
    )
    result = asyncio.run(judge_episodes(client, [weather_episode()], [weather_task()]))
    assert all("connection failed" in e for e in result.scores[0].judge_errors.values())


def test_at_most_max_concurrency_in_flight(server):
    server.script(default=Reply(content=json.dumps({"reasoning": "r", "score": 1}), delay_s=0.05))
    episodes = [weather_episode(attempt=i) for i in range(8)]
    result = run(server, episodes, [weather_task(tool_calls=False)], max_concurrency=3)
    assert len(server.requests) == 24 and result.stats.failures == 0
    assert 2 <= server.max_in_flight <= 3


# --- Anthropic -------------------------------------------------------------------------


def test_anthropic_messages_api_with_a_tool(server):
    server.script(default=Reply(tool_input={"reasoning": "grounded", "score": 0.9}))
    result = run(server, mode="outcome", provider="anthropic")
    assert result.scores[0].task_completion_quality == 0.9
    request = server.requests[0]
    assert request["path"] == "/v1/messages"
    assert request["headers"]["x-api-key"] == KEY and request["headers"]["anthropic-version"]
    assert "authorization" not in request["headers"]
    body = request["body"]
    assert "COMPLETION" in body["system"] and [m["role"] for m in body["messages"]] == ["user"]
    assert body["tool_choice"]["name"] == body["tools"][0]["name"] and body["max_tokens"] > 0


def test_anthropic_text_answer_and_tool_refusal(server):
    server.script(
        error(400, "tool_choice is not supported"),
        default=Reply(content='Verdict: {"reasoning": "fine", "score": 0.4}'),
    )
    result = run(server, mode="outcome", provider="anthropic", base_url=server.base_url + "/v1")
    assert result.scores[0].task_completion_quality == 0.4
    assert [("tools" in r["body"]) for r in server.requests] == [True, False]
    assert all(r["path"] == "/v1/messages" for r in server.requests)


# --- keys ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "over, variable",
    [
        ({}, "OPENAI_API_KEY"),
        ({"provider": "deepseek"}, "DEEPSEEK_API_KEY"),
        ({"provider": "anthropic"}, "ANTHROPIC_API_KEY"),
        ({"api_key_env": "MY_JUDGE_KEY"}, "MY_JUDGE_KEY"),
    ],
)
def test_missing_key_names_the_variable_before_any_call(server, over, variable):
    with pytest.raises(JudgeConfigError, match=variable):
        JudgeClient(settings(server, **over), environ={})
    assert server.requests == []


def test_key_from_judge_env_and_ollama_without_key(server):
    client = JudgeClient(settings(server, api_key_env="J_KEY", env={"J_KEY": "from-env-block"}), environ={})
    asyncio.run(judge_episodes(client, [weather_episode()], [weather_task()]))
    assert server.requests[0]["headers"]["authorization"] == "Bearer from-env-block"
    server.reset()
    client = JudgeClient(settings(server, provider="ollama", mode="outcome"), environ={})
    asyncio.run(judge_episodes(client, [weather_episode()], [weather_task()]))
    assert "authorization" not in server.requests[0]["headers"]


def test_the_key_never_leaks(server, tmp_path):
    from bat_pipeline.engine.redaction import Redactor
    from bat_pipeline.resources.judge_cache import JudgeCache

    other = "sk-agent-model-key-0e1f2a"  # another secret of the evaluation, quoted by the judge

    def echo_key(request):
        auth = request["headers"].get("authorization", "")
        rubric = rubric_of(request["body"])
        if rubric == "relevance":
            return error(400, f"invalid request from {auth}")
        if rubric == "hallucination":
            return Reply(status=500, raw=f"upstream said: headers={request['headers']}".encode())
        if rubric == "tool_call":
            return Reply(content=f"your key is {auth} and no score")
        return answer(0.5, reasoning=f"fine, asked with {auth}, the agent used {other}")

    server.script(default=echo_key)
    cache = JudgeCache(tmp_path)
    client = JudgeClient(settings(server, max_retries=0), environ=ENV, cache=cache, redactor=Redactor([other]))
    result = asyncio.run(judge_episodes(client, [weather_episode()], [weather_task()]))
    dumped = result.model_dump_json()
    assert KEY not in dumped and other not in dumped and "[redacted]" in dumped
    assert (
        result.scores[0].judge_reasoning["task_completion"]
        == "fine, asked with Bearer [redacted], the agent used [redacted]"
    )
    assert len(result.scores[0].judge_errors) == 3
    files = list(tmp_path.rglob("*.json"))
    assert files and all(KEY not in f.read_text() and other not in f.read_text() for f in files)
    assert KEY not in repr(client)


def test_refused_credentials_stop_further_calls(server):
    server.script(default=error(401, "Incorrect API key provided"))
    result = run(server, [weather_episode(attempt=0), weather_episode(attempt=1)], max_concurrency=1)
    assert len(server.requests) == 1 and result.stats.failures == 8
    for scores in result.scores:
        assert all("HTTP 401: Incorrect API key provided" in e for e in scores.judge_errors.values())


def test_base_url_without_scheme_is_refused_up_front():
    with pytest.raises(JudgeConfigError, match="base_url"):
        JudgeClient(JudgeSettings(provider="ollama", model="j", base_url="localhost:11434"), environ={})


# --- URLs ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "provider, base, url",
    [
        ("openai", None, "https://api.openai.com/v1/chat/completions"),
        ("deepseek", None, "https://api.deepseek.com/v1/chat/completions"),
        ("nvidia", None, "https://integrate.api.nvidia.com/v1/chat/completions"),
        ("ollama", None, "http://localhost:11434/v1/chat/completions"),
        ("ollama", "http://gpu:11434", "http://gpu:11434/v1/chat/completions"),
        ("ollama", "http://gpu:11434/", "http://gpu:11434/v1/chat/completions"),
        ("openai", "http://h/v1/", "http://h/v1/chat/completions"),
        ("openai", "http://h/v1/chat/completions", "http://h/v1/chat/completions"),
        ("openai", "https://h/v1beta/openai", "https://h/v1beta/openai/chat/completions"),
        ("anthropic", None, "https://api.anthropic.com/v1/messages"),
        ("anthropic", "http://h:1/v1", "http://h:1/v1/messages"),
        ("anthropic", "http://h:1/v1/messages", "http://h:1/v1/messages"),
    ],
)
def test_endpoint_urls(provider, base, url):
    assert endpoint_url(provider, base) == url


def test_retry_after_forms():
    assert _retry_after("2") == 2.0
    assert _retry_after("1000") == 60.0
    assert _retry_after("-3") == 0.0
    assert _retry_after("soon") is None and _retry_after(None) is None
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 <= _retry_after(later) <= 30
