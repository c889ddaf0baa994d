"""History across runs in one DuckDB file: every run × model's episodes, checks, scores
and metrics, with views for the latest run per model and each model's trend.

A partition is keyed by (run_id, model_key); writing it again replaces exactly its rows,
in one transaction. Run ids sort in time order (`storage.new_run_id`), so "latest" and
"previous" mean by run id.

DuckDB allows one read-write process per database file, and a read-only process blocks
writers too (https://duckdb.org/docs/current/connect/concurrency). Partitions run as
separate processes under Dagster's multiprocess executor, so writers take an exclusive
`fcntl.flock` on `<db>.lock` around open-write-close (readers of this module take it
shared), and every connection is short-lived. A process that opened the file without
that lock (the UI, a notebook) makes DuckDB's open fail with an IO "Could not set lock"
error: the open is retried with backoff up to `max_wait_s`, then `WarehouseBusyError`
says which file and that another process holds it. The partition's files stay on disk,
so a later run can load them again.

Only the fields listed in `TABLES` are stored: no environment, keys or URLs; given a
Redactor, every text value is redacted (before any cut, so no part of a secret remains).
"""

from __future__ import annotations

import fcntl
import logging
import os
import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
from dagster_duckdb import DuckDBResource
from pydantic import Field

from bat_pipeline.engine.contracts.config import safe_key
from bat_pipeline.engine.contracts.episode import SCORE_FIELDS, Episode
from bat_pipeline.engine.contracts.metrics import MetricsFile
from bat_pipeline.engine.contracts.tasks import Task
from bat_pipeline.engine.metrics import build_metrics
from bat_pipeline.engine.redaction import Redactor
from bat_pipeline.storage import PartitionRef

if TYPE_CHECKING:
    from bat_pipeline.engine.charts import ChartData

log = logging.getLogger(__name__)

DEFAULT_MAX_WAIT_S = 60.0
"""How long an open waits for another process to let go of the file."""
FINAL_OUTPUT_CHARS = 2000
"""The episode's final output is cut to this length in the warehouse."""
TEXT_CHARS = 4000
"""Check details, judge reasoning and errors are cut to this length."""

_JUDGE_COLUMNS = tuple(SCORE_FIELDS.values())

