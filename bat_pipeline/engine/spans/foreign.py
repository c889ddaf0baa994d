"""Trace exports of other tracers as SPEC §5 span lines: Zipkin v2 JSON (a list of spans, as
`GET /api/v2/trace/{id}` or a file of them) and Jaeger JSON (`{"data": [traces]}`, as the
Jaeger UI's "Download JSON" and `/api/traces` give it).

Zipkin tags are text; Jaeger tags keep their type. Both count time in microseconds. A span
fails when its `error` tag is set (its text, for Zipkin, the description) or its
`otel.status_code` tag is `ERROR` (with `otel.status_description`). Span kinds come from
Zipkin's `kind` and Jaeger's `span.kind` tag; annotations and logs become events.
"""

from __future__ import annotations

from typing import Any

_KINDS = {"CLIENT", "SERVER", "PRODUCER", "CONSUMER", "INTERNAL"}


def is_zipkin(doc: object) -> bool:
    return type(doc) is list and bool(doc) and all(type(s) is dict and "traceId" in s and "id" in s for s in doc)


def is_jaeger(doc: object) -> bool:
    return type(doc) is dict and type(doc.get("data")) is list and all(type(t) is dict for t in doc["data"])


def foreign_lines(doc: object) -> tuple[list[dict[str, Any]], int] | None:
    """(span lines, spans refused for missing ids) of a Zipkin or Jaeger export; None for
    any other document."""
    if is_zipkin(doc):
        assert isinstance(doc, list)
        return _collect(_zipkin_line(s) for s in doc)
    if is_jaeger(doc):
        assert isinstance(doc, dict)
        spans = [s for t in doc["data"] for s in (t.get("spans") or []) if type(s) is dict]
        return _collect(_jaeger_line(s) for s in spans)
    return None


def _collect(lines: Any) -> tuple[list[dict[str, Any]], int]:
    kept: list[dict[str, Any]] = []
    refused = 0
    for line in lines:
        if line is None:
            refused += 1
        else:
            kept.append(line)
    return kept, refused


def _id(value: object, size: int) -> str | None:
    """A hex id of `size` hex digits (a shorter one padded on the left, as 64-bit trace ids
    are), or None."""
    if not isinstance(value, str) or not value or len(value) > size:
        return None
    try:
        int(value, 16)
    except ValueError:
        return None
    return value.lower().rjust(size, "0")


def _micros(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return 0
    return int(value) * 1000


def _status(attrs: dict[str, Any], error: object) -> tuple[str, str | None]:
    code = attrs.get("otel.status_code")
    if isinstance(code, str) and code.upper() == "ERROR":
        description = attrs.get("otel.status_description")
        return "ERROR", description if isinstance(description, str) else None
    if error not in (None, False, "false"):
        return "ERROR", error if isinstance(error, str) and error not in ("true", "") else None
    return "UNSET", None


def _zipkin_line(span: dict[str, Any]) -> dict[str, Any] | None:
    trace_id, span_id = _id(span.get("traceId"), 32), _id(span.get("id"), 16)
    if trace_id is None or span_id is None:
        return None
    raw_tags = span.get("tags")
    tags: dict[str, Any] = raw_tags if isinstance(raw_tags, dict) else {}
    attrs = {str(k): v for k, v in tags.items() if k != "error"}
    status, description = _status(attrs, tags.get("error"))
    kind = span.get("kind")
    start = _micros(span.get("timestamp"))
    raw_annotations = span.get("annotations")
    annotations: list[Any] = raw_annotations if isinstance(raw_annotations, list) else []
    return {
        "name": span.get("name") if isinstance(span.get("name"), str) else "",
        "kind": kind if kind in _KINDS else "INTERNAL",
        "trace_id": trace_id,
        "span_id": span_id,
        "parent_span_id": _id(span.get("parentId"), 16),
        "start_time": start,
        "end_time": start + _micros(span.get("duration")),
        "attributes": attrs,
        "status": status,
        "status_description": description,
        "events": [
            {"name": a.get("value"), "time": _micros(a.get("timestamp")), "attributes": {}}
            for a in annotations
            if type(a) is dict and isinstance(a.get("value"), str)
        ],
    }


def _jaeger_values(pairs: object) -> dict[str, Any]:
    """Jaeger's `[{key, type, value}]` as a mapping (binary values left out)."""
    out: dict[str, Any] = {}
    for pair in pairs if isinstance(pairs, list) else []:
        if type(pair) is dict and isinstance(pair.get("key"), str) and str(pair.get("type")).lower() != "binary":
            out[pair["key"]] = pair.get("value")
    return out


def _jaeger_line(span: dict[str, Any]) -> dict[str, Any] | None:
    trace_id, span_id = _id(span.get("traceID"), 32), _id(span.get("spanID"), 16)
    if trace_id is None or span_id is None:
        return None
    tags = _jaeger_values(span.get("tags"))
    kind = tags.pop("span.kind", None)
    error = tags.pop("error", None)
    status, description = _status(tags, error)
    raw_references = span.get("references")
    references: list[Any] = raw_references if isinstance(raw_references, list) else []
    parents = [r for r in references if type(r) is dict and r.get("refType") in ("CHILD_OF", "FOLLOWS_FROM")]
    parent = _id(parents[0].get("spanID"), 16) if parents else None
    start = _micros(span.get("startTime"))
    events = []
    raw_logs = span.get("logs")
    for log in raw_logs if isinstance(raw_logs, list) else []:
        if type(log) is not dict:
            continue
        fields = _jaeger_values(log.get("fields"))
        name = fields.pop("event", "log")
        events.append({"name": str(name), "time": _micros(log.get("timestamp")), "attributes": fields})
    return {
        "name": span.get("operationName") if isinstance(span.get("operationName"), str) else "",
        "kind": kind.upper() if isinstance(kind, str) and kind.upper() in _KINDS else "INTERNAL",
        "trace_id": trace_id,
        "span_id": span_id,
        "parent_span_id": parent,
        "start_time": start,
        "end_time": start + _micros(span.get("duration")),
        "attributes": tags,
        "status": status,
        "status_description": description,
        "events": events,
    }
