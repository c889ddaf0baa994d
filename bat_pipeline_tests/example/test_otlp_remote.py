"""The example agent's `remote` telemetry output: OTLP/HTTP to a real collector endpoint."""

from __future__ import annotations

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from bat_pipeline.example.loopback import LoopbackServer
from bat_pipeline_tests.support.example_agent import conversation_id, converse, launch_agent

pytestmark = pytest.mark.slow(seconds=3)


class Collector:
    """An OTLP/HTTP trace receiver on 127.0.0.1 that keeps every span it is sent."""

    def __init__(self) -> None:
        self.spans: list = []

        async def traces(request: Request) -> Response:
            message = ExportTraceServiceRequest()
            message.ParseFromString(await request.body())
            for resource in message.resource_spans:
                for scope in resource.scope_spans:
                    self.spans.extend(scope.spans)
            return Response(b"", media_type="application/x-protobuf")

        self.server = LoopbackServer(
            Starlette(routes=[Route("/v1/traces", traces, methods=["POST"])]), name="otlp-collector"
        )

    def __enter__(self) -> Collector:
        self.server.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.stop()


def test_remote_output_sends_the_spans_to_an_otlp_collector(scripted_llm, tmp_path) -> None:
    with Collector() as collector:
        remote = [{"type": "remote", "endpoint": collector.server.base_url}]
        agent = launch_agent(tmp_path, scripted_llm.url, "competent", telemetry=remote).wait_ready()
        conversation = conversation_id("otlp")
        try:
            [exchange] = converse(agent, ["What is the weather in Paris?"], conversation)
        finally:
            assert agent.stop() == 0  # SIGTERM flushes the exporter before exit
    assert exchange.state == "completed"
    roots = [
        s
        for s in collector.spans
        if any(a.key == "gen_ai.conversation.id" and a.value.string_value == conversation for a in s.attributes)
    ]
    assert len(roots) == 1
    trace = [s for s in collector.spans if s.trace_id == roots[0].trace_id]
    kinds = {a.value.string_value for s in trace for a in s.attributes if a.key == "openinference.span.kind"}
    assert {"LLM", "TOOL"} <= kinds
    assert not agent.spans_file.exists()
