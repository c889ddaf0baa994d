"""The bat-adk test agents run for real: started with `uv run .` (standalone) and
`uv run . <agent>` (blueprint) exactly as the pipeline starts them, in the environment
scripts/prepare-bat-adk prepared (offline: UV_OFFLINE=1, no sync), driven by the scripted
model, talked to over A2A; their span files are what the pipeline reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from bat_pipeline.resources.ports import free_port
from bat_pipeline_tests.support.bat_adk import (
    BLUEPRINT,
    STANDALONE,
    agent_config,
    agent_env,
    converse,
    prepared_uv_env,
    running_agent,
)
from bat_pipeline_tests.support.files import files_under
from bat_pipeline_tests.support.spans import in_trace, read_spans, roots

pytestmark = pytest.mark.slow(seconds=9)

MODEL = "competent"


@pytest.fixture(scope="module")
def model_url(scripted_llm) -> str:
    return scripted_llm.url


def tool_spans(spans: list[dict], trace_id: str) -> list[tuple[str, str]]:
    return [
        (s["attributes"].get("tool.name", s["name"]), s["attributes"].get("input.value", ""))
        for s in in_trace(spans, trace_id, "TOOL")
    ]


def llm_outputs(spans: list[dict], trace_id: str) -> list[str]:
    """Each model call's said text and decided tool names, from the span attributes."""
    out = []
    for span in in_trace(spans, trace_id, "LLM"):
        attrs = span["attributes"]
        said = attrs.get("llm.output_messages.0.message.content", "")
        called = [
            v
            for k, v in attrs.items()
            if k.startswith("llm.output_messages.0.message.tool_calls.") and k.endswith(".tool_call.function.name")
        ]
        out.append(said + "".join(f" ->{name}" for name in called))
    return out


def test_committed_configs_export_spans_in_the_clear():
    """privacy none and a local span file: what the evaluation needs to read the spans."""
    for path in (
        STANDALONE / "config.yaml",
        BLUEPRINT / "weather" / "config.yaml",
        BLUEPRINT / "concierge" / "config.yaml",
    ):
        config = yaml.safe_load(path.read_text())
        assert config["telemetry"]["privacy"] == "none", path
        assert [o["type"] for o in config["telemetry"]["output"]] == ["local"], path
    assert not (BLUEPRINT / "agent.json").exists()
    assert (BLUEPRINT / "__main__.py").is_file() and (STANDALONE / "__main__.py").is_file()


def test_prepare_script_is_idempotent(bat_adk_env):
    uv_env = bat_adk_env
    assert prepared_uv_env() == uv_env
    assert uv_env["UV_OFFLINE"] == "1" and uv_env["UV_NO_SYNC"] == "1"
    assert Path(uv_env["UV_PROJECT_ENVIRONMENT"], "bin", "python").exists()


def test_standalone_agent_answers_asks_and_remembers(bat_adk_env, model_url, tmp_path):
    before = files_under(STANDALONE)
    port = free_port()
    spans_file = tmp_path / "spans.jsonl"
    config = agent_config(STANDALONE / "config.yaml", tmp_path / "config.yaml", port=port, spans=spans_file)
    env = agent_env(bat_adk_env, config, model_url, MODEL)

    with running_agent(STANDALONE, [], env, port, tmp_path / "agent.log") as agent:
        assert agent.card["name"] == "WeatherAgent"
        paris = converse(agent.url, "weather_paris__try0", ["What is the weather in Paris?"])
        clarify = converse(agent.url, "clarify_then_weather__try0", ["What's the weather like today?", "Berlin"])
        adding = converse(agent.url, "add_numbers__try0", ["Please add 17 and 25."])
    # Spans are read once the agent has stopped: every span has ended and been written.
    spans = read_spans(spans_file)
    log = (tmp_path / "agent.log").read_text()

    assert paris[0].final_state == "completed", log[-3000:]
    assert "22" in paris[0].output and "sunny" in paris[0].output
    assert clarify[0].final_state == "input-required"
    assert "Which city" in clarify[0].output
    assert clarify[1].final_state == "completed"
    assert "15" in clarify[1].output and "Berlin" in clarify[1].output
    assert adding[0].final_state == "completed" and "42" in adding[0].output

    # One invoke_agent root per turn, carrying the conversation id.
    (paris_root,) = roots(spans, "weather_paris__try0")
    assert paris_root["name"] == "invoke_agent WeatherAgent"
    assert paris_root["attributes"]["gen_ai.agent.name"] == "WeatherAgent"
    trace = paris_root["trace_id"]
    assert tool_spans(spans, trace) == [("get_weather", "Paris")]
    llm = in_trace(spans, trace, "LLM")
    assert len(llm) == 2
    assert {s["attributes"]["llm.model_name"] for s in llm} == {MODEL}
    assert all(s["attributes"]["llm.token_count.prompt"] > 0 for s in llm)
    assert llm_outputs(spans, trace)[0].endswith("->get_weather")
    assert "22" in llm_outputs(spans, trace)[1]

    asked, answered = roots(spans, "clarify_then_weather__try0")
    assert asked["start_time"] < answered["start_time"]
    assert tool_spans(spans, asked["trace_id"]) == []
    assert llm_outputs(spans, asked["trace_id"]) == ["NEED_INPUT: Which city would you like the weather for?"]
    assert tool_spans(spans, answered["trace_id"]) == [("get_weather", "Berlin")]

    (add_root,) = roots(spans, "add_numbers__try0")
    ((name, args),) = tool_spans(spans, add_root["trace_id"])
    assert name == "add" and json.loads(args) == {"a": 17, "b": 25}

    assert all(s["status"] != "ERROR" for s in spans)
    # Nothing was written into the agent folder (no .venv, uv.lock, spans, __pycache__).
    assert files_under(STANDALONE) == before


