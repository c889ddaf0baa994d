"""engine.trajectories: one behaviour of SPEC §5 per test, on spans recorded with the SDK."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from opentelemetry import context as otel_context, trace
from pydantic import ValidationError

from bat_pipeline.engine.contracts import AgentStep, ErrorStep, ModelStep, ToolStep, Trajectory
from bat_pipeline.engine.spans import load_spans
from bat_pipeline.engine.trajectories import build_trajectory, plan, recorded_tool_calls
from bat_pipeline_tests.engine.span_fixtures.builder import Agent, Clock, tool_message, write_lines

CONV = "c__try0"
GOLDEN = Path(__file__).parent / "span_fixtures" / "golden_called_agent.json"


def build(tmp_path: Path, *sources: Agent | list, turns=("hi",), conversation=CONV, **kw) -> Trajectory:
    """Write each agent (or list of lines) to its own file, index them, build."""
    files = []
    for i, source in enumerate(sources):
        lines = source.lines() if isinstance(source, Agent) else source
        files.append(write_lines(tmp_path / f"agent{i}.jsonl", lines))
    return build_trajectory(load_spans(files), conversation, list(turns), **kw)


def steps(t: Trajectory, turn: int = 0) -> list:
    return t.turns[turn].steps


def test_model_step_keeps_output_tokens_and_node_never_input(tmp_path):
    a = Agent()
    with a.root(CONV), a.graph("react"):
        a.llm(
            "hello",
            tokens=(10, 5),
            extra={"llm.token_count.prompt_details.cache_read": 4, "llm.token_count.completion_details.reasoning": 2},
        )
    t = build(tmp_path, a)
    assert steps(t) == [
        ModelStep(
            node="react", model="m", tokens_in=10, tokens_out=5, tokens_cached=4, reasoning_tokens=2, said="hello"
        )
    ]
    assert "never shown" not in t.model_dump_json()
    assert (t.found, t.totals.model_calls, t.totals.tokens_in, t.totals.tokens_cached) == (True, 1, 10, 4)


def test_token_counts_a_span_cannot_give_count_as_zero_and_files_with_negative_totals_are_refused(tmp_path):
    a = Agent()
    with a.root(CONV), a.graph("react"):
        a.llm("a", tokens=(-3, "12.0"), extra={"llm.token_count.prompt_details.cache_read": "inf"})
        a.llm("b", tokens=(True, "many"), extra={"llm.token_count.prompt_details.cache_read": float("nan")})
    t = build(tmp_path, a)
    assert [(s.tokens_in, s.tokens_out, s.tokens_cached) for s in steps(t)] == [(0, 12, 0), (0, 0, 0)]
    assert (t.totals.model_calls, t.totals.tokens_in, t.totals.tokens_out) == (2, 0, 12)
    data = t.model_dump(mode="json")
    data["totals"]["tokens_out"] = -1
    with pytest.raises(ValidationError, match=r"totals\.tokens_out"):
        Trajectory.model_validate(data)


def test_roots_matched_to_turns_in_start_order(tmp_path):
    a = Agent()
    for said in ("first", "second"):
        with a.root(CONV), a.graph():
            a.llm(said)
    t = build(tmp_path, a.lines()[::-1], turns=["one", "two"])
    assert [(turn.user, turn.steps[0].said) for turn in t.turns] == [("one", "first"), ("two", "second")]


def test_turn_without_root_has_no_steps(tmp_path):
    a = Agent()
    with a.root(CONV), a.graph():
        a.llm("only")
    t = build(tmp_path, a, turns=["one", "two"])
    assert t.found and len(steps(t, 0)) == 1 and steps(t, 1) == []


def test_no_root_at_all_is_not_found(tmp_path):
    a = Agent()
    with a.root("someone_else__try0"), a.graph():
        a.llm("x")
    t = build(tmp_path, a, turns=["one"])
    assert not t.found and t.turns[0].user == "one" and steps(t) == []


def test_tool_args_from_input_json_and_plain_text_result(tmp_path):
    a = Agent()
    with a.root(CONV), a.graph(), a.tool("add", '{"a": 1, "b": 2}', "3"):
        pass
    assert steps(build(tmp_path, a)) == [ToolStep(node="react", name="add", args={"a": 1, "b": 2}, result="3")]


def test_tool_args_from_decided_call_with_same_id(tmp_path):
    a = Agent()
    with a.root(CONV), a.graph():
        a.llm(calls=[("id-1", "get_weather", {"city": "Paris"}), ("id-2", "get_weather", {"city": "Rome"})])
        with a.tool("get_weather", "Rome", tool_message("rainy", "id-2")):
            pass
        with a.tool("get_weather", "Paris", extra={"tool_call.id": "id-1"}):
            pass
    tools = steps(build(tmp_path, a))[1:]
    assert [(s.args, s.result) for s in tools] == [({"city": "Rome"}, "rainy"), ({"city": "Paris"}, None)]


def test_tool_args_from_oldest_unused_decided_call_with_same_name(tmp_path):
    a = Agent()
    with a.root(CONV), a.graph():
        a.llm(
            calls=[
                (None, "get_weather", {"city": "Paris"}),
                (None, "add", {"a": 1}),
                (None, "get_weather", {"city": "Rome"}),
            ]
        )
        for city in ("Paris", "Rome", "Oslo"):
            with a.tool("get_weather", city):
                pass
    t = build(tmp_path, a)
    assert steps(t)[0].called == ["get_weather", "add", "get_weather"]
    assert [s.args for s in steps(t)[1:]] == [{"city": "Paris"}, {"city": "Rome"}, "Oslo"]


def test_failed_model_is_one_model_step_with_error(tmp_path):
    a = Agent()
    exc = ValueError("HTTP 400")
    with (
        a.root(CONV),
        a.chain("LangGraph", error="RuntimeError: wrapped"),
        a.chain("react", "react", error="RuntimeError: wrapped"),
    ):
        a.llm(exception=exc)
    t = build(tmp_path, a)
    assert [(s.kind, s.error) for s in steps(t)] == [("model", "ValueError: HTTP 400")]
    assert t.totals.errors == 1 and t.totals.model_calls == 1


def test_failed_span_without_failed_descendant_is_an_error_step(tmp_path):
    a = Agent()
    description = 'KeyError("state")Traceback (most recent call last):\n  File "graph.py", line 3'
    with (
        a.root(CONV),
        a.chain("LangGraph", error=description),
        a.chain("react", "react", error=description),
        a.chain("route", error=description),
    ):
        pass
    t = build(tmp_path, a)
    assert steps(t) == [ErrorStep(node="react", span="route", error='KeyError("state")')]
    assert t.totals.errors == 1


def test_thinking_before_final_think_tag_is_dropped(tmp_path):
    a = Agent()
    with a.root(CONV), a.graph():
        a.llm("<think>plan</think> draft </think>\n\nThe answer is 4.")
    assert steps(build(tmp_path, a))[0].said == "The answer is 4."


def test_said_from_content_blocks(tmp_path):
    a = Agent()
    p = "llm.output_messages.0.message.contents"
    with a.root(CONV), a.graph():
        a.llm(
            extra={
                f"{p}.0.message_content.type": "text",
                f"{p}.0.message_content.text": "Part one.",
                f"{p}.1.message_content.type": "image",
                f"{p}.1.message_content.image": "x.png",
                f"{p}.2.message_content.text": "Part two.",
            }
        )
    assert steps(build(tmp_path, a))[0].said == "Part one.\nPart two."


def test_tool_result_from_langgraph_command(tmp_path):
    command = json.dumps(
        {
            "graph": None,
            "goto": [],
            "resume": None,
            "update": {
                "messages": [json.loads(tool_message([{"type": "text", "text": "booked"}], "id-9"))],
                "status": "done",
            },
        }
    )
    a = Agent()
    with a.root(CONV), a.graph():
        a.llm(calls=[("id-9", "book", {"flight": "AF1"})])
        with a.tool("book", None, command):
            pass
    assert steps(build(tmp_path, a))[1].model_dump(include={"args", "result"}) == {
        "args": {"flight": "AF1"},
        "result": "booked",
    }


def test_long_fields_are_cut_and_marked(tmp_path):
    a = Agent()
    with a.root(CONV), a.graph():
        a.llm("x" * 50)
        with a.tool("echo", json.dumps({"text": "y" * 50, "n": 1}), "short"):
            pass
    t = build(tmp_path, a, max_field_chars=20)
    said, args = steps(t)[0].said, steps(t)[1].args
    assert t.truncated and len(said) == 20 and said.endswith("…")
    assert len(args["text"]) == 20 and args["n"] == 1 and steps(t)[1].result == "short"
    assert not build(tmp_path, a).truncated


def test_gigantic_attribute_is_cut(tmp_path):
    a = Agent()
    with a.root(CONV), a.graph(), a.tool("dump", "{}", "z" * 3_000_000):
        pass
    t = build(tmp_path, a)
    assert len(steps(t)[0].result) == 4000 and t.truncated


def test_parent_cycle_terminates(tmp_path):
    a = Agent()
    with a.root(CONV), a.graph():
        a.llm("in the loop")
        a.llm("fine")
    lines = a.lines()
    first, second = [x for x in lines if x["name"] == "ChatModel"]
    first["parent_span_id"], second["parent_span_id"] = second["span_id"], first["span_id"]
    t = build(tmp_path, lines)
    assert sorted(s.said for s in steps(t)) == ["fine", "in the loop"]


def test_orphan_span_gets_node_from_metadata(tmp_path):
    a = Agent()
    meta = json.dumps({"langgraph_checkpoint_ns": "plan:1f|llm:2e", "langgraph_node": "llm"})
    with a.root(CONV), a.graph():
        a.llm("lost parent", extra={"metadata": meta})
    lines = a.lines()
    next(x for x in lines if x["name"] == "ChatModel")["parent_span_id"] = "00000000deadbeef"
    assert [(s.said, s.node) for s in steps(build(tmp_path, lines))] == [("lost parent", "plan")]


def test_span_directly_off_root_gets_the_node_running_when_it_started(tmp_path):
    a = Agent()
    with a.root(CONV) as root:
        with a.graph("react"):
            a.llm("beside the graph", context=trace.set_span_in_context(root))
        a.llm("after the graph", context=trace.set_span_in_context(root))
    assert [s.node for s in steps(build(tmp_path, a))] == ["react", None]


def test_steps_nest_under_the_enclosing_tool(tmp_path):
    a = Agent()
    with a.root(CONV), a.graph():
        with a.tool("summarize", '{"doc": "d"}', "sum"), a.chain("inner"):
            a.llm("summary")
        a.llm("done")
    t = build(tmp_path, a)
    assert [s.kind for s in steps(t)] == ["tool", "model"]
    assert [s.said for s in steps(t)[0].steps] == ["summary"]
    assert t.totals.model_calls == 2


def called_agent(clock: Clock, *, with_call_failure: bool = False) -> tuple[Agent, Agent]:
    """A caller whose tool calls agent Planner; Planner's spans are recorded apart."""
    caller, planner = Agent("Caller", clock), Agent("Planner", clock)
    with caller.root(CONV), caller.graph("react"):
        caller.llm(calls=[("id-1", "ask_planner", {"goal": "trip"})])
        with (
            caller.tool("ask_planner", "trip", tool_message("plan: Rome", "id-1")),
            caller.call_agent("Planner", "Plan a trip", "plan: Rome"),
        ):
            with planner.root("planner-ctx", context=otel_context.get_current()), planner.graph("plan"):
                planner.llm(calls=[("p-1", "search", {"q": "Rome"})], model="small")
                with planner.tool("search", '{"q": "Rome"}', "Rome is nice"):
                    pass
                if with_call_failure:
                    with planner.chain("fetch", error="TimeoutError"):
                        pass
        caller.llm("Go to Rome.")
    return caller, planner


