"""The rows one partition contributes to each table, and writing them in place of the
partition's earlier rows.

Only the fields listed in `TABLES` are stored: no environment, keys or URLs; given a
Redactor, every text value is redacted (before any cut, so no part of a secret remains).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import duckdb

from bat_pipeline.engine.config.files import writable_text
from bat_pipeline.engine.contracts.episode import Episode
from bat_pipeline.engine.contracts.metrics import MetricsFile
from bat_pipeline.engine.contracts.scores import QUALITATIVE_FIELDS
from bat_pipeline.engine.contracts.tasks import Task
from bat_pipeline.engine.derived_scores import score_rows
from bat_pipeline.engine.metrics import build_metrics
from bat_pipeline.engine.redaction import Redactor
from bat_pipeline.resources.warehouse.schema import FINAL_OUTPUT_CHARS, TABLES, TEXT_CHARS, transaction
from bat_pipeline.storage import PartitionRef

Rows = dict[str, list[dict[str, Any]]]


def partition_rows(
    ref: PartitionRef,
    episodes: Sequence[Episode],
    tasks: Sequence[Task] = (),
    metrics: MetricsFile | None = None,
    *,
    redactor: Redactor | None = None,
) -> Rows:
    """The rows one partition contributes to each table (pure; no file touched), every
    text redacted by `redactor` when one is given. An episode without score rows gets
    those its verdict and judge scores stand for (`derived_scores.score_rows`)."""
    if metrics is None:
        metrics = build_metrics(episodes, k=ref.k)
    if redactor:
        episodes = [redactor.record(e) for e in episodes]
    key = {"run_id": ref.run_id, "model_key": ref.model_key}
    agent_id = ref.agent_identity
    rows: Rows = {table: [] for table in TABLES}
    rows["runs"].append(
        {
            **key,
            "agent_id": agent_id,
            "model_name": ref.model_name,
            "run_name": ref.run_name,
            "agent_dir": str(ref.agent_dir),
            "started_at": ref.started_at or None,
            "finished_at": ref.finished_at or None,
            "k": ref.k,
            "dagster_run_id": ref.dagster_run_id,
            "written_at": datetime.now(UTC).replace(microsecond=0),
            **(ref.provenance.model_dump() if ref.provenance else {}),
        }
    )
    for task in tasks:
        rows["tasks"].append(
            {
                **key,
                "task_id": task.id,
                "category": _text(task.meta.get("category")),
                "expected_status": task.expected.status,
                "expected_outcome": task.expected.expected_outcome,
                "n_turns": len(task.turns),
            }
        )
    for episode in episodes:
        _episode_rows(rows, key, agent_id, episode)
    rows["model_metrics"].append(_model_metrics_row(key, metrics))
    for per_task in metrics.per_task:
        rows["task_metrics"].append(
            {
                **key,
                "task_id": per_task.task_id,
                "attempts": per_task.attempts,
                "passed": per_task.passed,
                "pass_at_k": per_task.pass_at_k,
                "pass_hat_k": per_task.pass_hat_k,
            }
        )
    for phase, seconds in metrics.timings.items():
        rows["phase_timings"].append({**key, "phase": phase, "seconds": seconds})
    for table_rows in rows.values():
        for row in table_rows:
            row.setdefault("agent_id", agent_id)
    if redactor:
        rows = {table: [redactor.data(row) for row in table_rows] for table, table_rows in rows.items()}
    return rows


def replace_partition(conn: duckdb.DuckDBPyConnection, run_id: str, model_key: str, rows: Rows) -> None:
    """Delete the partition's rows from every table and insert `rows`, in one transaction."""
    with transaction(conn):
        for table in TABLES:
            conn.execute(f"DELETE FROM {table} WHERE run_id = ? AND model_key = ?", [run_id, model_key])
        for table, table_rows in rows.items():
            _insert(conn, table, table_rows)


