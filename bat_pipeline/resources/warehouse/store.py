"""The warehouse file: short-lived connections under the file lock, a partition's rows
written, the read helpers; and the same as a Dagster resource."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import duckdb
from dagster_duckdb import DuckDBResource
from pydantic import Field

from bat_pipeline.engine.contracts.episode import Episode
from bat_pipeline.engine.contracts.metrics import MetricsFile
from bat_pipeline.engine.contracts.tasks import Task
from bat_pipeline.engine.redaction import Redactor
from bat_pipeline.resources.warehouse import queries
from bat_pipeline.resources.warehouse.load import partition_rows, replace_partition
from bat_pipeline.resources.warehouse.locks import DEFAULT_MAX_WAIT_S, Patience, file_lock, lock_path, open_file
from bat_pipeline.resources.warehouse.schema import SCHEMA_VERSION, ensure_schema, schema_version
from bat_pipeline.storage import PartitionRef

if TYPE_CHECKING:
    from bat_pipeline.engine.charts import ChartData

log = logging.getLogger(__name__)
T = TypeVar("T")


class Warehouse:
    """The DuckDB warehouse at `path`, usable without Dagster.

    `max_wait_s` bounds how long an open waits for other processes; `on_wait` is called
    with a message the first time an open has to wait (for logs, or tests).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        max_wait_s: float = DEFAULT_MAX_WAIT_S,
        on_wait: Callable[[str], None] | None = None,
        connection_config: Mapping[str, Any] | None = None,
    ):
        self.path = Path(path)
        self.max_wait_s = max_wait_s
        self.on_wait = on_wait
        self.connection_config = dict(connection_config or {})
        self._current = False
        """True once this object has seen the file at SCHEMA_VERSION."""

    @property
    def lock_path(self) -> Path:
        return lock_path(self.path)

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
            # Readers query the current schema: a file of an older release is migrated
            # first (briefly opened for writing); one already current is only read.
            with self._open(read_only=True) as conn:
                self._current = schema_version(conn) == SCHEMA_VERSION
                if self._current:
                    yield conn
                    return
            with self.connect():
                pass
        with self._open(read_only) as conn:
            if not read_only:
                ensure_schema(conn)
                self._current = True
            yield conn

    @contextmanager
    def _open(self, read_only: bool) -> Iterator[duckdb.DuckDBPyConnection]:
        """The file opened under its lock file (exclusive for writing, shared for reading),
        retried while another process holds either; closed on exit."""
        patience = Patience(self.max_wait_s, self._waiting)
        with file_lock(self.path, exclusive=not read_only, patience=patience):
            conn = open_file(self.path, read_only, patience, self.connection_config)
            try:
                yield conn
            finally:
                conn.close()

    def write_partition(
        self,
        ref: PartitionRef,
        episodes: Sequence[Episode],
        tasks: Sequence[Task] = (),
        metrics: MetricsFile | None = None,
        redactor: Redactor | None = None,
    ) -> dict[str, int]:
        """Replace the rows of (ref.run_id, ref.model_key) in every table, in one
        transaction; other runs and models are untouched. `metrics` defaults to
        `build_metrics(episodes, k=ref.k)`. Returns rows written per table."""
        rows = partition_rows(ref, episodes, tasks, metrics, redactor=redactor)
        with self.connect() as conn:
            replace_partition(conn, ref.run_id, ref.model_key, rows)
        return {table: len(table_rows) for table, table_rows in rows.items()}

    def write_run_phase(self, run_id: str, phase: str, seconds: float) -> None:
        """A phase of the whole run (the charts: one drawing for every model), stored in
        `phase_timings` under model_key '' (replacing an earlier value)."""
        with self.connect() as conn:
            conn.execute("DELETE FROM phase_timings WHERE run_id = ? AND model_key = '' AND phase = ?", [run_id, phase])
            conn.execute(
                "INSERT INTO phase_timings (run_id, model_key, phase, seconds, agent_id) "
                "SELECT ?, '', ?, ?, (SELECT any_value(agent_id) FROM runs WHERE run_id = ?)",
                [run_id, phase, seconds, run_id],
            )

    def query(self, sql: str, params: Sequence[Any] | None = None) -> list[dict[str, Any]]:
        """Rows of a read-only query as dicts; [] when the warehouse does not exist yet."""
        return self._read(lambda conn: queries.fetch(conn, sql, params), [])

    def model_summary(self, run_id: str) -> list[dict[str, Any]]:
        """`queries.model_summary`; [] before any write."""
        return self._read(lambda conn: queries.model_summary(conn, run_id), [])

    def latest(self, agent_id: str | None = None) -> list[dict[str, Any]]:
        """Each model's newest run (of one agent, or of every agent when `agent_id` is None)."""
        return self._read(lambda conn: queries.latest(conn, agent_id), [])

    def trend(
        self, model_key: str | None = None, last_n: int = 10, agent_id: str | None = None
    ) -> list[dict[str, Any]]:
        """Each model's last `last_n` runs (`queries.trend`)."""
        return self._read(lambda conn: queries.trend(conn, model_key, last_n, agent_id), [])

    def previous_metrics(
        self, model_key: str, before_run_id: str, agent_id: str | None = None
    ) -> dict[str, Any] | None:
        """The model's metrics in its newest run before `before_run_id` (of that agent,
        when given); None if none."""
        return self._read(lambda conn: queries.previous_metrics(conn, model_key, before_run_id, agent_id), None)

    def partition_outcomes(self, run_id: str, model_key: str) -> list[dict[str, Any]]:
        """task_id, attempt and passed of every episode of one partition (`queries.partition_outcomes`)."""
        return self._read(lambda conn: queries.partition_outcomes(conn, run_id, model_key), [])

    def history_runs(self) -> list[dict[str, Any]]:
        """`queries.history_runs`; [] before any write."""
        return self._read(queries.history_runs, [])

    def score_means(self, run_id: str | None = None, agent_id: str | None = None) -> list[dict[str, Any]]:
        """Mean value per model, scorer and criterion (`queries.score_means`)."""
        return self._read(lambda conn: queries.score_means(conn, run_id, agent_id), [])

    def chart_data(self, run_id: str | None = None, last_n: int = 10, agent_id: str | None = None) -> ChartData:
        """What `charts.render_all` draws (`queries.chart_data`); empty before any write."""
        if not self.path.exists():
            from bat_pipeline.engine.charts import ChartData

            return ChartData()
        with self.connect(read_only=True) as conn:
            return queries.chart_data(conn, run_id, last_n, agent_id)

    def _read(self, read: Callable[[duckdb.DuckDBPyConnection], T], empty: T) -> T:
        if not self.path.exists():
            return empty
        with self.connect(read_only=True) as conn:
            return read(conn)

    def _waiting(self, message: str) -> None:
        log.info(message)
        if self.on_wait is not None:
            self.on_wait(message)


class WarehouseResource(DuckDBResource):
    """The warehouse as a Dagster resource. `get_connection` takes the same lock and
    retries as `Warehouse.connect`, so assets using the plain DuckDBResource API are safe
    under the multiprocess executor too."""

    max_wait_s: float = Field(
        default=DEFAULT_MAX_WAIT_S, ge=0, description="Seconds an open waits for another process holding the file."
    )

    def warehouse(self, on_wait: Callable[[str], None] | None = None) -> Warehouse:
        return Warehouse(
            self.database, max_wait_s=self.max_wait_s, on_wait=on_wait, connection_config=self.connection_config
        )

    @contextmanager
    def get_connection(self, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        with self.warehouse().connect(read_only=read_only) as conn:
            yield conn