def test_called_agent_steps_from_its_own_file_nest_under_the_agent_step(tmp_path):
    caller, planner = called_agent(Clock())
    t = build(tmp_path, caller, planner)
    tool = steps(t)[1]
    (agent,) = tool.steps
    assert (agent.agent, agent.asked, agent.answered, agent.status, agent.node) == (
        "Planner",
        "Plan a trip",
        "plan: Rome",
        "completed",
        "react",
    )
    assert [(s.kind, s.node) for s in agent.steps] == [("model", "plan"), ("tool", "plan")]
    assert (t.totals.model_calls, t.totals.tool_calls, t.totals.agent_calls) == (3, 2, 1)


def test_called_agent_file_missing_leaves_agent_step_empty(tmp_path):
    caller, _ = called_agent(Clock())
    agent = steps(build(tmp_path, caller))[1].steps[0]
    assert isinstance(agent, AgentStep) and agent.steps == []


def test_called_agent_spans_from_a_folder(tmp_path):
    caller, planner = called_agent(Clock())
    planner.write(tmp_path / "called" / "planner.jsonl")
    index = load_spans([caller.write(tmp_path / "caller.jsonl"), tmp_path / "called"])
    t = build_trajectory(index, CONV, ["hi"])
    assert len(steps(t)[1].steps[0].steps) == 2