def _episode_rows(rows: Rows, key: dict[str, str], agent_id: str, episode: Episode) -> None:
    ep_key = {**key, "task_id": episode.task_id, "attempt": episode.attempt_index}
    totals = episode.trace.trajectory.totals
    rows["episodes"].append(
        {
            **ep_key,
            "final_status": episode.final_status,
            "passed": episode.verdict.passed if episode.verdict else None,
            "wall_ms": episode.trace.wall_ms,
            "tokens_in": totals.tokens_in,
            "tokens_out": totals.tokens_out,
            "tokens_cached": totals.tokens_cached,
            "eval_error": _cut(episode.eval_error, TEXT_CHARS),
            "final_output": _cut(episode.final_output, FINAL_OUTPUT_CHARS),
        }
    )
    for position, score in enumerate(score_rows(episode)):
        rows["episode_scores"].append(
            {
                **ep_key,
                "agent_id": agent_id,
                "position": position,
                "scorer": score.scorer,
                "criterion": score.criterion,
                "value": score.value,
                "raw": score.raw,
                "scale": score.scale,
                "passed": score.passed,
                "gating": score.gating,
                "sample": score.sample,
                "judge": score.judge,
                "reason": _cut(score.reason, TEXT_CHARS),
                "details": json.dumps(score.details, ensure_ascii=False, default=str) if score.details else None,
            }
        )
    log = episode.conversation
    if log is not None:
        user = log.simulated_user
        rows["conversations"].append(
            {
                **ep_key,
                "turns": len(log.turns),
                "generated_turns": sum(t.generated for t in log.turns),
                "max_turns": log.max_turns,
                "ended": log.ended,
                "user_model": user.model if user else None,
                "user_calls": user.calls if user else 0,
                "user_tokens_in": user.tokens_in if user else 0,
                "user_tokens_out": user.tokens_out if user else 0,
                "transcript": _cut(json.dumps([t.model_dump() for t in log.turns], ensure_ascii=False), TEXT_CHARS * 4),
            }
        )
    rows["trajectory_totals"].append(
        {
            **ep_key,
            "found": episode.trace.trajectory.found,
            "model_calls": totals.model_calls,
            "tokens_in": totals.tokens_in,
            "tokens_out": totals.tokens_out,
            "tokens_cached": totals.tokens_cached,
            "tool_calls": totals.tool_calls,
            "agent_calls": totals.agent_calls,
            "errors": totals.errors,
            "truncated": episode.trace.trajectory.truncated,
        }
    )


def _model_metrics_row(key: dict[str, str], metrics: MetricsFile) -> dict[str, Any]:
    summary = metrics.summary
    latency = summary.latency_ms
    judge = {
        field: (summary.qualitative[field].avg if field in summary.qualitative else None)
        for field in QUALITATIVE_FIELDS
    }
    return {
        **key,
        "tasks": len(metrics.per_task),
        "episodes": summary.total_runs,
        "passed": summary.passed,
        "failed": summary.failed,
        "pass_rate": summary.pass_rate,
        "pass_at_k": summary.pass_at_k,
        "pass_hat_k": summary.pass_hat_k,
        "error_episodes": summary.error_episodes,
        "p50_ms": latency.p50,
        "p90_ms": latency.p90,
        "p95_ms": latency.p95,
        "p99_ms": latency.p99,
        "avg_wall_ms": summary.time.avg_wall_ms,
        "min_wall_ms": summary.time.min_wall_ms,
        "max_wall_ms": summary.time.max_wall_ms,
        "total_wall_ms": summary.time.total_wall_ms,
        "prompt_tokens_total": summary.tokens.prompt_tokens_total,
        "completion_tokens_total": summary.tokens.completion_tokens_total,
        "total_tokens_total": summary.tokens.total_tokens_total,
        "cached_prompt_pct": summary.tokens.cached_prompt_pct,
        "avg_total_tokens": summary.tokens.avg_total_tokens,
        **judge,
        "confidence": summary.confidence,
        **_bounds("pass_rate_ci", summary.pass_rate_ci),
        **_bounds("pass_at_k_ci", summary.pass_at_k_ci),
        **_bounds("pass_hat_k_ci", summary.pass_hat_k_ci),
        "flaky_tasks": len(summary.flaky_tasks),
    }


def _bounds(name: str, interval: tuple[float, float] | None) -> dict[str, float | None]:
    low, high = interval if interval is not None else (None, None)
    return {f"{name}_low": low, f"{name}_high": high}


def _insert(conn: duckdb.DuckDBPyConnection, table: str, rows: Sequence[Mapping[str, Any]]) -> None:
    """Insert column-wise: one list parameter per column, zipped by `unnest` (one
    statement, however many rows; DuckDB's executemany runs one statement per row)."""
    if not rows:
        return
    columns = TABLES[table]
    selects = ", ".join(f"unnest(?::{kind}[])" for _, kind in columns)
    names = ", ".join(name for name, _ in columns)
    values = [
        [_writable(row.get(name)) for row in rows] if kind == "VARCHAR" else [row.get(name) for row in rows]
        for name, kind in columns
    ]
    conn.execute(f"INSERT INTO {table} ({names}) SELECT * FROM (SELECT {selects})", values)


def _writable(value: Any) -> Any:
    """A text as DuckDB takes it: a lone surrogate of an answer becomes U+FFFD (DuckDB
    refuses the whole insert otherwise)."""
    return writable_text(value) if isinstance(value, str) else value


def _cut(text: str | None, limit: int) -> str | None:
    return text if text is None or len(text) <= limit else text[:limit]


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
