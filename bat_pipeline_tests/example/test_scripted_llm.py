"""The scripted model server through real clients: httpx, the `openai` package, Anthropic JSON."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

import httpx
import pytest

from bat_pipeline.example.scripted_llm import ScriptedLLM, serve_scripted_llm
from bat_pipeline_tests.support import local_http
from bat_pipeline_tests.support.polling import wait_for

if TYPE_CHECKING:  # imported where used: the package takes most of a second to import
    import openai

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "add",
            "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}},
        },
    },
]
ANTHROPIC_TOOLS = [{"name": t["function"]["name"], "input_schema": t["function"]["parameters"]} for t in TOOLS]
JUDGE_PROMPT = (
    "Rubric: task completion.\nExpected outcome: The agent reports sunny, 22°C in Paris.\n"
    "Final answer: Weather in Paris: sunny, 22°C."
)
SCHEMA = {"type": "json_schema", "json_schema": {"name": "score", "schema": {"type": "object"}}}


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedLLM]:
    with serve_scripted_llm() as running:
        yield running


@pytest.fixture(autouse=True)
def _reset(server: ScriptedLLM) -> None:
    server.set_knobs(reset=True)


@pytest.fixture
def client(server: ScriptedLLM) -> openai.OpenAI:
    import openai

    return openai.OpenAI(base_url=server.base_url + "/v1", api_key="unused", max_retries=0)


def test_competent_calls_both_cities_in_one_response_then_quotes_results(client: openai.OpenAI) -> None:
    messages: list = [{"role": "user", "content": "Compare the weather in Paris and Berlin."}]
    first = client.chat.completions.create(model="competent", messages=messages, tools=TOOLS)
    calls = first.choices[0].message.tool_calls
    assert [(c.function.name, json.loads(c.function.arguments)) for c in calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_weather", {"city": "Berlin"}),
    ]
    messages.append(first.choices[0].message.model_dump(exclude_none=True))
    messages += [
        {"role": "tool", "tool_call_id": calls[0].id, "content": "sunny, 22°C"},
        {"role": "tool", "tool_call_id": calls[1].id, "content": "cloudy, 15°C"},
    ]
    final = client.chat.completions.create(model="competent", messages=messages, tools=TOOLS)
    assert "22°C" in final.choices[0].message.content and "15°C" in final.choices[0].message.content
    assert final.usage.prompt_tokens > 0 and final.usage.prompt_tokens_details.cached_tokens > 0


def test_personas_differ_and_are_deterministic(client: openai.OpenAI) -> None:
    def ask(model: str, text: str) -> str:
        reply = client.chat.completions.create(model=model, messages=[{"role": "user", "content": text}], tools=TOOLS)
        message = reply.choices[0].message
        return message.content or json.dumps([[c.function.name, c.function.arguments] for c in message.tool_calls])

    assert json.loads(ask("competent", "Please add 17 and 25."))[0][1] == '{"a": 17, "b": 25}'
    assert json.loads(ask("sloppy", "Please add 17 and 25."))[0][1] == '{"a": 17, "b": 26}'
    assert ask("good", "What's the weather like today?") == "NEED_INPUT: Which city would you like the weather for?"
    assert "London" in ask("bad", "What's the weather like today?")
    assert ask("sloppy", "What is the capital of Italy?") == ask("sloppy", "What is the capital of Italy?")
    assert "Paris" in ask("competent", "What is the capital of France?")


def test_competent_remembers_a_city_from_an_earlier_turn(client: openai.OpenAI) -> None:
    messages = [
        {"role": "user", "content": "What's the weather like today?"},
        {"role": "assistant", "content": "NEED_INPUT: Which city would you like the weather for?"},
        {"role": "user", "content": "Berlin"},
    ]
    reply = client.chat.completions.create(model="competent", messages=messages, tools=TOOLS)
    assert json.loads(reply.choices[0].message.tool_calls[0].function.arguments) == {"city": "Berlin"}


def test_streaming_with_tool_calls_and_usage(client: openai.OpenAI) -> None:
    stream = client.chat.completions.create(
        model="competent",
        messages=[{"role": "user", "content": "weather in Rome and Oslo?"}],
        tools=TOOLS,
        stream=True,
        stream_options={"include_usage": True},
    )
    names, args, usage = {}, {}, None
    for chunk in stream:
        usage = chunk.usage or usage
        for delta in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
            names[delta.index] = delta.function.name or names.get(delta.index)
            args[delta.index] = args.get(delta.index, "") + (delta.function.arguments or "")
    assert names == {0: "get_weather", 1: "get_weather"}
    assert [json.loads(a)["city"] for a in args.values()] == ["Rome", "Oslo"]
    assert usage is not None and usage.completion_tokens > 0


def test_streamed_text_matches_plain_answer(client: openai.OpenAI) -> None:
    messages = [{"role": "user", "content": "What is the capital of France?"}]
    plain = client.chat.completions.create(model="competent", messages=messages).choices[0].message.content
    streamed = "".join(
        c.choices[0].delta.content or ""
        for c in client.chat.completions.create(model="competent", messages=messages, stream=True)
        if c.choices
    )
    assert streamed == plain


def test_judge_honours_json_schema_and_otherwise_ends_prose_with_json(
    server: ScriptedLLM, client: openai.OpenAI
) -> None:
    messages = [{"role": "user", "content": JUDGE_PROMPT}]
    structured = client.chat.completions.create(model="judge", messages=messages, response_format=SCHEMA)
    verdict = json.loads(structured.choices[0].message.content)
    assert verdict["score"] == 1.0 and verdict["reasoning"].startswith("scripted stand-in judge")
    server.set_knobs(think=True)
    prose = client.chat.completions.create(model="judge", messages=messages).choices[0].message.content
    assert prose.startswith("<think>") and json.loads(prose[prose.rindex("{") :])["score"] == 1.0
    wrong = JUDGE_PROMPT.replace("sunny, 22°C.", "cloudy, 9°C.")
    low = client.chat.completions.create(
        model="judge", messages=[{"role": "user", "content": wrong}], response_format=SCHEMA
    )
    assert json.loads(low.choices[0].message.content)["score"] < 1.0
    assert server.count(path="/v1/chat/completions", model="judge") == 3


def test_anthropic_messages_tool_use_round_trip(server: ScriptedLLM) -> None:
    url = server.base_url + "/v1/messages"
    body = {
        "model": "competent",
        "max_tokens": 256,
        "system": "Be helpful.",
        "tools": ANTHROPIC_TOOLS,
        "messages": [{"role": "user", "content": "Please add 17 and 25."}],
    }
    first = local_http.post(url, json=body).json()
    assert first["stop_reason"] == "tool_use" and first["usage"]["input_tokens"] > 0
    use = first["content"][0]
    assert (use["type"], use["name"], use["input"]) == ("tool_use", "add", {"a": 17, "b": 25})
    body["messages"] += [
        {"role": "assistant", "content": first["content"]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use["id"], "content": "42"}]},
    ]
    final = local_http.post(url, json=body).json()
    assert final["stop_reason"] == "end_turn" and "42" in final["content"][0]["text"]
    assert final["usage"]["output_tokens"] > 0


def test_other_paths_models_and_ollama(server: ScriptedLLM) -> None:
    body = {"model": "competent", "messages": [{"role": "user", "content": "What is the capital of France?"}]}
    assert (
        "Paris"
        in local_http.post(server.base_url + "/chat/completions", json=body).json()["choices"][0]["message"]["content"]
    )
    assert "Paris" in local_http.post(server.base_url + "/api/chat", json=body).json()["message"]["content"]
    ids = [m["id"] for m in local_http.get(server.base_url + "/v1/models").json()["data"]]
    assert {"competent", "sloppy", "judge"} <= set(ids)
    assert local_http.post(server.base_url + "/v1/chat/completions", json={**body, "model": "gpt-x"}).status_code == 404


def test_rate_limit_with_retry_after_and_server_errors(server: ScriptedLLM, client: openai.OpenAI) -> None:
    import openai

    server.set_model_knobs("competent", error_rate=1.0, error_status=429, retry_after=3)
    with pytest.raises(openai.RateLimitError) as caught:
        client.chat.completions.create(model="competent", messages=[{"role": "user", "content": "hi"}])
    assert caught.value.response.headers["retry-after"] == "3"
    server.set_knobs(reset=True)
    server.set_knobs(error_rate=0.5, error_status=500)
    statuses = [
        local_http.post(
            server.base_url + "/v1/chat/completions",
            json={"model": "sloppy-rate", "messages": [{"role": "user", "content": "hi"}]},
        ).status_code
        for _ in range(4)
    ]
    assert statuses == [200, 500, 200, 500]


def test_malformed_and_fail_model_and_no_structured_output(server: ScriptedLLM, client: openai.OpenAI) -> None:
    import openai

    body = {"model": "competent", "messages": [{"role": "user", "content": "hi"}]}
    server.set_knobs(malformed=True)
    broken = local_http.post(server.base_url + "/v1/chat/completions", json=body)
    with pytest.raises(ValueError):
        broken.json()
    server.set_knobs(malformed="content")
    assert local_http.post(server.base_url + "/v1/chat/completions", json=body).json()["choices"][0]["message"][
        "content"
    ]
    server.set_knobs(reset=True, fail_model="competent", no_structured_output=True)
    assert local_http.post(server.base_url + "/v1/chat/completions", json=body).status_code == 400
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(
            model="judge", messages=[{"role": "user", "content": JUDGE_PROMPT}], response_format=SCHEMA
        )
    assert client.chat.completions.create(model="judge", messages=[{"role": "user", "content": JUDGE_PROMPT}])


def test_latency_and_hang(server: ScriptedLLM) -> None:
    body = {"model": "competent", "messages": [{"role": "user", "content": "hi"}]}
    server.set_knobs(latency_ms=300)
    started = time.monotonic()
    local_http.post(server.base_url + "/v1/chat/completions", json=body)
    assert time.monotonic() - started >= 0.3
    server.set_knobs(reset=True, hang=True)
    with pytest.raises(httpx.ReadTimeout):
        local_http.post(server.base_url + "/v1/chat/completions", json=body, timeout=0.5)


def test_echo_key_quotes_the_callers_key_in_answers_and_reasoning(server: ScriptedLLM) -> None:
    key = "sk-echo-canary-77ab"
    question = {"model": "competent", "messages": [{"role": "user", "content": "What is the capital of France?"}]}
    judged = {"model": "judge", "messages": [{"role": "user", "content": JUDGE_PROMPT}], "response_format": SCHEMA}
    openai_url, anthropic_url = server.base_url + "/v1/chat/completions", server.base_url + "/v1/messages"
    bearer = {"Authorization": f"Bearer {key}"}
    assert key not in local_http.post(openai_url, json=question, headers=bearer).text
    server.set_knobs(echo_key=True)
    answer = local_http.post(openai_url, json=question, headers=bearer).json()["choices"][0]["message"]["content"]
    assert "Paris" in answer and answer.endswith(f"(answered for key {key})")
    verdict = json.loads(
        local_http.post(openai_url, json=judged, headers=bearer).json()["choices"][0]["message"]["content"]
    )
    assert verdict["reasoning"].endswith(f"Judged for key {key}.") and verdict["score"] == 1.0
    body = {**question, "max_tokens": 64}
    text = local_http.post(anthropic_url, json=body, headers={"x-api-key": key}).json()["content"][0]["text"]
    assert text.endswith(f"(answered for key {key})")


def test_stats_count_the_requests_held_at_once(server: ScriptedLLM) -> None:
    # A request of an earlier test of this module may still be held (a slow machine): the
    # burst is counted once the server holds nothing else.
    wait_for(
        lambda: local_http.get(server.base_url + "/_stats").json()["in_flight"] == 0, 30, what="no request in flight"
    )
    server.log.clear()
    server.set_knobs(latency_ms=200)
    body = {"model": "competent", "messages": [{"role": "user", "content": "hi"}]}

    async def burst() -> None:
        async with local_http.async_client() as http:
            await asyncio.gather(*(http.post(server.base_url + "/v1/chat/completions", json=body) for _ in range(4)))

    asyncio.run(burst())
    stats = local_http.get(server.base_url + "/_stats").json()
    assert stats["max_in_flight"] == 4 and stats["in_flight"] == 0
    server.log.clear()
    assert local_http.get(server.base_url + "/_stats").json()["max_in_flight"] == 0


def test_subprocess_server_is_driven_over_http(scripted_llm) -> None:
    llm = scripted_llm
    with llm.restoring():
        llm.set(models={"sloppy": {"fail_model": ["sloppy"]}})
        body = {"model": "sloppy", "messages": [{"role": "user", "content": "hi"}]}
        before = llm.stats()["by_model"].get("sloppy", 0)
        assert local_http.post(llm.url + "/v1/chat/completions", json=body).status_code == 400
        assert llm.stats()["by_model"]["sloppy"] == before + 1
        llm.reset()
        assert local_http.post(llm.url + "/v1/chat/completions", json=body).status_code == 200
