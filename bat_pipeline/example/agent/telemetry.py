"""OpenTelemetry setup: a private tracer provider whose spans go where `telemetry.output` says.

Local files get one JSON object per line in the shape of SPEC §5.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SpanExporter,
    SpanExportResult,
)


def span_record(span: ReadableSpan) -> dict[str, Any]:
    """A finished span as the JSON-lines record the evaluation reads."""
    ctx = span.get_span_context()
    assert ctx is not None, "an SDK span always has a context once started"
    return {
        "name": span.name,
        "kind": span.kind.name,
        "trace_id": format(ctx.trace_id, "032x"),
        "span_id": format(ctx.span_id, "016x"),
        "parent_span_id": format(span.parent.span_id, "016x") if span.parent else None,
        "start_time": span.start_time,
        "end_time": span.end_time,
        "attributes": {k: list(v) if isinstance(v, tuple) else v for k, v in (span.attributes or {}).items()},
        "status": span.status.status_code.name,
        "status_description": span.status.description,
        "events": [{"name": e.name, "time": e.timestamp, "attributes": dict(e.attributes or {})} for e in span.events],
    }


class JsonLinesSpanExporter(SpanExporter):
    """Appends spans to a file, one `write()` per line on an O_APPEND descriptor, so several
    processes can share the file without tearing lines."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            for span in spans:
                os.write(fd, (json.dumps(span_record(span)) + "\n").encode())
        finally:
            os.close(fd)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        return None


def _exporter(output: dict[str, Any], folder: Path, local_override: Path | None) -> SpanExporter | None:
    kind = output.get("type")
    if kind == "local":
        target = local_override or Path(output.get("file_path") or "spans.jsonl")
        return JsonLinesSpanExporter(target if target.is_absolute() else folder / target)
    if kind == "remote":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter(endpoint=str(output["endpoint"]).rstrip("/") + "/v1/traces")
    if kind == "console":
        return ConsoleSpanExporter()
    return None


def build_tracer_provider(
    service: str, outputs: list[dict[str, Any]], folder: Path, local_override: Path | None = None
) -> TracerProvider:
    """A provider exporting to every configured output (none: spans are dropped).

    `local_override` replaces the file of `local` outputs (the Forecaster child writes to its
    own file), and adds one when there is none.
    """
    # Not installed globally: a2a-sdk instruments its own classes through the global
    # provider, and those spans are not part of the agent's trajectory.
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    if local_override and not any(o.get("type") == "local" for o in outputs):
        outputs = [*outputs, {"type": "local"}]
    for output in outputs:
        exporter = _exporter(output, folder, local_override)
        if exporter:
            provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=1000))
    return provider
