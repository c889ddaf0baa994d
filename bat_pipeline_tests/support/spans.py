"""Reading span files (JSON lines, SPEC §5) in tests: the spans, the roots of a
conversation, a trace, the SPEC shape and per-conversation totals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bat_pipeline_tests.support.polling import last_value

FIELDS = {
    "name",
    "kind",
    "trace_id",
    "span_id",
    "parent_span_id",
    "start_time",
    "end_time",
    "attributes",
    "status",
    "status_description",
    "events",
}


def shape_errors(span: dict[str, Any]) -> list[str]:
    """What is wrong with one span line against SPEC §5 (empty when it conforms)."""
    errors = []
    if set(span) != FIELDS:
        errors.append(f"fields {sorted(set(span) ^ FIELDS)}")
    if span.get("kind") not in ("INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER"):
        errors.append(f"kind {span.get('kind')}")
    if len(str(span.get("trace_id"))) != 32 or len(str(span.get("span_id"))) != 16:
        errors.append("ids")
    parent = span.get("parent_span_id")
    if parent is not None and len(parent) != 16:
        errors.append("parent id")
    if not (
        isinstance(span.get("start_time"), int)
        and isinstance(span.get("end_time"), int)
        and span["start_time"] <= span["end_time"]
    ):
        errors.append("times")
    if span.get("status") not in ("UNSET", "OK", "ERROR") or not isinstance(span.get("attributes"), dict):
        errors.append("status/attributes")
    for event in span.get("events", []):
        if set(event) != {"name", "time", "attributes"} or not isinstance(event["time"], int):
            errors.append(f"event {event}")
    return errors


def read_spans(path: Path) -> list[dict[str, Any]]:
    """Every span of the file; none when it does not exist (yet)."""
    path = Path(path)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def wait_for_spans(path: Path, predicate: Any, timeout_s: float = 10.0) -> list[dict[str, Any]]:
    """Poll the span file until `predicate(spans)` holds (exporters batch every second);
    the spans read last either way."""
    return last_value(lambda: read_spans(path), predicate, timeout_s)


def roots(spans: list[dict[str, Any]], conversation: str) -> list[dict[str, Any]]:
    """The invoke_agent roots (non-CLIENT, no parent) of one conversation, by start."""
    found = [
        s
        for s in spans
        if s["parent_span_id"] is None
        and s["kind"] != "CLIENT"
        and s["attributes"].get("gen_ai.operation.name") == "invoke_agent"
        and s["attributes"].get("gen_ai.conversation.id") == conversation
    ]
    return sorted(found, key=lambda s: s["start_time"])


def totals(spans: list[dict[str, Any]], conversation: str) -> dict[str, Any]:
    """Model calls, tokens, tool calls `(name, args)`, agent calls and failed spans of a conversation."""
    traces = {r["trace_id"] for r in roots(spans, conversation)}
    mine = [s for s in spans if s["trace_id"] in traces]
    llm = [s for s in mine if s["attributes"].get("openinference.span.kind") == "LLM"]
    return {
        "model_calls": len(llm),
        "tokens": sum(
            s["attributes"].get("llm.token_count.prompt", 0) + s["attributes"].get("llm.token_count.completion", 0)
            for s in llm
        ),
        "tools": [
            (s["attributes"]["tool.name"], json.loads(s["attributes"]["input.value"]))
            for s in mine
            if s["attributes"].get("openinference.span.kind") == "TOOL"
        ],
        "agent_calls": [s["attributes"]["gen_ai.agent.name"] for s in mine if s["kind"] == "CLIENT"],
        "errors": [s["name"] for s in mine if s["status"] == "ERROR"],
    }


def in_trace(spans: list[dict[str, Any]], trace_id: str, kind: str | None = None) -> list[dict[str, Any]]:
    """Spans of a trace by start; with `kind`, only those of that openinference span kind."""
    return sorted(
        (
            s
            for s in spans
            if s["trace_id"] == trace_id and (kind is None or s["attributes"].get("openinference.span.kind") == kind)
        ),
        key=lambda s: s["start_time"],
    )


def root_conversations(spans_file: Path) -> list[str]:
    """Conversation ids of the requests an agent served, one per root span, in file order."""
    ids = []
    for span in read_spans(spans_file):
        attrs = span.get("attributes") or {}
        if (
            span.get("parent_span_id") is None
            and span.get("kind") != "CLIENT"
            and attrs.get("gen_ai.operation.name") == "invoke_agent"
        ):
            ids.append(attrs.get("gen_ai.conversation.id"))
    return ids
