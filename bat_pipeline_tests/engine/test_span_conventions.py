"""engine.spans.conventions: trajectories from spans in each convention an agent may emit
(OpenTelemetry GenAI current and previous names, OpenInference, A2A context id), recorded
with the OpenTelemetry SDK."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest
from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.trace import SpanKind, Status, StatusCode

from bat_pipeline.engine.contracts import AgentStep, ErrorStep, ModelStep, ToolStep
from bat_pipeline.engine.spans import conventions, load_spans
from bat_pipeline.engine.trajectories import build_trajectory, recorded_tool_calls
from bat_pipeline_tests.engine.span_fixtures.builder import Agent, write_lines

CONV = "ctx-7__try0"
FORMATS = Path(__file__).resolve().parents[2] / "docs" / "formats.md"


def build(tmp_path: Path, agent: Agent, turns=("hi",)):
    path = write_lines(tmp_path / "spans.jsonl", agent.lines())
    return build_trajectory(load_spans([path]), CONV, list(turns))


def genai_root(agent: Agent, **attrs):
    return agent.span(
        "invoke_agent Weather",
        {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Weather", **attrs},
        kind=SpanKind.SERVER,
    )


def test_current_genai_spans_give_model_tool_agent_and_error_steps(tmp_path):
    a = Agent()
    output = [
        {
            "role": "assistant",
            "parts": [
                {"type": "reasoning", "content": "never said"},
                {"type": "text", "content": "Checking."},
                {"type": "tool_call", "id": "call_1", "name": "get_weather", "arguments": {"city": "Oslo"}},
            ],
            "finish_reason": "tool_call",
        }
    ]
    with genai_root(a, **{"gen_ai.conversation.id": CONV}):
        with a.span(
            "chat gpt-4o",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "openai",
                "gen_ai.request.model": "gpt-4o",
                "gen_ai.response.model": "gpt-4o-2024-08-06",
                "gen_ai.usage.input_tokens": 120,
                "gen_ai.usage.output_tokens": 30,
                "gen_ai.usage.cache_read.input_tokens": 100,
                "gen_ai.usage.reasoning.output_tokens": 12,
                "gen_ai.input.messages": json.dumps(
                    [{"role": "user", "parts": [{"type": "text", "content": "SECRET"}]}]
                ),
                "gen_ai.system_instructions": "SECRET too",
                "gen_ai.output.messages": json.dumps(output),
            },
            kind=SpanKind.CLIENT,
        ):
            pass
        with a.span(
            "execute_tool get_weather",
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.id": "call_1",
                "gen_ai.tool.call.arguments": json.dumps({"city": "Oslo"}),
                "gen_ai.tool.call.result": "rain, 4 °C",
            },
        ):
            pass
        with a.span(
            "execute_tool get_alerts",
            {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_alerts", "error.type": "TimeoutError"},
        ) as span:
            span.set_status(Status(StatusCode.ERROR))  # no description: the error type says why
        with a.span(
            "invoke_agent Forecaster",
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "Forecaster",
                "gen_ai.input.messages": json.dumps(
                    [{"role": "user", "parts": [{"type": "text", "content": "Tomorrow?"}]}]
                ),
                "gen_ai.output.messages": json.dumps(
                    [{"role": "assistant", "parts": [{"type": "text", "content": "Sunny."}], "finish_reason": "stop"}]
                ),
            },
            kind=SpanKind.CLIENT,
        ):
            pass
        with a.span("db.query", {"db.system": "sqlite"}, error="disk I/O error"):
            pass
    t = build(tmp_path, a)
    assert t.found
    assert t.turns[0].steps == [
        ModelStep(
            model="gpt-4o-2024-08-06",
            tokens_in=120,
            tokens_out=30,
            tokens_cached=100,
            reasoning_tokens=12,
            said="Checking.",
            called=["get_weather"],
        ),
        ToolStep(name="get_weather", args={"city": "Oslo"}, result="rain, 4 °C"),
        ToolStep(name="get_alerts", args=None, error="TimeoutError"),
        AgentStep(agent="Forecaster", asked="Tomorrow?", answered="Sunny."),
        ErrorStep(span="db.query", error="disk I/O error"),
    ]
    assert "SECRET" not in t.model_dump_json()
    assert [c.name for c in recorded_tool_calls(t)] == ["get_weather", "get_alerts"]


def test_a_tool_span_without_arguments_takes_those_the_genai_model_decided(tmp_path):
    a = Agent()
    decided = [
        {"role": "assistant", "parts": [{"type": "tool_call", "id": "c9", "name": "lookup", "arguments": {"q": 1}}]}
    ]
    with genai_root(a, **{"gen_ai.conversation.id": CONV}):
        with a.span("chat m", {"gen_ai.operation.name": "chat", "gen_ai.output.messages": json.dumps(decided)}):
            pass
        with a.span("execute_tool lookup", {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.id": "c9"}):
            pass
    t = build(tmp_path, a)
    model, tool = t.turns[0].steps
    assert model.called == ["lookup"] and model.said is None
    # No gen_ai.tool.name: the name comes from the span name, the arguments from the model.
    assert tool == ToolStep(name="lookup", args={"q": 1})


def test_genai_output_on_the_inference_details_event_is_read(tmp_path):
    a = Agent()
    with genai_root(a, **{"gen_ai.conversation.id": CONV}):
        with a.span("chat m", {"gen_ai.operation.name": "generate_content", "gen_ai.request.model": "gemini"}) as span:
            span.add_event(
                "gen_ai.client.inference.operation.details",
                {
                    "gen_ai.input.messages": "never read",
                    "gen_ai.output.messages": json.dumps(
                        [{"role": "assistant", "parts": [{"type": "text", "content": "From the event."}]}]
                    ),
                },
            )
    (step,) = build(tmp_path, a).turns[0].steps
    assert (step.model, step.said) == ("gemini", "From the event.")


def test_previous_genai_names_system_only_model_span_prompt_tokens_and_completion_event(tmp_path):
    a = Agent()
    completion = [
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [{"id": "t1", "type": "function", "function": {"name": "find", "arguments": '{"x": 2}'}}],
        }
    ]
    with genai_root(a, **{"gen_ai.conversation.id": CONV}):
        # v1.26.0: no operation name, the system alone marks a model span.
        with a.span(
            "ChatCompletions gpt-4",
            {
                "gen_ai.system": "openai",
                "gen_ai.request.model": "gpt-4",
                "gen_ai.usage.prompt_tokens": 7,
                "gen_ai.usage.completion_tokens": 3,
            },
        ) as span:
            span.add_event("gen_ai.content.prompt", {"gen_ai.prompt": "never read"})
            span.add_event("gen_ai.content.completion", {"gen_ai.completion": json.dumps(completion)})
        # The indexed form instrumentations derived from `gen_ai.completion`.
        with a.span(
            "openai.chat",
            {
                "gen_ai.system": "openai",
                "gen_ai.response.model": "gpt-4",
                "gen_ai.prompt.0.content": "never read",
                "gen_ai.completion.0.role": "assistant",
                "gen_ai.completion.0.content": "Done.",
                "gen_ai.completion.0.tool_calls.0.id": "t2",
                "gen_ai.completion.0.tool_calls.0.name": "notify",
                "gen_ai.completion.0.tool_calls.0.arguments": '{"to": "me"}',
            },
        ):
            pass
    t = build(tmp_path, a)
    assert t.turns[0].steps == [
        ModelStep(model="gpt-4", tokens_in=7, tokens_out=3, said="Let me look.", called=["find"]),
        ModelStep(model="gpt-4", said="Done.", called=["notify"]),
    ]
    assert "never read" not in t.model_dump_json()


def test_openinference_agent_root_with_session_id_is_a_turn(tmp_path):
    a = Agent()
    with a.span("agent", {"openinference.span.kind": "AGENT", "session.id": CONV}):
        a.llm("hello", model="llama")
        with a.tool("add", input_value='{"a": 1}', output="2"):
            pass
    t = build(tmp_path, a)
    assert t.found
    assert [type(s).__name__ for s in t.turns[0].steps] == ["ModelStep", "ToolStep"]
    assert t.turns[0].steps[1] == ToolStep(name="add", args={"a": 1}, result="2")


def test_a2a_context_id_alone_makes_a_parentless_server_span_the_turn_root(tmp_path):
    a = Agent()
    for question in ("one", "two"):
        with a.span("POST /", {"a2a.context_id": CONV, "http.method": "POST"}, kind=SpanKind.SERVER):
            with a.span(
                "chat m",
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.output.messages": json.dumps(
                        [{"role": "assistant", "parts": [{"type": "text", "content": question}]}]
                    ),
                },
            ):
                pass
    t = build(tmp_path, a, turns=("q1", "q2"))
    assert [s.said for turn in t.turns for s in turn.steps] == ["one", "two"]


def test_spans_with_a_conversation_id_that_have_a_parent_or_are_client_calls_are_not_roots(tmp_path):
    a = Agent()
    with a.span("outgoing", {"a2a.context_id": CONV}, kind=SpanKind.CLIENT):
        with a.span("inner", {"session.id": CONV}):
            pass
    assert not build(tmp_path, a).found


def test_convention_keys_are_listed_in_formats_section_6():
    """docs/formats.md §6 prints the same table as engine.spans.conventions."""
    text = FORMATS.read_text(encoding="utf-8")
    section = text.split("## 6. Spans and the trajectory", 1)[1].split("\n## 7.", 1)[0]
    keys: set[str] = set()
    for name in dir(conventions):
        value = getattr(conventions, name)
        if name.isupper() and isinstance(value, tuple):
            keys.update(value)
        elif name.isupper() and isinstance(value, dict):
            keys.update(k for k in value if "." in k or k in conventions.GENAI_ROLES)
            keys.update(v for v in value.values() if "." in v)
        elif name.isupper() and isinstance(value, str) and re.fullmatch(r"[a-z_.]+\.[a-z_.]+", value):
            keys.add(value)
    missing = sorted(k for k in keys if f"`{k.rstrip('.')}" not in section)
    assert not missing, f"not in docs/formats.md §6: {missing}"


def collector_line(agent: Agent) -> str:
    """The agent's spans as one line of the OpenTelemetry Collector's file exporter:
    OTLP/JSON with hex ids."""
    message = json_format.MessageToDict(encode_spans(agent.exporter.get_finished_spans()))
    for resource in message["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for s in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in s:
                        s[key] = base64.b64decode(s[key]).hex()
    return json.dumps(message)


def test_a_collector_file_of_otlp_json_requests_reads_as_its_span_lines(tmp_path):
    a = Agent()
    with a.root(CONV), a.graph("react"):
        a.llm("Looking.", [("c1", "get_weather", {"city": "Oslo"})], tokens=(8, 2))
        with a.tool("get_weather", output="rain"):
            pass
    lines_file = write_lines(tmp_path / "agent.jsonl", a.lines())
    collector = tmp_path / "traces.json"
    collector.write_text(collector_line(a) + "\n" + '{"resourceSpans": "not a list"}\n', encoding="utf-8")
    from_lines = build_trajectory(load_spans([lines_file]), CONV, ["hi"])
    index = load_spans([collector])
    assert build_trajectory(index, CONV, ["hi"]) == from_lines
    model, tool = from_lines.turns[0].steps
    assert (model.tokens_in, tool.name, tool.args, tool.result) == (8, "get_weather", {"city": "Oslo"}, "rain")
    (stats,) = index.files
    assert (stats.spans, stats.malformed) == (len(a.lines()), 1)


def zipkin(lines: list[dict]) -> list[dict]:
    """SPEC lines as Zipkin v2 spans: microseconds, text tags, `error` for a failure."""
    out = []
    for s in lines:
        tags = {k: v if isinstance(v, str) else json.dumps(v) for k, v in s["attributes"].items()}
        if s["status"] == "ERROR":
            tags["error"] = s["status_description"] or "true"
        span = {
            "traceId": s["trace_id"],
            "id": s["span_id"],
            "name": s["name"],
            "timestamp": s["start_time"] // 1000,
            "duration": (s["end_time"] - s["start_time"]) // 1000,
            "localEndpoint": {"serviceName": "agent"},
            "tags": tags,
        }
        if s["kind"] != "INTERNAL":
            span["kind"] = s["kind"]
        if s["parent_span_id"]:
            span["parentId"] = s["parent_span_id"]
        out.append(span)
    return out


def jaeger(lines: list[dict]) -> dict:
    """SPEC lines as a Jaeger UI export: typed tags, CHILD_OF references, `span.kind`."""
    kinds = {str: "string", bool: "bool", int: "int64", float: "float64"}
    spans = []
    for s in lines:
        tags = [{"key": k, "type": kinds[type(v)], "value": v} for k, v in s["attributes"].items()]
        if s["kind"] != "INTERNAL":
            tags.append({"key": "span.kind", "type": "string", "value": s["kind"].lower()})
        if s["status"] == "ERROR":
            tags += [
                {"key": "otel.status_code", "type": "string", "value": "ERROR"},
                {"key": "otel.status_description", "type": "string", "value": s["status_description"]},
            ]
        refs = [{"refType": "CHILD_OF", "traceID": s["trace_id"], "spanID": s["parent_span_id"]}]
        spans.append(
            {
                "traceID": s["trace_id"],
                "spanID": s["span_id"],
                "operationName": s["name"],
                "references": refs if s["parent_span_id"] else [],
                "startTime": s["start_time"] // 1000,
                "duration": (s["end_time"] - s["start_time"]) // 1000,
                "tags": tags,
                "logs": [],
                "processID": "p1",
            }
        )
    return {"data": [{"traceID": lines[0]["trace_id"], "spans": spans, "processes": {"p1": {"serviceName": "a"}}}]}


@pytest.mark.parametrize("indent", [2, None], ids=["pretty", "one-line"])
@pytest.mark.parametrize("export", [zipkin, jaeger])
def test_zipkin_and_jaeger_exports_read_as_their_span_lines(tmp_path, export, indent):
    a = Agent()
    with a.root(CONV), a.graph("react"):
        a.llm("Looking.", [("c1", "get_weather", {"city": "Oslo"})], tokens=(8, 2))
        with a.tool("get_weather", output="rain"):
            pass
        with a.tool("get_alerts", error="TimeoutError: no answer"):
            pass
    lines = a.lines()
    expected = build_trajectory(load_spans([write_lines(tmp_path / "agent.jsonl", lines)]), CONV, ["hi"])
    document = tmp_path / f"{export.__name__}.json"
    document.write_text(json.dumps(export(lines), indent=indent), encoding="utf-8")
    index = load_spans([document])
    assert build_trajectory(index, CONV, ["hi"]) == expected
    assert [s.error for s in expected.turns[0].steps][-1] == "TimeoutError: no answer"
    (stats,) = index.files
    assert (stats.spans, stats.malformed) == (len(lines), 0)


def test_a_multi_line_json_document_that_is_no_trace_export_is_one_malformed_entry(tmp_path):
    document = tmp_path / "other.json"
    document.write_text(json.dumps({"not": "traces"}, indent=2), encoding="utf-8")
    (stats,) = load_spans([document]).files
    assert (stats.spans, stats.malformed) == (0, 1)
    assert "1 malformed" in stats.message()