def test_called_root_without_parent_still_nests_under_the_agent_step(tmp_path):
    caller, planner = called_agent(Clock())
    lines = planner.lines()
    root = next(x for x in lines if x["parent_span_id"] is None or x["name"].startswith("invoke_agent"))
    root["parent_span_id"] = None
    root["attributes"]["gen_ai.conversation.id"] = CONV
    t = build(tmp_path, caller, lines, turns=["hi", "again"])
    assert len(steps(t)[1].steps[0].steps) == 2 and steps(t, 1) == []


def test_failed_step_inside_called_agent_counts(tmp_path):
    caller, planner = called_agent(Clock(), with_call_failure=True)
    t = build(tmp_path, caller, planner)
    nested = steps(t)[1].steps[0].steps
    assert nested[-1] == ErrorStep(node="plan", span="fetch", error="TimeoutError")
    assert t.totals.errors == 1


def test_failed_agent_call_is_the_agent_step_with_error(tmp_path):
    a = Agent()
    with a.root(CONV), a.graph(), a.call_agent("Planner", "plan", "", "failed", error="A2A task failed"):
        pass
    t = build(tmp_path, a)
    assert [(s.kind, s.status, s.error) for s in steps(t)] == [("agent", "failed", "A2A task failed")]
    assert (t.totals.agent_calls, t.totals.errors) == (1, 1)


