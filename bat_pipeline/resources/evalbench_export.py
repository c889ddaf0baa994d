"""Exports of one run from the warehouse: EvalBench's CSV report (SPEC §12,
engine.evalbench_report) and every table's rows as Parquet (for BigQuery and the like).

Both read only the warehouse, so what they write is what it holds. `bat-pipeline run`
writes the CSV of an EvalBench run config with `reporting.csv`; `bat-pipeline export`
writes either for any run.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import duckdb

from bat_pipeline.engine.errors import InputError
from bat_pipeline.engine.evalbench_report import csv_tables, run_time_text
from bat_pipeline.resources.warehouse import TABLES, Warehouse
from bat_pipeline.storage import write_text_atomic

CSV_FILES = ("configs", "evals", "scores", "summary")


def run_ids(warehouse: Warehouse, agent_id: str | None = None) -> list[str]:
    """Every run id in the warehouse (of one agent when given), oldest first."""
    sql = "SELECT DISTINCT run_id FROM runs" + (" WHERE agent_id = ?" if agent_id else "") + " ORDER BY run_id"
    return [r["run_id"] for r in warehouse.query(sql, [agent_id] if agent_id else None)]


def find_run(warehouse: Warehouse, wanted: str | None, agent_id: str | None = None) -> str:
    """The run a RUN argument means: an id or a unique prefix of one, else the agent's
    latest run. InputError when there is none, or the prefix is not unique."""
    known = run_ids(warehouse, agent_id)
    if wanted is None:
        if not known:
            raise InputError(str(warehouse.path), f"no run of {agent_id or 'any agent'} in the warehouse yet")
        return known[-1]
    matches = [r for r in known if r == wanted] or [r for r in known if r.startswith(wanted)]
    if len(matches) != 1:
        what = "no run" if not matches else f"{len(matches)} runs ({', '.join(matches[:5])})"
        raise InputError(str(warehouse.path), f"{what} match '{wanted}'")
    return matches[0]


def _rows(warehouse: Warehouse, table: str, run_id: str) -> list[dict]:
    try:
        return warehouse.query(f"SELECT * FROM {table} WHERE run_id = ?", [run_id])
    except duckdb.CatalogException:
        return []  # a warehouse written before the table existed


def export_csv(
    warehouse: Warehouse,
    run_id: str,
    folder: Path,
    *,
    run: Mapping[str, Any] | None = None,
    model: Mapping[str, Any] | None = None,
    scenarios: Mapping[str, Mapping[str, Any]] | None = None,
) -> Path:
    """`<folder>/<run id>/{configs,evals,scores,summary}.csv` (each written atomically);
    returns the run's folder. `run`, `model`, `scenarios`: the run config, its model config
    and the evalset's scenarios as read, when the run writes its own report (an export of an
    older run has only the warehouse)."""
    scores = warehouse.query(
        "SELECT * FROM episode_scores WHERE run_id = ? ORDER BY model_key, task_id, attempt, position", [run_id]
    )
    runs = _rows(warehouse, "runs", run_id)
    tables = csv_tables(
        runs,
        _rows(warehouse, "episodes", run_id),
        _rows(warehouse, "conversations", run_id),
        scores,
        run_time=run_time_text(runs),
        run=run,
        model=model,
        scenarios=scenarios,
    )
    out = Path(folder) / run_id
    out.mkdir(parents=True, exist_ok=True)
    for name in CSV_FILES:
        columns, rows = tables[name]
        text = io.StringIO()
        writer = csv.DictWriter(text, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: ("" if v is None else v) for k, v in row.items()} for row in rows)
        write_text_atomic(out / f"{name}.csv", text.getvalue())
    return out


def export_parquet(warehouse: Warehouse, run_id: str, folder: Path) -> Path:
    """Every table's rows of the run as `<folder>/<run id>/<table>.parquet` (the layout
    `bq load --source_format=PARQUET` takes); returns the run's folder."""
    out = Path(folder) / run_id
    out.mkdir(parents=True, exist_ok=True)
    with warehouse.connect(read_only=True) as conn:
        present = {r[0] for r in conn.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        for table in (t for t in TABLES if t in present):
            target = str(out / f"{table}.parquet").replace("'", "''")
            run = run_id.replace("'", "''")
            conn.execute(f"COPY (SELECT * FROM {table} WHERE run_id = '{run}') TO '{target}' (FORMAT parquet)")
    return out


def export_run(
    warehouse: Warehouse,
    run: str | None,
    *,
    agent_id: str | None,
    csv_dir: Path | None,
    parquet_dir: Path | None,
    out=print,
) -> int:
    """`bat-pipeline export`: the run RUN names (default: the agent's latest) as CSV and/or
    Parquet; prints where each went. InputError (exit 2) without a run or a format."""
    if csv_dir is None and parquet_dir is None:
        raise InputError("export", "say what to write: --csv DIR and/or --parquet DIR")
    if not warehouse.path.exists():
        raise InputError(str(warehouse.path), "no warehouse yet: run an evaluation first")
    run_id = find_run(warehouse, run, agent_id)
    if csv_dir is not None:
        out(f"csv: {export_csv(warehouse, run_id, csv_dir)}")
    if parquet_dir is not None:
        out(f"parquet: {export_parquet(warehouse, run_id, parquet_dir)}")
    return 0
