"""resources.otlp_receiver: a real OTLP/HTTP receiver on 127.0.0.1, fed by the stock
OpenTelemetry exporter in a real process and by hand-made requests."""

from __future__ import annotations

import gzip
import json
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import httpx
import pytest
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

from bat_pipeline.engine.config import load_eval_config
from bat_pipeline.engine.contracts.agent import OTLP_SPANS
from bat_pipeline.engine.errors import InputError
from bat_pipeline.engine.spans import load_spans
from bat_pipeline.engine.trajectories import build_trajectory
from bat_pipeline.resources.agent_process import receives_otlp
from bat_pipeline.resources.otlp_receiver import OtlpReceiver
from bat_pipeline_tests.support.polling import wait_for

PROTO = {"Content-Type": "application/x-protobuf"}
JSON_CT = {"Content-Type": "application/json"}
TRACE = bytes(range(1, 17))

EXPORTING_AGENT = textwrap.dedent(
    """
    import json, sys
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.trace import SpanKind

    provider = TracerProvider()
    # Only the standard variables say where: no endpoint in the code.
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    tracer = provider.get_tracer("test-agent")
    root = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Calc", "gen_ai.conversation.id": "c1"}
    with tracer.start_as_current_span("invoke_agent Calc", kind=SpanKind.SERVER, attributes=root):
        out = [{"role": "assistant", "parts": [{"type": "tool_call", "id": "k", "name": "add", "arguments": {"a": 1}}]}]
        chat = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m", "gen_ai.usage.input_tokens": 9,
                "gen_ai.output.messages": json.dumps(out)}
        with tracer.start_as_current_span("chat m", kind=SpanKind.CLIENT, attributes=chat):
            pass
        tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "add", "gen_ai.tool.call.id": "k",
                "gen_ai.tool.call.result": "2"}
        with tracer.start_as_current_span("execute_tool add", attributes=tool):
            pass
    provider.shutdown()
    """
)


OPENINFERENCE_AGENT = textwrap.dedent(
    """
    import json
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    tracer = provider.get_tracer("openinference-agent")
    with tracer.start_as_current_span("agent", attributes={"openinference.span.kind": "AGENT", "session.id": "c1"}):
        out = "llm.output_messages.0.message.tool_calls.0.tool_call."
        chat = {"openinference.span.kind": "LLM", "llm.model_name": "m", "llm.token_count.prompt": 9,
                "llm.output_messages.0.message.role": "assistant", out + "id": "k",
                out + "function.name": "add", out + "function.arguments": json.dumps({"a": 1})}
        with tracer.start_as_current_span("ChatModel", attributes=chat):
            pass
        tool = {"openinference.span.kind": "TOOL", "tool.name": "add", "output.value": "2"}
        with tracer.start_as_current_span("add", attributes=tool):
            pass
    provider.shutdown()
    """
)


def span(span_id: bytes, name: str = "s", trace_id: bytes = TRACE, parent: bytes = b"", **attrs) -> Span:
    s = Span(trace_id=trace_id, span_id=span_id, parent_span_id=parent, name=name, kind=Span.SPAN_KIND_SERVER)
    s.start_time_unix_nano, s.end_time_unix_nano = 1_000, 2_000
    for key, value in attrs.items():
        s.attributes.append(KeyValue(key=key, value=AnyValue(string_value=value)))
    return s


def request(*spans: Span) -> bytes:
    return ExportTraceServiceRequest(
        resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=spans)])]
    ).SerializeToString()


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture
def receiver(tmp_path):
    with OtlpReceiver(tmp_path / "spans" / "agent.jsonl", max_request_bytes=64_000, read_timeout_s=0.5) as r:
        yield r


def post(receiver: OtlpReceiver, body: bytes, headers: dict[str, str], path: str = "/v1/traces") -> httpx.Response:
    return httpx.post(receiver.endpoint + path, content=body, headers=headers, timeout=10)


@pytest.mark.parametrize(
    ("script", "names"),
    [
        (EXPORTING_AGENT, {"invoke_agent Calc", "chat m", "execute_tool add"}),
        (OPENINFERENCE_AGENT, {"agent", "ChatModel", "add"}),
    ],
    ids=["genai", "openinference"],
)
def test_the_stock_exporter_configured_by_environment_alone_lands_spans_in_the_partition_file(receiver, script, names):
    env = {"PATH": "/usr/bin:/bin", **receiver.environment()}
    subprocess.run([sys.executable, "-c", script], env=env, check=True, timeout=60)
    written = lines(receiver.spans_file)
    assert {line["name"] for line in written} == names
    assert receiver.spans_written == 3
    t = build_trajectory(load_spans([receiver.spans_file]), "c1", ["1+1?"])
    model, tool = t.turns[0].steps
    assert (model.model, model.tokens_in, model.called) == ("m", 9, ["add"])
    assert (tool.name, tool.args, tool.result) == ("add", {"a": 1}, "2")


