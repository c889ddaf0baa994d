"""The Dagster instance of a home bat_pipeline makes: Dagster's own, on its usual SQLite files,
with each process keeping one SQLAlchemy engine per database file.

Dagster's SQLite storages make a new engine for every connection they open, and a run
opens several per event it stores (the run's event file, the cross-run index, the run
storage). Each new engine is set up again and compiles every statement afresh (its
statement cache dies with it): about 2 ms of CPU per event, a third of what storing an
event costs, and a partition's run stores a hundred or more. Here each storage keeps its
engines: still no pooled connection (NullPool, as Dagster's: every use opens and closes its
own SQLite connection, so processes and forks share nothing), only the engine and its
compiled statements outlive a use.

The files, their tables and what is written to them are Dagster's, unchanged: a home made
with these settings is read by the default instance as well, and the other way round. The
project's dagster.yaml names the class (`instance_class`); Dagster builds the storage from
`config_defaults`, the only place it hands a custom instance the home's folder.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import yaml
from dagster import DagsterInstance
from dagster._core.instance.ref import InstanceRef
from dagster._core.storage.event_log.sqlite.sqlite_event_log import SQLITE_BUSY_TIMEOUT_SECONDS, SqliteEventLogStorage
from dagster._core.storage.runs.sqlite.sqlite_run_storage import SqliteRunStorage
from dagster._core.storage.schedules.sqlite.sqlite_schedule_storage import SqliteScheduleStorage
from dagster._core.storage.sqlite_storage import (
    DagsterSqliteStorage,
    _event_logs_directory,
    _runs_directory,
    _schedule_directory,
)
from dagster._serdes import ConfigurableClassData
from sqlalchemy import create_engine
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import NullPool

KEPT_EVENT_ENGINES = 64
"""Event files whose engine a process keeps (the most recently used): a run writes one,
the UI reads any number over its life."""


class BatPipelineInstance(DagsterInstance):
    """Dagster's instance, its storage `KeptEnginesSqliteStorage` unless dagster.yaml names one."""

    @classmethod
    def config_schema(cls) -> dict[str, Any]:
        return {}

    @staticmethod
    def config_defaults(base_dir: str) -> Mapping[str, ConfigurableClassData | None]:
        return {
            **InstanceRef.config_defaults(base_dir),
            "storage": ConfigurableClassData(
                __name__, KeptEnginesSqliteStorage.__name__, yaml.dump({"base_dir": base_dir}, default_flow_style=False)
            ),
        }


class KeptEnginesSqliteStorage(DagsterSqliteStorage):
    """DagsterSqliteStorage whose run and event storages keep their engines."""

    def __init__(self, base_dir: str, inst_data: ConfigurableClassData | None = None):
        # DagsterSqliteStorage's own constructor, with this module's run and event storages.
        self.base_dir = base_dir
        self._run_storage = KeptEngineRunStorage.from_local(_runs_directory(base_dir))
        self._event_log_storage = KeptEnginesEventLogStorage(_event_logs_directory(base_dir))
        self._schedule_storage = SqliteScheduleStorage.from_local(_schedule_directory(base_dir))
        self._inst_data = inst_data
        super(DagsterSqliteStorage, self).__init__()  # what DagsterSqliteStorage's calls next

    @classmethod
    def from_config_value(cls, inst_data: ConfigurableClassData, config_value: Any) -> KeptEnginesSqliteStorage:
        return cls.from_local(inst_data=inst_data, **config_value)


class KeptEngineRunStorage(SqliteRunStorage):
    """SqliteRunStorage with one engine per process."""

    _engine: Engine | None = None

    @contextmanager
    def connect(self) -> Iterator[Connection]:
        if self._engine is None:
            self._engine = create_engine(self._conn_string, poolclass=NullPool)
        with self._engine.connect() as conn, conn.begin():
            yield conn


class KeptEnginesEventLogStorage(SqliteEventLogStorage):
    """SqliteEventLogStorage with one engine per event file (run shard, index) and process."""

    def __init__(self, base_dir: str, inst_data: ConfigurableClassData | None = None):
        self._engines: OrderedDict[str, Engine] = OrderedDict()
        super().__init__(base_dir, inst_data)

    @contextmanager
    def _connect(self, shard: str) -> Iterator[Connection]:
        with self._db_lock:
            engine = self._engines.pop(shard, None)
            if engine is None:
                engine = create_engine(
                    self.conn_string_for_shard(shard),
                    poolclass=NullPool,
                    connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS},
                )
            self._engines[shard] = engine
            while len(self._engines) > KEPT_EVENT_ENGINES:
                self._engines.popitem(last=False)
            if shard not in self._initialized_dbs:
                self._initdb(engine)
                self._initialized_dbs.add(shard)
            with engine.connect() as conn, conn.begin():
                yield conn
