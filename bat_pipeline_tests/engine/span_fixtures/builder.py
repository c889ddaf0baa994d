"""Span files for tests, recorded with the OpenTelemetry SDK and written as SPEC §5 lines.

An `Agent` records the spans one agent would write (its own tracer provider and
in-memory exporter); agents share a `Clock` so times are deterministic and ordered.
`Agent.call_agent` propagates the context the way A2A does, so the called agent's root
has the CLIENT span as parent and the same trace id, while its spans land in its own file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from opentelemetry import context as otel_context, trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode


class Clock:
    """Unix ns that advance by one microsecond per tick."""

    def __init__(self, start: int = 1_700_000_000_000_000_000):
        self.now = start

    def tick(self) -> int:
        self.now += 1000
        return self.now


def to_line(span: ReadableSpan) -> dict:
    """A finished SDK span in the JSON-lines shape of SPEC §5."""
    return {
        "name": span.name,
        "kind": span.kind.name,
        "trace_id": format(span.context.trace_id, "032x"),
        "span_id": format(span.context.span_id, "016x"),
        "parent_span_id": format(span.parent.span_id, "016x") if span.parent else None,
        "start_time": span.start_time,
        "end_time": span.end_time,
        "attributes": {k: list(v) if isinstance(v, tuple) else v for k, v in span.attributes.items()},
        "status": span.status.status_code.name,
        "status_description": span.status.description,
        "events": [{"name": e.name, "time": e.timestamp, "attributes": dict(e.attributes)} for e in span.events],
    }


def write_lines(path: Path, lines: list[dict], *, append: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a" if append else "w", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")
    return path


class Agent:
    """Records the spans of one agent, shaped like bat-adk's (root → LangGraph → node)."""

    def __init__(self, name: str = "Agent", clock: Clock | None = None):
        self.name = name
        self.clock = clock or Clock()
        self.exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.tracer = provider.get_tracer("span_fixtures")

    @contextmanager
    def span(
        self,
        name: str,
        attrs: dict[str, Any] | None = None,
        *,
        kind: SpanKind = SpanKind.INTERNAL,
        context: otel_context.Context | None = None,
        error: str | None = None,
        exception: Exception | None = None,
    ) -> Iterator[trace.Span]:
        """A span around the block; `error` fails it with that status description,
        `exception` also records an exception event."""
        span = self.tracer.start_span(
            name, context=context, kind=kind, attributes=attrs or {}, start_time=self.clock.tick()
        )
        token = otel_context.attach(trace.set_span_in_context(span))
        try:
            yield span
        finally:
            otel_context.detach(token)
            if exception is not None:
                span.record_exception(exception, timestamp=self.clock.tick())
            if error is not None or exception is not None:
                span.set_status(Status(StatusCode.ERROR, error or repr(exception)))
            span.end(end_time=self.clock.tick())

    def root(self, conversation_id: str, *, context: otel_context.Context | None = None, **kw):
        """The root of one request; a new trace unless `context` (from a caller) is given."""
        attrs = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": self.name,
            "gen_ai.conversation.id": conversation_id,
        }
        return self.span(
            f"invoke_agent {self.name}", attrs, context=context if context is not None else otel_context.Context(), **kw
        )

    def chain(self, name: str, node: str | None = None, **kw):
        """A LangGraph chain span; `node` sets its metadata like LangGraph does."""
        attrs: dict[str, Any] = {"openinference.span.kind": "CHAIN"}
        if node:
            attrs["metadata"] = json.dumps({"langgraph_node": node, "langgraph_checkpoint_ns": f"{node}:0f3a|inner:77"})
        return self.span(name, attrs, **kw)

    def graph(self, node: str = "react"):
        """Enter root → LangGraph → `node`: the usual two levels below a root."""
        return _nested(self.chain("LangGraph"), self.chain(node, node))

    def llm(
        self,
        said: str | None = None,
        calls: list[tuple[str, str, Any]] = (),
        *,
        tokens: tuple[int, int] = (10, 5),
        model: str = "m",
        extra: dict | None = None,
        **kw,
    ):
        """A finished model call: `calls` are (call id, tool name, args) it decided."""
        attrs: dict[str, Any] = {
            "openinference.span.kind": "LLM",
            "llm.model_name": model,
            "llm.token_count.prompt": tokens[0],
            "llm.token_count.completion": tokens[1],
            "llm.input_messages.0.message.content": "never shown in a step",
            "llm.output_messages.0.message.role": "assistant",
        }
        if said is not None:
            attrs["llm.output_messages.0.message.content"] = said
        for j, (call_id, name, args) in enumerate(calls):
            p = f"llm.output_messages.0.message.tool_calls.{j}.tool_call."
            if call_id:
                attrs[p + "id"] = call_id
            attrs[p + "function.name"] = name
            attrs[p + "function.arguments"] = json.dumps(args)
        attrs.update(extra or {})
        with self.span("ChatModel", attrs, **kw):
            pass

    def tool(
        self, name: str, input_value: str | None = None, output: str | None = None, extra: dict | None = None, **kw
    ):
        """A tool span (a context manager: steps may run inside it)."""
        attrs: dict[str, Any] = {"openinference.span.kind": "TOOL", "tool.name": name}
        if input_value is not None:
            attrs["input.value"] = input_value
        if output is not None:
            attrs["output.value"] = output
        attrs.update(extra or {})
        return self.span(name, attrs, **kw)

    def call_agent(self, agent: str, asked: str, answered: str, state: str = "completed", **kw):
        """A CLIENT span calling another agent; pass `otel_context.get_current()` inside it
        as the called agent's root `context`."""
        attrs = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": agent,
            "input.value": asked,
            "output.value": answered,
            "bat.a2a.task_state": state,
        }
        return self.span(f"invoke_agent {agent}", attrs, kind=SpanKind.CLIENT, **kw)

    def lines(self) -> list[dict]:
        return [to_line(s) for s in self.exporter.get_finished_spans()]

    def write(self, path: Path) -> Path:
        return write_lines(path, self.lines())


@contextmanager
def _nested(*managers):
    entered = []
    try:
        for m in managers:
            entered.append(m.__enter__())
        yield entered[-1]
    finally:
        for m in reversed(managers[: len(entered)]):
            m.__exit__(None, None, None)


def tool_message(content: Any, call_id: str | None = None) -> str:
    """A LangChain tool message serialized the way LangGraph writes `output.value`."""
    return json.dumps(
        {"type": "tool", "data": {"content": content, "type": "tool", "tool_call_id": call_id, "status": "success"}}
    )
