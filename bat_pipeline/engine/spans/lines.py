"""One span line into a Span: its ids, name, kind, times, failure reason and role, and the
attributes only of spans that can become a step or a root (model, tool, agent calls,
failed spans). The LangGraph chain spans that make up most of the bytes are kept as
skeletons, enough for parent links and graph node names."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import datetime
from types import MappingProxyType
from typing import Any

from bat_pipeline.engine.spans.conventions import (
    AGENT_CALL,
    AGENT_ROOT,
    ERROR_TYPE,
    MODEL,
    MODEL_INPUT,
    MODEL_OUTPUT_EVENTS,
    MODEL_OUTPUT_JSON,
    span_role,
)

_TRACEBACK = "Traceback (most recent call last)"
# An all-zero parent id is OpenTelemetry's "invalid span id": no parent.
_NO_PARENT = {"", "0000000000000000", "0x0000000000000000"}
_NO_ATTRIBUTES: Mapping[str, Any] = MappingProxyType({})

MAX_DEPTH = 64
"""Deepest nesting of arrays and objects accepted in a span line or in JSON text inside an
attribute. A span is about 4 levels deep; far deeper input would make the recursive code
downstream (verdict matching, JSON and pydantic serialisers) raise RecursionError."""


class Span:
    """One span, as much of it as building trajectories needs."""

    __slots__ = (
        "attributes",
        "end",
        "error",
        "kind",
        "name",
        "parent_id",
        "role",
        "seq",
        "span_id",
        "start",
        "trace_id",
    )

    def __init__(
        self,
        name: str,
        kind: str,
        trace_id: str,
        span_id: str,
        parent_id: str | None,
        start: int,
        end: int,
        error: str | None,
        attributes: Mapping[str, Any],
        seq: int,
        role: str | None,
    ):
        self.name = name
        self.kind = kind
        """INTERNAL | SERVER | CLIENT | PRODUCER | CONSUMER."""
        self.trace_id = trace_id
        self.span_id = span_id
        self.parent_id = parent_id
        """None at a root."""
        self.start = start
        """Unix ns."""
        self.end = end
        self.error = error
        """Why it failed (exception type and message, or the status description); None
        unless its status is ERROR."""
        self.attributes = attributes
        """Empty for spans that can be neither a step nor a root (see the module doc)."""
        self.seq = seq
        """Read order across all files: breaks ties between equal start times."""
        self.role = role
        """MODEL (openinference LLM), TOOL, AGENT_CALL (CLIENT invoke_agent), AGENT_ROOT
        (any other invoke_agent span), or None."""

    @property
    def failed(self) -> bool:
        return self.error is not None

    @property
    def is_agent_call(self) -> bool:
        return self.role == AGENT_CALL

    @property
    def is_agent_root_kind(self) -> bool:
        """A non-CLIENT invoke_agent span: the request an agent served, when it has no parent."""
        return self.role == AGENT_ROOT

    def __repr__(self) -> str:
        return f"Span({self.name!r}, {self.span_id}, parent={self.parent_id})"


def start_order(span: Span) -> tuple[int, int]:
    """Sort key: start time, then read order."""
    return (span.start, span.seq)


def too_deep(value: object, limit: int = MAX_DEPTH) -> bool:
    """True when arrays/objects nest deeper than `limit` (walked without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children: Iterable[object]
        if type(item) is dict:
            children = item.values()
        elif type(item) is list:
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if type(child) in (dict, list))
    return False


