"""The example agent as a real process, over A2A with the a2a-sdk streaming client."""

from __future__ import annotations

from pathlib import Path

import pytest

from bat_pipeline_tests.support.example_agent import Agent, conversation_id, converse, launch_agent
from bat_pipeline_tests.support.processes import processes
from bat_pipeline_tests.support.spans import read_spans, roots, shape_errors, totals, wait_for_spans

pytestmark = pytest.mark.slow(seconds=12)


def spans_of(agent: Agent, conversation: str, turns: int) -> list[dict]:
    return wait_for_spans(agent.spans_file, lambda s: len(roots(s, conversation)) >= turns)


def test_streams_working_then_completed_with_tool_result(agents: dict[str, Agent]) -> None:
    [exchange] = converse(agents["competent"], ["What is the weather in Paris?"], conversation_id("paris"))
    states = [state for state, _ in exchange.events]
    assert ("working", "Generating response...") in exchange.events
    assert states[-1] == "completed" and "sunny, 22°C" in exchange.text


def test_history_across_turns_and_input_required(agents: dict[str, Agent]) -> None:
    conversation = conversation_id("clarify")
    asked, answered = converse(agents["competent"], ["What's the weather like today?", "Berlin"], conversation)
    assert (asked.state, asked.text) == ("input-required", "Which city would you like the weather for?")
    assert answered.state == "completed" and "15°C" in answered.text
    recall = converse(agents["competent"], ["Which city did I ask about?"], conversation)[0]
    assert "Berlin" in recall.text
    spans = spans_of(agents["competent"], conversation, 3)
    assert [r["attributes"]["bat.a2a.task_state"] for r in roots(spans, conversation)] == [
        "input-required",
        "completed",
        "completed",
    ]


def test_sub_agent_call_continues_the_trace_in_the_forecaster_file(agents: dict[str, Agent]) -> None:
    agent, conversation = agents["competent"], conversation_id("forecast")
    [exchange] = converse(agent, ["What is the forecast for Rome tomorrow?"], conversation)
    assert exchange.state == "completed" and "sunny, 28°C" in exchange.text
    [root] = roots(spans_of(agent, conversation, 1), conversation)
    client_spans = [
        s for s in read_spans(agent.spans_file) if s["trace_id"] == root["trace_id"] and s["kind"] == "CLIENT"
    ]
    assert len(client_spans) == 1
    call = client_spans[0]["attributes"]
    assert (call["gen_ai.operation.name"], call["gen_ai.agent.name"], call["bat.a2a.task_state"]) == (
        "invoke_agent",
        "Forecaster",
        "completed",
    )
    assert "Rome" in call["input.value"] and "28°C" in call["output.value"]
    theirs = wait_for_spans(agent.forecaster_spans_file, lambda s: any(x["trace_id"] == root["trace_id"] for x in s))
    theirs = [s for s in theirs if s["trace_id"] == root["trace_id"]]
    forecaster_root = next(s for s in theirs if s["name"] == "invoke_agent Forecaster")
    assert forecaster_root["parent_span_id"] == client_spans[0]["span_id"]
    assert any(s["attributes"].get("openinference.span.kind") == "TOOL" for s in theirs)


def test_graph_nodes_sit_two_levels_below_the_root(agents: dict[str, Agent]) -> None:
    agent, conversation = agents["competent"], conversation_id("nodes")
    converse(agent, ["Please add 17 and 25."], conversation)
    spans = spans_of(agent, conversation, 1)
    [root] = roots(spans, conversation)
    by_id = {s["span_id"]: s for s in spans}
    steps = [
        s
        for s in spans
        if s["trace_id"] == root["trace_id"] and s["attributes"].get("openinference.span.kind") in ("LLM", "TOOL")
    ]
    nodes = {by_id[by_id[s["parent_span_id"]]["span_id"]]["name"] for s in steps}
    assert nodes == {"react", "tools"}
    assert all(by_id[by_id[s["parent_span_id"]]["parent_span_id"]]["parent_span_id"] == root["span_id"] for s in steps)
    llm = next(s for s in steps if s["attributes"].get("llm.output_messages.0.message.tool_calls.0.tool_call.id"))
    assert (
        llm["attributes"]["llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments"]
        == '{"a": 17, "b": 25}'
    )
    assert llm["attributes"]["llm.model_name"] == "competent"
    assert isinstance(llm["attributes"]["llm.token_count.prompt_details.cache_read"], int)


def test_model_error_fails_the_task_cleanly(agents: dict[str, Agent], scripted_llm) -> None:
    agent, conversation = agents["competent"], conversation_id("broken")
    with scripted_llm.restoring():
        scripted_llm.set(fail_model=["competent"])
        [exchange] = converse(agent, ["What is the weather in Paris?"], conversation)
    assert exchange.state == "failed" and "HTTP 400" in exchange.text
    spans = spans_of(agent, conversation, 1)
    [root] = roots(spans, conversation)
    assert root["status"] == "ERROR"
    model = next(
        s
        for s in spans
        if s["trace_id"] == root["trace_id"] and s["attributes"].get("openinference.span.kind") == "LLM"
    )
    assert model["status"] == "ERROR"
    event = model["events"][0]
    assert event["name"] == "exception" and "ModelError" in event["attributes"]["exception.type"]
    assert "HTTP 400" in event["attributes"]["exception.message"]


def test_span_files_match_the_spec_shape(agents: dict[str, Agent]) -> None:
    converse(agents["competent"], ["What is the forecast for Berlin tomorrow?"], conversation_id("shape"))
    for agent in agents.values():
        for path in (agent.spans_file, agent.forecaster_spans_file):
            for span in read_spans(path):
                assert shape_errors(span) == [], (path.name, span["name"])


def test_sigterm_flushes_every_span_and_stops_the_forecaster(scripted_llm, tmp_path: Path) -> None:
    agent = launch_agent(tmp_path, scripted_llm.url, "competent", provider="anthropic").wait_ready()
    conversation = conversation_id("sigterm")
    try:
        [exchange] = converse(agent, ["What is the forecast for Paris tomorrow?"], conversation)
    finally:
        code = agent.stop()
    assert exchange.state == "completed" and "showers" in exchange.text
    assert code == 0
    spans = read_spans(agent.spans_file)
    [root] = roots(spans, conversation)
    mine = [s for s in spans if s["trace_id"] == root["trace_id"]]
    assert {s["attributes"].get("openinference.span.kind") for s in mine} >= {"LLM", "TOOL"}
    assert any(s["trace_id"] == root["trace_id"] for s in read_spans(agent.forecaster_spans_file))
    assert totals(spans, conversation)["model_calls"] == 2
    assert forecaster_processes(agent.folder) == []


def forecaster_processes(folder: Path) -> list[int]:
    """Pids of Forecaster children still running in `folder`."""
    return [p.pid for p in processes() if "forecaster" in p.cmdline.split(" ") and p.cwd == str(folder.resolve())]
