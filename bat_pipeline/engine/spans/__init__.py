"""Span JSON-lines files read once into an index (SPEC §5).

One line per span: `name, kind, trace_id, span_id, parent_span_id, start_time, end_time,
attributes, status, status_description, events`. Files are appended to by a live agent,
so a line can be torn (the agent was killed mid-write), blank, garbage, or nested deeper
than any span is (MAX_DEPTH); such lines are skipped and counted per file, never raised.

- `conventions`: the span conventions read (OpenInference, OpenTelemetry GenAI, A2A), one table;
- `lines`: one line into a Span (its role, times and failure reason);
- `index`: files into a SpanIndex, by trace, id, parent and conversation;
- `settle`: waiting for a live writer to finish before the files are read.
"""

from bat_pipeline.engine.spans import conventions
from bat_pipeline.engine.spans.conventions import AGENT_CALL, AGENT_ROOT, INVOKE_AGENT, MODEL, TOOL
from bat_pipeline.engine.spans.index import FileStats, SpanIndex, load_spans, span_files_in
from bat_pipeline.engine.spans.lines import (
    MAX_DEPTH,
    Span,
    failure_reason,
    parse_json_text,
    start_order,
    too_deep,
)
from bat_pipeline.engine.spans.settle import wait_until_quiet

__all__ = [
    "AGENT_CALL",
    "AGENT_ROOT",
    "INVOKE_AGENT",
    "MAX_DEPTH",
    "MODEL",
    "TOOL",
    "FileStats",
    "Span",
    "SpanIndex",
    "conventions",
    "failure_reason",
    "load_spans",
    "parse_json_text",
    "span_files_in",
    "start_order",
    "too_deep",
    "wait_until_quiet",
]