def parse_json_text(text: str) -> Any:
    """JSON text inside an attribute, decoded; ValueError when it is not JSON or nests
    deeper than MAX_DEPTH (the caller keeps the text)."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deep") from None
    if type(value) in (dict, list) and too_deep(value):
        raise ValueError("JSON nested too deep")
    return value


def to_span(obj: Any, seq: int) -> Span | None:
    """A Span from one decoded line, or None when the line is not a usable span."""
    try:
        trace_id = obj["trace_id"]
        span_id = obj["span_id"]
        parent = obj["parent_span_id"]
        name = obj["name"]
        kind = obj["kind"]
        attrs = obj["attributes"]
        start = obj["start_time"]
        end = obj["end_time"]
        status = obj["status"]
    except (KeyError, TypeError, IndexError):
        full = _with_defaults(obj)
        return None if full is None else to_span(full, seq)
    if type(trace_id) is not str or type(span_id) is not str or not trace_id or not span_id:
        return None
    if parent is not None:
        if type(parent) is not str:
            return None
        if parent in _NO_PARENT:
            parent = None
    if attrs is None:
        attrs = {}
    if type(name) is not str or type(kind) is not str or type(attrs) is not dict:
        return None
    if type(start) is not int:
        start = _ns(start)
    if type(end) is not int:
        end = _ns(end)
    if start is None or end is None:
        return None
    error = None
    if status is not None and status != "OK" and status != "UNSET":
        description = obj.get("status_description")
        if type(status) is dict:
            description = status.get("description", description)
            status = status.get("status_code")
        if status == "ERROR" or status == "StatusCode.ERROR":
            error = failure_reason(obj.get("events"), description)
            if error == "failed" and type(attrs.get(ERROR_TYPE)) is str and attrs[ERROR_TYPE]:
                error = attrs[ERROR_TYPE]
    role = span_role(attrs, kind, parent is None)
    if role is None and error is None:
        attrs = _NO_ATTRIBUTES
    elif role == MODEL:
        # A model step keeps only what the model said (SPEC §5); its input, the whole
        # conversation so far, is most of a span file's bytes and is never read.
        attrs = {key: value for key, value in attrs.items() if not key.startswith(MODEL_INPUT)}
        if not any(key in attrs for key in MODEL_OUTPUT_JSON):
            _output_from_events(attrs, obj.get("events"))
    return Span(name, kind, trace_id, span_id, parent, start, end, error, attrs, seq, role)


def _output_from_events(attrs: dict[str, Any], events: object) -> None:
    """Copy a model's output messages from the span event that carries them (the
    conventions' MODEL_OUTPUT_EVENTS) into its attributes."""
    if type(events) is not list:
        return
    for event in events:
        if type(event) is not dict:
            continue
        key = MODEL_OUTPUT_EVENTS.get(event.get("name"))  # type: ignore[arg-type]
        event_attrs = event.get("attributes")
        if key is not None and type(event_attrs) is dict and event_attrs.get(key) is not None:
            attrs[key] = event_attrs[key]
            return


def _with_defaults(obj: Any) -> dict[str, Any] | None:
    """A line missing optional fields, or in the OpenTelemetry SDK's own `Span.to_json()`
    shape (ids under `context`, `parent_id`, `SpanKind.X`), as a complete SPEC §5 dict."""
    if type(obj) is not dict:
        return None
    full = dict(obj)
    ctx = obj.get("context")
    if "trace_id" not in obj and isinstance(ctx, dict):
        full["trace_id"], full["span_id"] = ctx.get("trace_id"), ctx.get("span_id")
        full["parent_span_id"] = obj.get("parent_id")
    kind = full.get("kind")
    if isinstance(kind, str) and kind.startswith("SpanKind."):
        full["kind"] = kind[9:]
    for key, default in (
        ("trace_id", None),
        ("span_id", None),
        ("parent_span_id", None),
        ("name", ""),
        ("kind", "INTERNAL"),
        ("attributes", None),
        ("start_time", None),
        ("end_time", None),
        ("status", None),
    ):
        full.setdefault(key, default)
    if full["trace_id"] is None or full["span_id"] is None:
        return None
    return full


def _ns(value: object) -> int | None:
    """Unix ns from an int, a float, a digit string or an ISO-8601 string; 0 when absent."""
    if value is None:
        return 0
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    if isinstance(value, str):
        if value.isdigit():
            return int(value)
        try:
            dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return int(dt.timestamp()) * 1_000_000_000 + dt.microsecond * 1000
    return None


def failure_reason(events: object, description: object) -> str:
    """`exception.type: exception.message` of the last exception event, else the status
    description up to any traceback, else "failed"."""
    if isinstance(events, list):
        for event in reversed(events):
            if not isinstance(event, dict) or event.get("name") != "exception":
                continue
            attrs = event.get("attributes")
            if not isinstance(attrs, dict):
                continue
            etype = attrs.get("exception.type")
            message = attrs.get("exception.message")
            parts = [str(x) for x in (etype, message) if x not in (None, "")]
            if parts:
                return ": ".join(parts)
    if isinstance(description, str):
        cut = description.split(_TRACEBACK, 1)[0].strip()
        if cut:
            return cut
    return "failed"
