"""What the stage assets share: how a step becomes an asset, the evaluation run id and its
tags, the step's log redacted, and plain figures made Dagster metadata."""

import functools
import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import dagster as dg

from bat_pipeline.engine.contracts.timings import RUN_STARTED_VAR
from bat_pipeline.engine.figures import Columns
from bat_pipeline.engine.redaction import Redactor
from bat_pipeline.storage import new_run_id, record_timings

RUN_ID_TAG = "bat_pipeline/run_id"
"""Shared by the partition runs of one evaluation (set by `bat-pipeline run`)."""
RESUME_TAG = "bat_pipeline/resume"
"""`true`: re-run only the missing or eval-error episodes of the model's last run."""

GROUP = "evaluation"


def evaluation_run_id(context: dg.AssetExecutionContext) -> str:
    """The tag when set; else the Dagster run's creation time and id, stable across retries."""
    tagged = context.run.tags.get(RUN_ID_TAG)
    if tagged:
        return tagged
    record = context.instance.get_run_record_by_id(context.run.run_id)
    created = record.create_timestamp if record else datetime.now(UTC)
    return f"{new_run_id(created.astimezone(UTC))}-{context.run.run_id[:8]}"


def run_started(context: dg.AssetExecutionContext) -> float:
    """When the run started (unix time), for the `startup` phase: `bat-pipeline run`'s own
    start when it runs the partition, else the Dagster run's."""
    started = os.environ.get(RUN_STARTED_VAR)
    if started:
        return float(started)
    record = context.instance.get_run_record_by_id(context.run.run_id)
    when = (record.start_time or record.create_timestamp.timestamp()) if record else None
    return float(when) if when else time.time()


def wants_resume(context: dg.AssetExecutionContext, configured: bool) -> bool:
    return configured or context.run.tags.get(RESUME_TAG, "").lower() in ("1", "true", "yes")


class _RedactingFilter(logging.Filter):
    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = self.redactor.text(message)
        if redacted != message:
            record.msg, record.args = redacted, ()
        return True


def redact_log(context: dg.AssetExecutionContext, redactor: Redactor) -> None:
    """Make the step's log lines (`context.log`, what Dagster stores as the run's events)
    pass through `redactor`; a logger filter runs before Dagster builds the event."""
    if redactor and not any(isinstance(f, _RedactingFilter) for f in context.log.filters):
        context.log.addFilter(_RedactingFilter(redactor))


def stage_asset(
    step: Callable[..., Any], prefix: str, *, phase: str | None = None, **options: Any
) -> dg.AssetsDefinition:
    """`step` as the asset of its name in the evaluation group, its key prefixed by the agent
    id (several agents live side by side in one workspace), described by the step's
    docstring as one paragraph (what the UI shows of the asset). `phase`: the step's time is
    that phase of the run (engine.contracts.timings), logged and recorded in the partition's
    timings.json (the step returns its PartitionRef). `options`: more dg.asset arguments
    (`partitions_def`, `check_specs`, ...)."""
    description = " ".join((step.__doc__ or "").split()) or None
    if phase is not None:
        step = _timed(step, phase)
    return dg.asset(key_prefix=prefix, group_name=GROUP, description=description, **options)(step)


def _timed(step: Callable[..., Any], phase: str) -> Callable[..., Any]:
    @functools.wraps(step)
    def timed(context: dg.AssetExecutionContext, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        ref = step(context, *args, **kwargs)
        seconds = time.perf_counter() - start
        context.log.info(f"phase {phase}: {seconds:.2f}s")
        record_timings(ref.dir, {phase: seconds})
        return ref

    return timed


def table(rows: Sequence[Mapping[str, Any]], columns: Columns) -> dg.TableMetadataValue:
    """Rows (engine.figures) as a table the UI shows; `columns`: (name, type) pairs."""
    schema = dg.TableSchema(columns=[dg.TableColumn(name, kind) for name, kind in columns])
    return dg.MetadataValue.table([dg.TableRecord(dict(row)) for row in rows], schema=schema)


def markdown_table(rows: Sequence[Mapping[str, Any]], headers: Sequence[str]) -> dg.MarkdownMetadataValue:
    """Rows as a markdown table, one column per header."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(row[h]) for h in headers) + " |" for row in rows]
    return dg.MetadataValue.md("\n".join(lines))


def metadata(figures: Mapping[str, Any]) -> dict[str, Any]:
    """Plain figures as Dagster metadata: numbers rounded for reading (`readable`; the
    files and the warehouse keep them whole), paths as paths, lists and mappings as JSON,
    the rest as they are."""
    return {name: _value(value) for name, value in figures.items()}


def readable(value: float) -> float:
    """1 decimal from 100 up (124.5 ms), else 4 (0.4386): what a reader of the UI needs."""
    if value != value or value in (float("inf"), float("-inf")):
        return value
    return round(value, 1) if abs(value) >= 100 else round(value, 4)


def _value(value: Any) -> Any:
    if isinstance(value, float):
        return readable(value)
    if isinstance(value, Path):
        return dg.MetadataValue.path(str(value))
    if isinstance(value, (list, tuple, dict)):
        return dg.MetadataValue.json(value)
    return value
