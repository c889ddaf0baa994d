"""What the stage assets share: the evaluation run id, tags, and metadata helpers."""

import logging
from datetime import datetime, timezone
from typing import Iterable, Sequence

import dagster as dg

from bat_pipeline.engine.contracts import Episode
from bat_pipeline.engine.contracts.metrics import CriterionStats
from bat_pipeline.engine.redaction import Redactor
from bat_pipeline.engine.score_stats import scores_table
from bat_pipeline.storage import new_run_id

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
    created = record.create_timestamp if record else datetime.now(timezone.utc)
    return f"{new_run_id(created.astimezone(timezone.utc))}-{context.run.run_id[:8]}"


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


def episode_table(episodes: Sequence[Episode], limit: int = 20) -> dg.TableMetadataValue:
    """A small preview of episodes for the UI."""
    rows = [
        dg.TableRecord({
            "task": ep.task_id,
            "try": ep.attempt_index,
            "status": ep.final_status or "",
            "passed": bool(ep.verdict.passed) if ep.verdict else False,
            "wall_ms": round(ep.trace.wall_ms, 1),
            "output": (ep.final_output or "")[:80],
        })
        for ep in episodes[:limit]
    ]
    schema = dg.TableSchema(columns=[
        dg.TableColumn("task", "string"), dg.TableColumn("try", "int"),
        dg.TableColumn("status", "string"), dg.TableColumn("passed", "bool"),
        dg.TableColumn("wall_ms", "float"), dg.TableColumn("output", "string"),
    ])
    return dg.MetadataValue.table(rows, schema=schema)


def score_table(scorers: dict[str, dict[str, CriterionStats]]) -> dg.TableMetadataValue:
    """metrics.json's `summary.scorers` as a table: one row per scorer and criterion."""
    schema = dg.TableSchema(columns=[
        dg.TableColumn("scorer", "string"), dg.TableColumn("criterion", "string"),
        dg.TableColumn("mean", "float"), dg.TableColumn("passed", "int"),
        dg.TableColumn("failed", "int"), dg.TableColumn("count", "int"),
    ])
    return dg.MetadataValue.table([dg.TableRecord(row) for row in scores_table(scorers)], schema=schema)


def counts(episodes: Iterable[Episode]) -> dict[str, int | float]:
    episodes = list(episodes)
    judged = [e for e in episodes if e.verdict is not None]
    passed = sum(1 for e in judged if e.verdict.passed)
    errors = sum(1 for e in episodes if e.eval_error or e.final_status == "error")
    return {
        "episodes": len(episodes),
        "passed": passed,
        "failed": len(judged) - passed,
        "pass_rate": round(passed / len(judged), 4) if judged else 0.0,
        "error_episodes": errors,
    }
