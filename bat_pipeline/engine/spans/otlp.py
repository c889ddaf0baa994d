"""OTLP trace export requests (protobuf or JSON, as `POST /v1/traces` carries them) into the
span lines of SPEC §5, decoded with OpenTelemetry's own protobuf messages.

OTLP/JSON is protobuf's JSON mapping except that trace and span ids are hex strings (not
base64) and enums may be integers: the ids are turned into base64 before the message is
parsed, so one decoder reads both.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span as OtlpSpan, Status

from bat_pipeline.engine.spans.lines import MAX_DEPTH

PROTOBUF = "application/x-protobuf"
JSON = "application/json"

_KINDS = {
    OtlpSpan.SPAN_KIND_UNSPECIFIED: "INTERNAL",
    OtlpSpan.SPAN_KIND_INTERNAL: "INTERNAL",
    OtlpSpan.SPAN_KIND_SERVER: "SERVER",
    OtlpSpan.SPAN_KIND_CLIENT: "CLIENT",
    OtlpSpan.SPAN_KIND_PRODUCER: "PRODUCER",
    OtlpSpan.SPAN_KIND_CONSUMER: "CONSUMER",
}
_STATUSES = {Status.STATUS_CODE_UNSET: "UNSET", Status.STATUS_CODE_OK: "OK", Status.STATUS_CODE_ERROR: "ERROR"}
_ID_FIELDS = {"traceId": 16, "spanId": 8, "parentSpanId": 8, "trace_id": 16, "span_id": 8, "parent_span_id": 8}


class OtlpDecodeError(ValueError):
    """The request is not an OTLP trace export in the format it claims."""


@dataclass
class Decoded:
    """The span lines of one export request, and the spans it held that were refused."""

    lines: list[dict[str, Any]] = field(default_factory=list)
    rejected: int = 0
    reasons: list[str] = field(default_factory=list)
    """Why spans were refused, one line per kind of refusal."""


def decode_request(body: bytes, content_type: str) -> Decoded:
    """The spans of an `ExportTraceServiceRequest` in `content_type` (PROTOBUF or JSON).
    Raises OtlpDecodeError when the body is not one; a span without a valid trace or span
    id is refused (counted in `rejected`), the others kept."""
    request = ExportTraceServiceRequest()
    if content_type == PROTOBUF:
        try:
            request.ParseFromString(body)
        except (DecodeError, RecursionError) as exc:
            raise OtlpDecodeError(f"not an OTLP protobuf trace request: {exc}") from None
        return _spans_of(request)
    if content_type == JSON:
        try:
            value = json.loads(body)
        except (ValueError, RecursionError) as exc:
            raise OtlpDecodeError(f"not JSON: {exc}") from None
        return decode_json(value)
    raise OtlpDecodeError(f"unsupported content type {content_type!r}")


def is_json_request(value: object) -> bool:
    """Whether a decoded JSON value looks like an OTLP/JSON trace request (a line of the
    OpenTelemetry Collector's file exporter)."""
    return type(value) is dict and ("resourceSpans" in value or "resource_spans" in value)


def decode_json(value: object) -> Decoded:
    """The spans of an OTLP/JSON trace request already decoded from JSON (it is changed)."""
    if not isinstance(value, dict):
        raise OtlpDecodeError("not an OTLP JSON trace request: the top level is not an object")
    request = ExportTraceServiceRequest()
    try:
        json_format.ParseDict(_hex_ids_to_base64(value), request, ignore_unknown_fields=True)
    except (json_format.ParseError, RecursionError, TypeError, ValueError) as exc:
        raise OtlpDecodeError(f"not an OTLP JSON trace request: {exc}") from None
    return _spans_of(request)


def _spans_of(request: ExportTraceServiceRequest) -> Decoded:
    out = Decoded()
    bad_ids = 0
    for resource_spans in request.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                line = span_line(span)
                if line is None:
                    bad_ids += 1
                else:
                    out.lines.append(line)
    if bad_ids:
        out.rejected += bad_ids
        out.reasons.append(f"{bad_ids} spans without a valid trace id (16 bytes) and span id (8 bytes)")
    return out


def response_body(content_type: str, rejected: int = 0, message: str = "") -> bytes:
    """An `ExportTraceServiceResponse`, with `partial_success` when spans were refused."""
    response = ExportTraceServiceResponse()
    if rejected or message:
        response.partial_success.rejected_spans = rejected
        response.partial_success.error_message = message
    if content_type == JSON:
        return json.dumps(json_format.MessageToDict(response)).encode()
    return bytes(response.SerializeToString())


def span_line(span: OtlpSpan) -> dict[str, Any] | None:
    """One OTLP span as a SPEC §5 line; None without a valid trace or span id."""
    if len(span.trace_id) != 16 or len(span.span_id) != 8 or not any(span.trace_id) or not any(span.span_id):
        return None
    parent = span.parent_span_id.hex() if len(span.parent_span_id) == 8 and any(span.parent_span_id) else None
    return {
        "name": span.name,
        "kind": _KINDS.get(span.kind, "INTERNAL"),
        "trace_id": span.trace_id.hex(),
        "span_id": span.span_id.hex(),
        "parent_span_id": parent,
        "start_time": span.start_time_unix_nano,
        "end_time": span.end_time_unix_nano,
        "attributes": attributes(span.attributes),
        "status": _STATUSES.get(span.status.code, "UNSET"),
        "status_description": span.status.message or None,
        "events": [
            {"name": e.name, "time": e.time_unix_nano, "attributes": attributes(e.attributes)} for e in span.events
        ],
    }


def attributes(pairs: Any) -> dict[str, Any]:
    """OTLP key-values as plain JSON values (the last of a key written twice wins)."""
    return {kv.key: any_value(kv.value) for kv in pairs if isinstance(kv, KeyValue)}


def any_value(value: AnyValue, depth: int = 0) -> Any:
    """An AnyValue as JSON: arrays as lists, key-value lists as objects, bytes as base64;
    past MAX_DEPTH levels the rest is dropped (null)."""
    if depth > MAX_DEPTH:
        return None
    which = value.WhichOneof("value")
    if which == "string_value":
        return value.string_value
    if which == "bool_value":
        return value.bool_value
    if which == "int_value":
        return value.int_value
    if which == "double_value":
        return value.double_value
    if which == "array_value":
        return [any_value(v, depth + 1) for v in value.array_value.values]
    if which == "kvlist_value":
        return {kv.key: any_value(kv.value, depth + 1) for kv in value.kvlist_value.values}
    if which == "bytes_value":
        return base64.b64encode(value.bytes_value).decode()
    return None


def _hex_ids_to_base64(value: Any) -> Any:
    """OTLP/JSON's hex ids as the base64 protobuf's JSON mapping reads; ids that are not
    hex of the right length are left for the span check to refuse (emptied)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, child in item.items():
                size = _ID_FIELDS.get(key)
                if size is not None and isinstance(child, str):
                    try:
                        raw = bytes.fromhex(child)
                    except ValueError:
                        raw = b""
                    if len(raw) != size:
                        try:
                            raw = base64.b64decode(child, validate=True)
                        except (binascii.Error, ValueError):
                            raw = b""
                    item[key] = base64.b64encode(raw).decode()
                elif isinstance(child, dict | list):
                    stack.append(child)
        elif isinstance(item, list):
            stack.extend(c for c in item if isinstance(c, dict | list))
    return value