def test_agent_call_state_as_protobuf_enum_name_reads_as_the_a2a_state(tmp_path):
    a = Agent()
    with a.root(CONV), a.graph(), a.call_agent("Planner", "plan", "ok", "TASK_STATE_INPUT_REQUIRED"):
        pass
    assert [s.status for s in steps(build(tmp_path, a))] == ["input-required"]


def test_recorded_tool_calls_include_nested_ones(tmp_path):
    caller, planner = called_agent(Clock())
    calls = recorded_tool_calls(build(tmp_path, caller, planner))
    assert [(c.name, c.args) for c in calls] == [("ask_planner", {"goal": "trip"}), ("search", {"q": "Rome"})]


def test_each_trace_is_analysed_once(tmp_path, monkeypatch):
    a = Agent()
    for conv in ("a__try0", "b__try0"):
        for _ in range(2):
            with a.root(conv), a.graph():
                a.llm("x")
    index = load_spans([a.write(tmp_path / "a.jsonl")])
    seen = []
    real = plan._plan_trace
    monkeypatch.setattr(plan, "_plan_trace", lambda spans: seen.append(1) or real(spans))
    for _ in range(2):
        for conv in ("a__try0", "b__try0"):
            build_trajectory(index, conv, ["1", "2"])
    assert len(seen) == 4


def test_rendered_trajectory_matches_golden(tmp_path):
    caller, planner = called_agent(Clock(), with_call_failure=True)
    rendered = build(tmp_path, caller, planner, turns=["Plan my trip"]).model_dump(mode="json")
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.write_text(json.dumps(rendered, indent=2, ensure_ascii=False) + "\n")
    assert rendered == json.loads(GOLDEN.read_text())