TABLES: dict[str, tuple[tuple[str, str], ...]] = {
    "runs": (
        ("run_id", "VARCHAR"), ("model_key", "VARCHAR"), ("agent_id", "VARCHAR"), ("model_name", "VARCHAR"),
        ("run_name", "VARCHAR"), ("agent_dir", "VARCHAR"), ("started_at", "VARCHAR"),
        ("finished_at", "VARCHAR"), ("k", "INTEGER"), ("dagster_run_id", "VARCHAR"),
        ("written_at", "VARCHAR"),
    ),
    "tasks": (
        ("run_id", "VARCHAR"), ("model_key", "VARCHAR"), ("task_id", "VARCHAR"),
        ("category", "VARCHAR"), ("expected_status", "VARCHAR"),
        ("expected_outcome", "VARCHAR"), ("n_turns", "INTEGER"),
    ),
    "episodes": (
        ("run_id", "VARCHAR"), ("model_key", "VARCHAR"), ("task_id", "VARCHAR"),
        ("attempt", "INTEGER"), ("final_status", "VARCHAR"), ("passed", "BOOLEAN"),
        ("wall_ms", "DOUBLE"), ("tokens_in", "BIGINT"), ("tokens_out", "BIGINT"),
        ("tokens_cached", "BIGINT"), ("eval_error", "VARCHAR"), ("final_output", "VARCHAR"),
    ),
    "verdict_checks": (
        ("run_id", "VARCHAR"), ("model_key", "VARCHAR"), ("task_id", "VARCHAR"),
        ("attempt", "INTEGER"), ("position", "INTEGER"), ("check_name", "VARCHAR"),
        ("passed", "BOOLEAN"), ("detail", "VARCHAR"),
    ),
    "judge_scores": (
        ("run_id", "VARCHAR"), ("model_key", "VARCHAR"), ("task_id", "VARCHAR"),
        ("attempt", "INTEGER"), ("rubric", "VARCHAR"), ("score_field", "VARCHAR"),
        ("score", "DOUBLE"), ("reasoning", "VARCHAR"), ("error", "VARCHAR"),
    ),
    "trajectory_totals": (
        ("run_id", "VARCHAR"), ("model_key", "VARCHAR"), ("task_id", "VARCHAR"),
        ("attempt", "INTEGER"), ("found", "BOOLEAN"), ("model_calls", "BIGINT"),
        ("tokens_in", "BIGINT"), ("tokens_out", "BIGINT"), ("tokens_cached", "BIGINT"),
        ("tool_calls", "BIGINT"), ("agent_calls", "BIGINT"), ("errors", "BIGINT"),
        ("truncated", "BOOLEAN"),
    ),
    "model_metrics": (
        ("run_id", "VARCHAR"), ("model_key", "VARCHAR"), ("tasks", "INTEGER"),
        ("episodes", "INTEGER"), ("passed", "INTEGER"), ("failed", "INTEGER"),
        ("pass_rate", "DOUBLE"), ("pass_at_k", "DOUBLE"), ("pass_hat_k", "DOUBLE"),
        ("error_episodes", "INTEGER"), ("p50_ms", "DOUBLE"), ("p90_ms", "DOUBLE"),
        ("p95_ms", "DOUBLE"), ("p99_ms", "DOUBLE"), ("avg_wall_ms", "DOUBLE"),
        ("min_wall_ms", "DOUBLE"), ("max_wall_ms", "DOUBLE"), ("total_wall_ms", "DOUBLE"),
        ("prompt_tokens_total", "BIGINT"), ("completion_tokens_total", "BIGINT"),
        ("total_tokens_total", "BIGINT"), ("cached_prompt_pct", "DOUBLE"),
        ("avg_total_tokens", "DOUBLE"),
        *((column, "DOUBLE") for column in _JUDGE_COLUMNS),
    ),
    "task_metrics": (
        ("run_id", "VARCHAR"), ("model_key", "VARCHAR"), ("task_id", "VARCHAR"),
        ("attempts", "INTEGER"), ("passed", "INTEGER"), ("pass_at_k", "DOUBLE"),
        ("pass_hat_k", "DOUBLE"),
    ),
}
"""Table → (column, DuckDB type). Every table starts with run_id, model_key."""

_VIEWS = {
    "latest_model_metrics": """
        SELECT r.agent_id, m.run_id, m.model_key, r.model_name, r.run_name, r.started_at, r.finished_at,
               r.k, m.* EXCLUDE (run_id, model_key)
        FROM model_metrics m JOIN runs r USING (run_id, model_key)
        QUALIFY row_number() OVER (PARTITION BY r.agent_id, m.model_key ORDER BY m.run_id DESC) = 1
        ORDER BY r.agent_id, m.model_key""",
    "model_trend": """
        SELECT r.agent_id, m.model_key, r.model_name, m.run_id, r.run_name, r.started_at,
               row_number() OVER w AS run_index,
               m.pass_rate,
               lag(m.pass_rate) OVER w AS previous_pass_rate,
               m.pass_rate - lag(m.pass_rate) OVER w AS pass_rate_change,
               m.pass_at_k, m.pass_hat_k, m.error_episodes, m.episodes, m.avg_wall_ms,
               m.p95_ms, m.total_tokens_total, m.task_completion_quality
        FROM model_metrics m JOIN runs r USING (run_id, model_key)
        WINDOW w AS (PARTITION BY r.agent_id, m.model_key ORDER BY m.run_id)
        ORDER BY r.agent_id, m.model_key, m.run_id""",
}
"""View → its query; views read only model_metrics and runs. Each agent (runs.agent_id)
has its own latest run and trend per model: agents sharing a storage root never mix."""

SCHEMA_VERSION = 2
"""1: the first release (no version table); 2: runs.agent_id."""


