"""resources.score_export: score rows as gen_ai.evaluation.result events to a real OTLP/HTTP
endpoint on 127.0.0.1, and an endpoint that refuses or is down costs a warning only."""

from __future__ import annotations

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from bat_pipeline.engine.config.project import load_project
from bat_pipeline.engine.contracts import Episode
from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.example.loopback import LoopbackServer
from bat_pipeline.locations import EXPORT_OTLP_VAR, overrides_from_env
from bat_pipeline.resources.ports import free_port
from bat_pipeline.resources.score_export import export_scores, logs_url
from bat_pipeline.storage import PartitionRef
from bat_pipeline_tests.engine.span_fixtures.builder import Agent


def partition(tmp_path, agent: Agent | None = None) -> PartitionRef:
    ref = PartitionRef(
        run_id="r1",
        run_name="demo",
        model_key="openai-m",
        model_name="openai:m",
        k=1,
        agent_dir=tmp_path,
        dir=tmp_path / "p",
        output_dir=tmp_path / "out",
    )
    if agent is not None:
        agent.write(ref.dir / "spans" / "agent.jsonl")
        ref.span_files = ["spans/agent.jsonl"]
    return ref


def episode(task: str, *rows: ScoreRow) -> Episode:
    return Episode.model_validate({"model_name": "openai:m", "task_id": task, "scores": [r.model_dump() for r in rows]})


def serve(status: int, received: list):
    async def logs(request: Request) -> Response:
        received.append(ExportLogsServiceRequest.FromString(await request.body()))
        return Response(b"", status_code=status, media_type="application/x-protobuf")

    return LoopbackServer(Starlette(routes=[Route("/v1/logs", logs, methods=["POST"])]), name="logs")


def test_rows_become_events_on_the_last_turns_root_span(tmp_path):
    a = Agent()
    with a.root("t1__try0"):
        pass
    with a.root("t1__try0"):
        pass
    last = a.lines()[-1]
    ref = partition(tmp_path, a)
    rows = [
        ScoreRow(scorer="status", criterion="status", value=1.0, passed=True, gating=True, reason="completed"),
        ScoreRow(scorer="relevance", criterion="response_relevance", raw=4.0, judge="openai:j"),
    ]
    received, said = [], []
    server = serve(200, received)
    server.start()
    try:
        assert export_scores(server.base_url, ref, [episode("t1", *rows), episode("t2", rows[0])], said.append) == 3
    finally:
        server.stop()
    (request,) = received
    records = request.resource_logs[0].scope_logs[0].log_records
    attrs = [{kv.key: kv.value for kv in r.attributes} for r in records]
    assert [r.event_name for r in records] == ["gen_ai.evaluation.result"] * 3
    assert [x["gen_ai.evaluation.name"].string_value for x in attrs] == ["status", "response_relevance", "status"]
    assert attrs[0]["gen_ai.evaluation.score.label"].string_value == "pass"
    assert attrs[0]["gen_ai.evaluation.explanation"].string_value == "completed"
    assert (
        attrs[1]["gen_ai.evaluation.score.value"].double_value == 4.0
        and "gen_ai.evaluation.score.label" not in attrs[1]
    )
    assert (records[0].trace_id.hex(), records[0].span_id.hex()) == (last["trace_id"], last["span_id"])
    assert records[2].span_id == b""  # t2 has no spans: no parent
    assert "1 episodes without spans" in said[0]


def test_an_endpoint_that_refuses_or_is_down_is_a_warning(tmp_path):
    ref = partition(tmp_path)
    row = ScoreRow(scorer="status", criterion="status", value=0.0, passed=False, gating=True)
    said: list[str] = []
    server = serve(503, [])
    server.start()
    try:
        assert export_scores(server.base_url + "/v1/logs", ref, [episode("t", row)], said.append) == 0
    finally:
        server.stop()
    assert export_scores(f"http://127.0.0.1:{free_port()}", ref, [episode("t", row)], said.append) == 0
    assert said[0].startswith("warning: scores not exported") and "HTTP 503" in said[0]
    assert said[1].startswith("warning: scores not exported") and "ConnectError" in said[1]
    assert logs_url("http://h:4318/") == "http://h:4318/v1/logs" == logs_url("http://h:4318/v1/logs")


def test_export_otlp_on_the_command_line_replaces_the_eval_files_endpoint(tmp_path, monkeypatch):
    folder = tmp_path / "agent"
    (folder / "eval").mkdir(parents=True)
    (folder / "eval" / "eval.yaml").write_text(
        "models: ['openai:m']\nexport:\n  otlp_endpoint: http://127.0.0.1:1/\n", encoding="utf-8"
    )
    assert load_project(folder).export.otlp_endpoint == "http://127.0.0.1:1/"
    monkeypatch.setenv(EXPORT_OTLP_VAR, "http://127.0.0.1:2")
    overrides = overrides_from_env()  # as bat-pipeline run hands it to the steps' processes
    assert load_project(folder, overrides).export.otlp_endpoint == "http://127.0.0.1:2"
