"""Score rows as OpenTelemetry GenAI evaluation events (`gen_ai.evaluation.result`), in an
OTLP logs export request, each parented to the span of the conversation turn it grades, so
verdicts show beside the agent's own spans in a tracing backend.

Attributes (GenAI semantic conventions v1.38.0 on): `gen_ai.evaluation.name` (the row's
criterion), `gen_ai.evaluation.score.value` (its value in [0, 1], else its raw number),
`gen_ai.evaluation.score.label` (`pass` / `fail` where the row decides), and
`gen_ai.evaluation.explanation` (its reason); ours: `bat.scorer`, `bat.task_id`,
`bat.attempt`, `bat.model`, `bat.run_id`, and `gen_ai.conversation.id`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, InstrumentationScope, KeyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord, ResourceLogs, ScopeLogs
from opentelemetry.proto.resource.v1.resource_pb2 import Resource

from bat_pipeline.engine.contracts.scores import ScoreRow

EVENT_NAME = "gen_ai.evaluation.result"


@dataclass(frozen=True)
class GradedTurn:
    """Where an episode's rows attach: its conversation and the span of the turn graded
    (hex ids; None when its spans were not found: the event then has no parent)."""

    conversation_id: str
    task_id: str
    attempt: int
    trace_id: str | None
    span_id: str | None


def _value(value: str | float | int | bool) -> AnyValue:
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    return AnyValue(string_value=value)


def evaluation_event(row: ScoreRow, turn: GradedTurn, *, model: str, run_id: str, time_ns: int) -> LogRecord:
    """One row as one `gen_ai.evaluation.result` event."""
    attributes: dict[str, str | float | int | bool] = {
        "gen_ai.evaluation.name": row.criterion,
        "gen_ai.conversation.id": turn.conversation_id,
        "bat.scorer": row.scorer,
        "bat.task_id": turn.task_id,
        "bat.attempt": turn.attempt,
        "bat.model": model,
        "bat.run_id": run_id,
        "bat.gating": row.gating,
    }
    score = row.value if row.value is not None else row.raw
    if score is not None:
        attributes["gen_ai.evaluation.score.value"] = float(score)
    if row.passed is not None:
        attributes["gen_ai.evaluation.score.label"] = "pass" if row.passed else "fail"
    if row.reason:
        attributes["gen_ai.evaluation.explanation"] = row.reason
    if row.judge:
        attributes["bat.judge"] = row.judge
    record = LogRecord(
        time_unix_nano=time_ns,
        observed_time_unix_nano=time_ns,
        event_name=EVENT_NAME,
        attributes=[KeyValue(key=k, value=_value(v)) for k, v in attributes.items()],
    )
    if turn.trace_id and turn.span_id:
        record.trace_id = bytes.fromhex(turn.trace_id)
        record.span_id = bytes.fromhex(turn.span_id)
    return record


def evaluation_request(
    graded: Sequence[tuple[GradedTurn, Sequence[ScoreRow]]], *, model: str, run_id: str, service: str, time_ns: int
) -> ExportLogsServiceRequest:
    """Every row of every graded turn as one logs export request from `service`."""
    records = [
        evaluation_event(row, turn, model=model, run_id=run_id, time_ns=time_ns)
        for turn, rows in graded
        for row in rows
    ]
    resource = Resource(attributes=[KeyValue(key="service.name", value=AnyValue(string_value=service))])
    scope = InstrumentationScope(name="bat_pipeline")
    return ExportLogsServiceRequest(
        resource_logs=[ResourceLogs(resource=resource, scope_logs=[ScopeLogs(scope=scope, log_records=records)])]
    )