def test_protobuf_and_gzip_requests_append_lines_and_answer_an_export_response(receiver):
    r = post(receiver, request(span(b"\x01" * 8, "a")), PROTO)
    assert r.status_code == 200 and r.headers["content-type"] == "application/x-protobuf"
    assert not ExportTraceServiceResponse.FromString(r.content).HasField("partial_success")
    r = post(
        receiver,
        gzip.compress(request(span(b"\x02" * 8, "b", parent=b"\x01" * 8))),
        {**PROTO, "Content-Encoding": "gzip"},
    )
    assert r.status_code == 200
    a, b = lines(receiver.spans_file)
    assert (a["trace_id"], a["span_id"], a["parent_span_id"], a["kind"]) == (TRACE.hex(), "01" * 8, None, "SERVER")
    assert (b["name"], b["parent_span_id"], b["start_time"], b["end_time"]) == ("b", "01" * 8, 1_000, 2_000)


def test_json_requests_with_hex_ids_and_spans_with_bad_ids_refused_as_partial_success(receiver):
    body = {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": TRACE.hex(),
                                "spanId": "0a" * 8,
                                "name": "chat m",
                                "kind": 3,
                                "startTimeUnixNano": "5",
                                "endTimeUnixNano": "6",
                                "attributes": [
                                    {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                                    {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "12"}},
                                    {
                                        "key": "args",
                                        "value": {
                                            "kvlistValue": {"values": [{"key": "x", "value": {"boolValue": True}}]}
                                        },
                                    },
                                ],
                                "status": {"code": 2, "message": "boom"},
                            },
                            {"traceId": "zz", "spanId": "0b" * 8, "name": "bad trace id"},
                            {"traceId": TRACE.hex(), "name": "no span id"},
                        ]
                    }
                ]
            }
        ]
    }
    r = post(receiver, json.dumps(body).encode(), JSON_CT)
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    assert r.json()["partialSuccess"]["rejectedSpans"] == "2"
    assert "valid trace id" in r.json()["partialSuccess"]["errorMessage"]
    (line,) = lines(receiver.spans_file)
    assert line["kind"] == "CLIENT" and line["status"] == "ERROR" and line["status_description"] == "boom"
    assert line["attributes"] == {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 12, "args": {"x": True}}
    assert receiver.spans_rejected == 2


@pytest.mark.parametrize(
    ("body", "headers", "status"),
    [
        (b"\xff\xff\xff not protobuf", PROTO, 400),
        (b"{not json", JSON_CT, 400),
        (b"[1, 2]", JSON_CT, 400),
        (json.dumps({"resourceSpans": "many"}).encode(), JSON_CT, 400),
        (b"not gzip at all", {**PROTO, "Content-Encoding": "gzip"}, 400),
        (b"x" * 64_001, PROTO, 413),
        (gzip.compress(b"\x00" * 2_000_000), {**PROTO, "Content-Encoding": "gzip"}, 413),
        (b"{}", {"Content-Type": "text/plain"}, 415),
        (b"{}", {**JSON_CT, "Content-Encoding": "br"}, 415),
    ],
    ids=["protobuf", "json", "json-array", "json-shape", "gzip", "too-large", "gzip-bomb", "type", "encoding"],
)
def test_bad_requests_are_refused_with_a_status_and_earlier_spans_kept(receiver, body, headers, status):
    assert post(receiver, request(span(b"\x01" * 8)), PROTO).status_code == 200
    r = post(receiver, body, headers)
    assert r.status_code == status
    if r.headers["content-type"] == "application/x-protobuf":
        assert Status.FromString(r.content).message
    else:
        assert r.json()["message"]
    assert [line["span_id"] for line in lines(receiver.spans_file)] == ["01" * 8]
    assert receiver.requests_refused == {status: 1}
    assert post(receiver, request(span(b"\x02" * 8)), PROTO).status_code == 200


def test_other_paths_and_methods_are_refused(receiver):
    assert post(receiver, request(span(b"\x01" * 8)), PROTO, path="/v1/metrics").status_code == 404
    assert httpx.get(receiver.endpoint + "/v1/traces").status_code == 405
    assert not receiver.spans_file.exists()


