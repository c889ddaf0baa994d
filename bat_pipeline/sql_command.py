"""`bat-pipeline sql QUERY`: a query over the warehouse, read-only, printed as a table, CSV
or JSON, with nothing installed beyond bat_pipeline (no DuckDB command line needed).

The connection is the warehouse's read-only one (the file cannot be changed through it);
the tables and views are those of docs/formats.md §8. A query DuckDB refuses is refused
input (exit 2) with DuckDB's own message; so is a warehouse not written yet."""

from __future__ import annotations

import csv
import datetime
import decimal
import json
import sys
from collections.abc import Sequence
from typing import Any, TextIO

import duckdb

from bat_pipeline.engine.errors import InputError
from bat_pipeline.resources.warehouse import Warehouse

FORMATS = ("table", "csv", "json")
MAX_CELL = 60
"""A table's cells are cut to this many characters (CSV and JSON keep them whole)."""


def sql_command(warehouse: Warehouse, query: str, fmt: str = "table", out: TextIO | None = None) -> int:
    """Run `query`, print its rows in `fmt`; 0, or InputError (exit 2) as the module says."""
    out = out or sys.stdout
    if not warehouse.path.exists():
        raise InputError(str(warehouse.path), "no warehouse yet: run an evaluation first (bat-pipeline run)")
    with warehouse.connect(read_only=True) as conn:
        try:
            cursor = conn.execute(query)
        except duckdb.Error as exc:
            raise InputError("sql", f"{type(exc).__name__}: {exc}", field="QUERY") from None
        if cursor.description is None:
            return 0
        columns = [d[0] for d in cursor.description]
        rows = cursor.fetchall()
    if fmt == "json":
        records = [dict(zip(columns, (_plain(v) for v in row), strict=True)) for row in rows]
        out.write(json.dumps(records, indent=2, ensure_ascii=False) + "\n")
    elif fmt == "csv":
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([[_text(v) for v in row] for row in rows])
    else:
        _table(columns, rows, out)
    return 0


def _table(columns: Sequence[str], rows: Sequence[Sequence[Any]], out: TextIO) -> None:
    """rich's table: aligned, numbers to the right, the row count below."""
    from rich.console import Console
    from rich.table import Table

    table = Table(show_edge=False, pad_edge=False, header_style="bold")
    numeric = [
        all(isinstance(r[i], (int, float, decimal.Decimal)) or r[i] is None for r in rows) for i in range(len(columns))
    ]
    for name, right in zip(columns, numeric, strict=True):
        table.add_column(name, justify="right" if right and rows else "left", overflow="fold")
    for row in rows:
        table.add_row(*(_cell(v) for v in row))
    console = Console(file=out, width=max(80, min(240, sum(len(c) + 3 for c in columns) + 40)), soft_wrap=False)
    console.print(table)
    console.print(f"({len(rows)} row{'s' * (len(rows) != 1)})", style="dim")


def _cell(value: Any) -> str:
    text = "NULL" if value is None else _text(value)
    text = text.replace("\n", " ")
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def _plain(value: Any) -> Any:
    """A cell as JSON: times as ISO 8601, decimals as numbers, the rest as they are."""
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, (dict, list, str, int, float, bool)) or value is None:
        return value
    return str(value)