class WarehouseBusyError(RuntimeError):
    """Another process kept the warehouse file locked for longer than the allowed wait."""

    def __init__(self, path: Path, waited_s: float, read_only: bool, cause: str):
        self.path = path
        self.waited_s = waited_s
        mode = "read-only" if read_only else "for writing"
        super().__init__(
            f"could not open the warehouse {path} {mode}: another process holds it "
            f"(DuckDB allows one writer, and any reader blocks writers; the Dagster UI or a "
            f"notebook with the file open does). Gave up after {waited_s:.1f}s. Close that "
            f"process and re-run; the partition's files stay on disk. ({cause})"
        )


class Warehouse:
    """The DuckDB warehouse at `path`, usable without Dagster.

    `max_wait_s` bounds how long an open waits for other processes; `on_wait` is called
    with a message the first time an open has to wait (for logs, or tests).
    """

    def __init__(self, path: str | os.PathLike[str], *, max_wait_s: float = DEFAULT_MAX_WAIT_S,
                 on_wait: Callable[[str], None] | None = None,
                 connection_config: Mapping[str, Any] | None = None):
        self.path = Path(path)
        self.max_wait_s = max_wait_s
        self.on_wait = on_wait
        self.connection_config = dict(connection_config or {})
        self._current = False
        """True once this object has seen the file at SCHEMA_VERSION."""

    @property
    def lock_path(self) -> Path:
        return self.path.with_name(self.path.name + ".lock")

    @contextmanager
    def connect(self, *, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        """A short-lived connection, closed on exit.

        Writing: holds the exclusive lock file, creates the file, tables and views.
        Read-only: raises FileNotFoundError when the file does not exist yet. Both retry
        while another process holds the file, then raise WarehouseBusyError.
        """
        if read_only and not self.path.exists():
            raise FileNotFoundError(f"no warehouse at {self.path} yet: nothing was written to it")
        if read_only and not self._current:
            self._bring_up_to_date()
        patience = _Patience(self.max_wait_s, self._waiting)
        with self._file_lock(exclusive=not read_only, patience=patience):
            conn = self._open(read_only, patience)
            try:
                if not read_only:
                    _ensure_schema(conn)
                    self._current = True
                yield conn
            finally:
                conn.close()

    def write_partition(self, ref: PartitionRef, episodes: Sequence[Episode],
                        tasks: Sequence[Task] = (), metrics: MetricsFile | None = None,
                        redactor: Redactor | None = None) -> dict[str, int]:
        """Replace the rows of (ref.run_id, ref.model_key) in every table, in one
        transaction; other runs and models are untouched. `metrics` defaults to
        `build_metrics(episodes, k=ref.k)`. Returns rows written per table."""
        rows = partition_rows(ref, episodes, tasks, metrics, redactor=redactor)
        with self.connect() as conn:
            conn.execute("BEGIN TRANSACTION")
            try:
                for table in TABLES:
                    conn.execute(f"DELETE FROM {table} WHERE run_id = ? AND model_key = ?",
                                 [ref.run_id, ref.model_key])
                for table, table_rows in rows.items():
                    _insert(conn, table, table_rows)
                conn.execute("COMMIT")
            except BaseException:
                with suppress(duckdb.Error):  # no transaction left when COMMIT itself failed
                    conn.execute("ROLLBACK")
                raise
        return {table: len(table_rows) for table, table_rows in rows.items()}

    def query(self, sql: str, params: Sequence[Any] | None = None) -> list[dict[str, Any]]:
        """Rows of a read-only query as dicts; [] when the warehouse does not exist yet."""
        if not self.path.exists():
            return []
        with self.connect(read_only=True) as conn:
            return _fetch(conn, sql, params)

    def model_summary(self, run_id: str) -> list[dict[str, Any]]:
        """model_metrics of one run, with model and run names, one row per model."""
        return self.query(
            "SELECT m.run_id, m.model_key, r.agent_id, r.model_name, r.run_name, r.k, "
            "m.* EXCLUDE (run_id, model_key) "
            "FROM model_metrics m JOIN runs r USING (run_id, model_key) "
            "WHERE m.run_id = ? ORDER BY m.model_key", [run_id])

    def latest(self, agent_id: str | None = None) -> list[dict[str, Any]]:
        """The `latest_model_metrics` view: each model's newest run (of one agent, or of
        every agent when `agent_id` is None)."""
        return self.query("SELECT * FROM latest_model_metrics WHERE (? IS NULL OR agent_id = ?) "
                          "ORDER BY agent_id, model_key", [agent_id, agent_id])

    def trend(self, model_key: str | None = None, last_n: int = 10,
              agent_id: str | None = None) -> list[dict[str, Any]]:
        """The `model_trend` view over each model's last `last_n` runs (all models when
        `model_key` is None; all agents when `agent_id` is None), ordered by agent, model,
        then run."""
        return self.query(
            "SELECT * FROM model_trend WHERE (? IS NULL OR model_key = ?) AND (? IS NULL OR agent_id = ?) "
            "QUALIFY row_number() OVER (PARTITION BY agent_id, model_key ORDER BY run_id DESC) <= ? "
            "ORDER BY agent_id, model_key, run_id", [model_key, model_key, agent_id, agent_id, last_n])

    def previous_metrics(self, model_key: str, before_run_id: str,
                         agent_id: str | None = None) -> dict[str, Any] | None:
        """The model's metrics in its newest run before `before_run_id` (of that agent,
        when given); None if none."""
        rows = self.query(
            "SELECT m.run_id, m.model_key, r.agent_id, r.model_name, r.run_name, m.* EXCLUDE (run_id, model_key) "
            "FROM model_metrics m JOIN runs r USING (run_id, model_key) "
            "WHERE m.model_key = ? AND m.run_id < ? AND (? IS NULL OR r.agent_id = ?) "
            "ORDER BY m.run_id DESC LIMIT 1",
            [model_key, before_run_id, agent_id, agent_id])
        return rows[0] if rows else None

    def history_runs(self) -> list[dict[str, Any]]:
        """Every (run, model) written, oldest first, with its pass rate and episode count."""
        return self.query(
            "SELECT r.*, m.pass_rate, m.episodes FROM runs r "
            "LEFT JOIN model_metrics m USING (run_id, model_key) ORDER BY r.run_id, r.model_key")

    def chart_data(self, run_id: str | None = None, last_n: int = 10,
                   agent_id: str | None = None) -> ChartData:
        """What `charts.render_all` draws: the models, episodes and tasks of one run (of each
        model's latest run when `run_id` is None) and the trend over the last runs; only
        that agent's runs when `agent_id` is given."""
        from bat_pipeline.engine.charts import ChartData  # matplotlib only when charts are drawn

        if not self.path.exists():
            return ChartData()
        agent = [agent_id, agent_id]
        if run_id is None:
            scope = ("JOIN (SELECT run_id, model_key FROM latest_model_metrics WHERE (? IS NULL OR agent_id = ?)) l "
                     "USING (run_id, model_key)")
            params: list[Any] = agent
            models_sql = ("SELECT * FROM latest_model_metrics WHERE (? IS NULL OR agent_id = ?) "
                          "ORDER BY model_key")
        else:
            scope, params = "WHERE x.run_id = ?", [run_id]
            models_sql = ("SELECT m.run_id, m.model_key, r.model_name, m.* EXCLUDE (run_id, model_key) "
                          "FROM model_metrics m JOIN runs r USING (run_id, model_key) "
                          "WHERE m.run_id = ? ORDER BY m.model_key")
        with self.connect(read_only=True) as conn:
            return ChartData(
                models=_fetch(conn, models_sql, params),
                episodes=_fetch(conn, "SELECT x.model_key, x.task_id, x.attempt, x.passed, x.wall_ms, "
                                      "x.tokens_in, x.tokens_out FROM episodes x " + scope
                                      + " ORDER BY x.model_key, x.task_id, x.attempt", params),
                tasks=_fetch(conn, "SELECT x.model_key, x.task_id, x.attempts, x.passed, x.pass_at_k, "
                                   "x.pass_hat_k FROM task_metrics x " + scope
                                   + " ORDER BY x.model_key, x.task_id", params),
                trend=_fetch(conn, "SELECT model_key, run_id, run_index, pass_rate FROM model_trend "
                                   "WHERE (? IS NULL OR agent_id = ?) "
                                   "QUALIFY row_number() OVER (PARTITION BY agent_id, model_key ORDER BY run_id DESC) <= ? "
                                   "ORDER BY model_key, run_id", [*agent, last_n]),
            )

    def _bring_up_to_date(self) -> None:
        """Readers query the current schema: a file of an older release is migrated first
        (briefly opened for writing); a file already current is only read."""
        patience = _Patience(self.max_wait_s, self._waiting)
        with self._file_lock(exclusive=False, patience=patience):
            conn = self._open(True, patience)
            try:
                current = _schema_version(conn) == SCHEMA_VERSION
            finally:
                conn.close()
        if not current:
            with self.connect():
                pass
        self._current = True

    def _waiting(self, message: str) -> None:
        log.info(message)
        if self.on_wait is not None:
            self.on_wait(message)

    @contextmanager
    def _file_lock(self, *, exclusive: bool, patience: _Patience) -> Iterator[None]:
        """flock on `<db>.lock`: exclusive for writers, shared for readers. A reader that
        cannot create the lock file (read-only folder) goes on without it."""
        try:
            self.lock_path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            if exclusive:
                raise
            fd = None
        if fd is None:
            yield
            return
        try:
            operation = (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB
            while True:
                try:
                    fcntl.flock(fd, operation)
                    break
                except BlockingIOError:
                    reason = f"another bat_pipeline process is writing the warehouse (lock {self.lock_path})"
                    if not patience.wait(f"waiting: {reason}"):
                        raise WarehouseBusyError(self.path, patience.waited, not exclusive, reason) from None
            yield
        finally:
            os.close(fd)  # closing the descriptor releases the flock

    def _open(self, read_only: bool, patience: _Patience) -> duckdb.DuckDBPyConnection:
        if not read_only:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        config = {"custom_user_agent": "bat_pipeline", **self.connection_config}
        while True:
            try:
                return duckdb.connect(str(self.path), read_only=read_only, config=config)
            except duckdb.IOException as error:
                if "lock" not in str(error).lower():
                    raise
                if not patience.wait(f"waiting: another process has {self.path} open ({error})"):
                    raise WarehouseBusyError(self.path, patience.waited, read_only, str(error)) from error


class _Patience:
    """Backoff with jitter until a deadline; notifies once, on the first wait."""

    def __init__(self, max_wait_s: float, notify: Callable[[str], None]):
        self.started = time.monotonic()
        self.deadline = self.started + max(0.0, max_wait_s)
        self.delay = 0.02
        self.notify: Callable[[str], None] | None = notify

    @property
    def waited(self) -> float:
        return time.monotonic() - self.started

    def wait(self, message: str) -> bool:
        """Sleep before the next try; False when the deadline has passed."""
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            return False
        if self.notify is not None:
            self.notify(message)
            self.notify = None
        time.sleep(min(remaining, self.delay * random.uniform(0.5, 1.0)))
        self.delay = min(self.delay * 1.6, 1.0)
        return True


class WarehouseResource(DuckDBResource):
    """The warehouse as a Dagster resource. `get_connection` takes the same lock and
    retries as `Warehouse.connect`, so assets using the plain DuckDBResource API are safe
    under the multiprocess executor too."""

    max_wait_s: float = Field(default=DEFAULT_MAX_WAIT_S, ge=0,
                              description="Seconds an open waits for another process holding the file.")

    def warehouse(self, on_wait: Callable[[str], None] | None = None) -> Warehouse:
        return Warehouse(self.database, max_wait_s=self.max_wait_s, on_wait=on_wait,
                         connection_config=self.connection_config)

    @contextmanager
    def get_connection(self, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        with self.warehouse().connect(read_only=read_only) as conn:
            yield conn


def partition_rows(ref: PartitionRef, episodes: Sequence[Episode], tasks: Sequence[Task] = (),
                   metrics: MetricsFile | None = None, *,
                   redactor: Redactor | None = None) -> dict[str, list[dict[str, Any]]]:
    """The rows one partition contributes to each table (pure; no file touched), every
    text redacted by `redactor` when one is given."""
    if metrics is None:
        metrics = build_metrics(episodes, k=ref.k)
    if redactor:
        episodes = [redactor.record(e) for e in episodes]
    key = {"run_id": ref.run_id, "model_key": ref.model_key}
    rows: dict[str, list[dict[str, Any]]] = {table: [] for table in TABLES}
    rows["runs"].append({
        **key, "agent_id": ref.agent_id or safe_key(Path(ref.agent_dir).name), "model_name": ref.model_name, "run_name": ref.run_name,
        "agent_dir": str(ref.agent_dir), "started_at": ref.started_at or None,
        "finished_at": ref.finished_at or None, "k": ref.k, "dagster_run_id": ref.dagster_run_id,
        "written_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    })
    for task in tasks:
        rows["tasks"].append({
            **key, "task_id": task.id, "category": _text(task.meta.get("category")),
            "expected_status": task.expected.status,
            "expected_outcome": task.expected.expected_outcome, "n_turns": len(task.turns),
        })
    for episode in episodes:
        _episode_rows(rows, key, episode)
    rows["model_metrics"].append(_model_metrics_row(key, metrics))
    for task in metrics.per_task:
        rows["task_metrics"].append({
            **key, "task_id": task.task_id, "attempts": task.attempts, "passed": task.passed,
            "pass_at_k": task.pass_at_k, "pass_hat_k": task.pass_hat_k,
        })
    if redactor:
        rows = {table: [redactor.data(row) for row in table_rows] for table, table_rows in rows.items()}
    return rows


def _episode_rows(rows: dict[str, list[dict[str, Any]]], key: dict[str, str], episode: Episode) -> None:
    ep_key = {**key, "task_id": episode.task_id, "attempt": episode.attempt_index}
    totals = episode.trace.trajectory.totals
    rows["episodes"].append({
        **ep_key, "final_status": episode.final_status,
        "passed": episode.verdict.passed if episode.verdict else None,
        "wall_ms": episode.trace.wall_ms, "tokens_in": totals.tokens_in,
        "tokens_out": totals.tokens_out, "tokens_cached": totals.tokens_cached,
        "eval_error": _cut(episode.eval_error, TEXT_CHARS),
        "final_output": _cut(episode.final_output, FINAL_OUTPUT_CHARS),
    })
    for position, check in enumerate(episode.verdict.checks if episode.verdict else []):
        rows["verdict_checks"].append({
            **ep_key, "position": position, "check_name": check.check, "passed": check.passed,
            "detail": _cut(check.detail, TEXT_CHARS),
        })
    scores = episode.qualitative_scores
    if scores is not None:
        for rubric, field in SCORE_FIELDS.items():
            rows["judge_scores"].append({
                **ep_key, "rubric": rubric, "score_field": field, "score": scores.score(rubric),
                "reasoning": _cut(scores.judge_reasoning.get(rubric), TEXT_CHARS),
                "error": _cut(scores.judge_errors.get(rubric), TEXT_CHARS),
            })
    rows["trajectory_totals"].append({
        **ep_key, "found": episode.trace.trajectory.found, "model_calls": totals.model_calls,
        "tokens_in": totals.tokens_in, "tokens_out": totals.tokens_out,
        "tokens_cached": totals.tokens_cached, "tool_calls": totals.tool_calls,
        "agent_calls": totals.agent_calls, "errors": totals.errors,
        "truncated": episode.trace.trajectory.truncated,
    })


def _model_metrics_row(key: dict[str, str], metrics: MetricsFile) -> dict[str, Any]:
    summary = metrics.summary
    latency = summary.latency_ms
    judge = {field: (summary.qualitative[field].avg if field in summary.qualitative else None)
             for field in _JUDGE_COLUMNS}
    return {
        **key, "tasks": len(metrics.per_task), "episodes": summary.total_runs,
        "passed": summary.passed, "failed": summary.failed, "pass_rate": summary.pass_rate,
        "pass_at_k": summary.pass_at_k, "pass_hat_k": summary.pass_hat_k,
        "error_episodes": summary.error_episodes, "p50_ms": latency.p50, "p90_ms": latency.p90,
        "p95_ms": latency.p95, "p99_ms": latency.p99, "avg_wall_ms": summary.time.avg_wall_ms,
        "min_wall_ms": summary.time.min_wall_ms, "max_wall_ms": summary.time.max_wall_ms,
        "total_wall_ms": summary.time.total_wall_ms,
        "prompt_tokens_total": summary.tokens.prompt_tokens_total,
        "completion_tokens_total": summary.tokens.completion_tokens_total,
        "total_tokens_total": summary.tokens.total_tokens_total,
        "cached_prompt_pct": summary.tokens.cached_prompt_pct,
        "avg_total_tokens": summary.tokens.avg_total_tokens, **judge,
    }


def _schema_version(conn: duckdb.DuckDBPyConnection) -> int:
    """The schema of the file: SCHEMA_VERSION for an empty one, 1 for the first release's."""
    tables = {row[0] for row in conn.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'").fetchall()}
    if "schema_version" in tables:
        return conn.execute("SELECT max(version) FROM schema_version").fetchone()[0] or 1
    return 1 if "runs" in tables else SCHEMA_VERSION


def _ensure_schema(conn: duckdb.DuckDBPyConnection) -> None:
    """Create what is missing, migrating a warehouse of an older schema in place first."""
    version = _schema_version(conn)
    if version > SCHEMA_VERSION:
        raise RuntimeError(f"the warehouse has schema version {version}, newer than this bat_pipeline "
                           f"knows ({SCHEMA_VERSION}): upgrade bat_pipeline to write to it")
    if version < SCHEMA_VERSION:
        _migrate(conn, version)
    for table, columns in TABLES.items():
        body = ", ".join(f"{name} {kind}" for name, kind in columns)
        conn.execute(f"CREATE TABLE IF NOT EXISTS {table} ({body})")
    conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER)")
    if conn.execute("SELECT count(*) FROM schema_version").fetchone()[0] == 0:
        conn.execute("INSERT INTO schema_version VALUES (?)", [SCHEMA_VERSION])
    for view, sql in _VIEWS.items():
        conn.execute(f"CREATE OR REPLACE VIEW {view} AS {sql}")


def _migrate(conn: duckdb.DuckDBPyConnection, version: int) -> None:
    """Bring a warehouse of schema `version` to SCHEMA_VERSION, in one transaction."""
    conn.execute("BEGIN TRANSACTION")
    try:
        if version < 2:
            # Runs written before agents had an identity belong to their agent folder's name.
            conn.execute("ALTER TABLE runs ADD COLUMN agent_id VARCHAR")
            conn.execute("UPDATE runs SET agent_id = regexp_replace("
                         "regexp_extract(rtrim(agent_dir, '/'), '[^/]*$'), '[^A-Za-z0-9_.-]', '_', 'g')")
        conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER)")
        conn.execute("DELETE FROM schema_version")
        conn.execute("INSERT INTO schema_version VALUES (?)", [SCHEMA_VERSION])
        conn.execute("COMMIT")
    except BaseException:
        with suppress(duckdb.Error):
            conn.execute("ROLLBACK")
        raise


def _insert(conn: duckdb.DuckDBPyConnection, table: str, rows: Sequence[Mapping[str, Any]]) -> None:
    """Insert column-wise: one list parameter per column, zipped by `unnest` (one
    statement, however many rows; DuckDB's executemany runs one statement per row)."""
    if not rows:
        return
    columns = TABLES[table]
    selects = ", ".join(f"unnest(?::{kind}[])" for _, kind in columns)
    names = ", ".join(name for name, _ in columns)
    values = [[row.get(name) for row in rows] for name, _ in columns]
    conn.execute(f"INSERT INTO {table} ({names}) SELECT * FROM (SELECT {selects})", values)


def _fetch(conn: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] | None = None) -> list[dict[str, Any]]:
    cursor = conn.execute(sql, list(params or []))
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def _cut(text: str | None, limit: int) -> str | None:
    return text if text is None or len(text) <= limit else text[:limit]


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