def test_a_full_span_file_refuses_further_spans_as_partial_success(tmp_path):
    with OtlpReceiver(tmp_path / "agent.jsonl", max_file_bytes=700) as receiver:
        big = "x" * 200
        r = post(receiver, request(*(span(bytes([i]) * 8, attr=big) for i in range(1, 5))), PROTO)
        answer = ExportTraceServiceResponse.FromString(r.content).partial_success
        written = lines(receiver.spans_file)
        assert r.status_code == 200 and 0 < len(written) < 4
        assert answer.rejected_spans == 4 - len(written) and "700 bytes" in answer.error_message
        assert receiver.spans_file.stat().st_size <= 700


def test_a_slow_request_holds_only_itself_and_is_dropped(receiver):
    with socket.create_connection(("127.0.0.1", receiver.port), timeout=10) as slow:
        slow.sendall(
            b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
            b"Content-Length: 5000\r\n\r\nabc"
        )
        assert post(receiver, request(span(b"\x01" * 8)), PROTO).status_code == 200
        # The receiver closes the connection once it has sent nothing for read_timeout_s.
        assert slow.recv(100) == b""
    assert [line["span_id"] for line in lines(receiver.spans_file)] == ["01" * 8]
    assert receiver.requests_refused == {408: 1}


def test_connections_past_the_bound_are_answered_503_and_the_others_served(tmp_path):
    with OtlpReceiver(tmp_path / "agent.jsonl", max_connections=2, read_timeout_s=5) as receiver:
        address = ("127.0.0.1", receiver.port)
        with socket.create_connection(address, timeout=10) as one, socket.create_connection(address, timeout=10) as two:
            # Both slots held by connections that send nothing: a third is turned away at once.
            with socket.create_connection(address, timeout=10) as third:
                assert third.recv(100).startswith(b"HTTP/1.1 503")
            one.close()
            two.close()
        assert receiver.requests_refused == {503: 1}
        # Slots come back when connections end: the exporter's retry gets through.
        assert wait_for(lambda: _posted(receiver), 10, what="a slot freed")
    assert [line["span_id"] for line in lines(receiver.spans_file)][:1] == ["01" * 8]


def _posted(receiver: OtlpReceiver) -> bool:
    try:
        return post(receiver, request(span(b"\x01" * 8)), PROTO).status_code == 200
    except httpx.HTTPError:
        return False


def test_the_receiver_listens_on_loopback_only(receiver):
    port_hex = f"{receiver.port:04X}"
    listening = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for row in Path(table).read_text().splitlines()[1:]:
            local, state = row.split()[1], row.split()[3]
            if local.endswith(":" + port_hex) and state == "0A":  # LISTEN
                listening.append(local.split(":")[0])
    assert listening == ["0100007F"]  # 127.0.0.1, and nothing on other addresses or IPv6
    assert receiver.endpoint.startswith("http://127.0.0.1:")


def eval_folder(tmp_path: Path, agent_block: str, *, config_yaml: bool = False) -> Path:
    folder = tmp_path / "agent"
    (folder / "eval").mkdir(parents=True)
    (folder / "eval" / "eval.yaml").write_text(f"models: ['openai:m']\nagent:\n{agent_block}")
    if config_yaml:
        (folder / "config.yaml").write_text("telemetry: {output: []}\n")
    return folder


@pytest.mark.parametrize(
    ("agent_block", "config_yaml", "receives"),
    [
        ("  spans: otlp\n", True, True),  # asked for, even beside a config.yaml
        ("  command: [run-me]\n  spans: [otlp, more.jsonl]\n", False, True),
        ("  command: [run-me]\n", False, True),  # no other way to hand over spans: automatic
        ("  command: [run-me, --spans, '{spans}']\n", False, False),  # writes the span file itself
        ("  command: [run-me]\n  spans: [own.jsonl]\n", False, False),
        ("  command: [run-me]\n", True, False),  # its config.yaml's telemetry says where
        ("  url: http://127.0.0.1:9\n", False, False),
    ],
)
def test_when_a_partition_runs_a_receiver(tmp_path, agent_block, config_yaml, receives):
    config = load_eval_config(eval_folder(tmp_path, agent_block, config_yaml=config_yaml), environ={})
    assert receives_otlp(config) is receives
    assert OTLP_SPANS not in config.agent.span_files


def test_spans_otlp_for_an_agent_at_a_url_is_refused_naming_the_field(tmp_path):
    folder = eval_folder(tmp_path, "  url: http://127.0.0.1:9\n  spans: otlp\n")
    with pytest.raises(InputError) as caught:
        load_eval_config(folder, environ={})
    assert str(folder / "eval" / "eval.yaml") in str(caught.value) and "otlp" in str(caught.value)
    assert (caught.value.entry, caught.value.field) == ("agent", "spans")