def test_blueprint_concierge_calls_weather_agent_over_a2a(bat_adk_env, model_url, tmp_path):
    before = files_under(BLUEPRINT)
    weather_port, concierge_port = free_port(), free_port()
    weather_spans, concierge_spans = tmp_path / "weather.jsonl", tmp_path / "concierge.jsonl"
    weather_cfg = agent_config(
        BLUEPRINT / "weather" / "config.yaml",
        tmp_path / "weather.yaml",
        port=weather_port,
        spans=weather_spans,
    )
    concierge_cfg = agent_config(
        BLUEPRINT / "concierge" / "config.yaml",
        tmp_path / "concierge.yaml",
        port=concierge_port,
        spans=concierge_spans,
        remote_agents={"WeatherAgent": f"http://127.0.0.1:{weather_port}"},
    )

    # The concierge fetches the weather agent's card at startup: weather goes first.
    with running_agent(
        BLUEPRINT,
        ["weather"],
        agent_env(bat_adk_env, weather_cfg, model_url, MODEL),
        weather_port,
        tmp_path / "weather.log",
    ) as weather:
        assert weather.card["name"] == "WeatherAgent"
        with running_agent(
            BLUEPRINT,
            ["concierge"],
            agent_env(bat_adk_env, concierge_cfg, model_url, MODEL),
            concierge_port,
            tmp_path / "concierge.log",
        ) as concierge:
            assert concierge.card["name"] == "ConciergeAgent"
            turns = converse(concierge.url, "concierge_clarify__try0", ["What's the weather like?", "London"])
    logs = "".join(p.read_text()[-2000:] for p in tmp_path.glob("*.log"))
    assert turns[0].final_state == "input-required", logs
    assert "Which city" in turns[0].output
    assert turns[1].final_state == "completed", logs
    assert "12" in turns[1].output and "rain" in turns[1].output

    caller, called = read_spans(concierge_spans), read_spans(weather_spans)
    asked, answered = roots(caller, "concierge_clarify__try0")
    assert asked["name"] == "invoke_agent ConciergeAgent"
    # The called agent's requests are not roots: they hang off the caller's CLIENT span.
    assert roots(called, "concierge_clarify__try0") == []

    expected_states = ["TASK_STATE_INPUT_REQUIRED", "TASK_STATE_COMPLETED"]
    for root, turn, state in zip((asked, answered), turns, expected_states, strict=True):
        trace = root["trace_id"]
        (call,) = [s for s in in_trace(caller, trace) if s["kind"] == "CLIENT"]
        assert call["name"] == "invoke_agent WeatherAgent"
        assert call["attributes"]["gen_ai.operation.name"] == "invoke_agent"
        assert call["attributes"]["gen_ai.agent.name"] == "WeatherAgent"
        assert call["attributes"]["bat.a2a.task_state"] == state
        assert call["attributes"]["input.value"] == turn.user
        assert in_trace(caller, trace, "LLM") == []  # the concierge itself asks no model

        # The weather agent's spans, in its own file, continue the same trace.
        remote = in_trace(called, trace)
        (served,) = [s for s in remote if s["attributes"].get("gen_ai.operation.name")]
        assert served["name"] == "invoke_agent WeatherAgent"
        assert served["parent_span_id"] == call["span_id"]
        assert served["attributes"]["gen_ai.conversation.id"] == "concierge_clarify__try0"
        assert in_trace(called, trace, "LLM")

    assert tool_spans(called, answered["trace_id"]) == [("get_weather", "London")]
    (final_call,) = [s for s in in_trace(caller, answered["trace_id"]) if s["kind"] == "CLIENT"]
    assert "12" in final_call["attributes"]["output.value"]
    assert files_under(BLUEPRINT) == before
