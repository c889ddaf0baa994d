"""SQL answers (EvalBench's NL2SQL scorers, SPEC §13): a query run against a scenario's
database file, opened read-only, and two result sets compared as EvalBench compares them.

Reading a DuckDB or SQLite file is the only I/O here, as reading span files is elsewhere in
the engine. The generated SQL is an agent's answer, untrusted: it runs where it can read
the named database and nothing else. DuckDB is opened `read_only=True` with
`enable_external_access = false` (no COPY ... TO, read_text / read_csv, ATTACH, EXPORT,
INSTALL, secrets), extensions neither installed nor loaded, then `lock_configuration =
true` (no SET, RESET or PRAGMA that changes a setting). SQLite is opened `mode=ro` with an
authorizer that allows reading and functions only (no ATTACH, PRAGMA, write, DDL,
load_extension).
"""

from __future__ import annotations

import datetime
import decimal
import re
import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SQLITE_HEADER = b"SQLite format 3\x00"
DUCKDB_SANDBOX: dict[str, str | bool] = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "allow_unsigned_extensions": False,
    "lock_configuration": True,
}
"""The settings the DuckDB connection of a query is opened with (the lock comes last and
holds them for the connection's life)."""
_SQLITE_ALLOWED = frozenset(
    {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}
)
_SQLITE_REFUSED_FUNCTIONS = frozenset({"load_extension"})
FLOAT_DIGITS = 9
"""Floats compare rounded to this many decimals (3.0000000001 and 3.0 are one value)."""
_FENCE = re.compile(r"```(?:sql)?\s*\n(.*?)```", re.DOTALL | re.IGNORECASE)


@dataclass
class QueryResult:
    """The rows a query gave, or why it failed."""

    rows: list[tuple[Any, ...]] = field(default_factory=list)
    error: str | None = None


def sql_of(answer: str) -> str:
    """The SQL in an answer: the last ```sql fenced block when there is one, else the text."""
    blocks = _FENCE.findall(answer)
    return (blocks[-1] if blocks else answer).strip()


def normalise_sql(sql: str) -> str:
    """Whitespace collapsed, trailing semicolons dropped: what `exact_match` compares."""
    return " ".join(sql.strip().rstrip(";").split())


def _sqlite_authorizer(action: int, arg1: str | None, _arg2: str | None, _db: str | None, _trigger: str | None) -> int:
    """Reading and calling functions: allowed; everything else (ATTACH, PRAGMA, writes, DDL,
    transactions, load_extension): refused."""
    if action not in _SQLITE_ALLOWED:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_FUNCTION and (arg1 or "").lower() in _SQLITE_REFUSED_FUNCTIONS:
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def run_query(database: str | Path, sql: str) -> QueryResult:
    """`sql` against the file, opened read-only and sandboxed (the module's docstring): SQLite
    when the file says so, else DuckDB. An error (no such file, a bad query, a write or file
    access refused) is returned, never raised."""
    path = Path(database)
    if not path.is_file():
        return QueryResult(error=f"no such database file: {path}")
    try:
        with path.open("rb") as head:
            is_sqlite = head.read(len(SQLITE_HEADER)) == SQLITE_HEADER
        if is_sqlite:
            sqlite = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
            try:
                sqlite.set_authorizer(_sqlite_authorizer)
                return QueryResult(rows=[tuple(r) for r in sqlite.execute(sql).fetchall()])
            finally:
                sqlite.close()
        import duckdb

        with duckdb.connect(str(path), read_only=True, config=dict(DUCKDB_SANDBOX)) as duck:
            return QueryResult(rows=[tuple(r) for r in duck.execute(sql).fetchall()])
    except Exception as exc:  # noqa: BLE001 - every database error is the query's result
        return QueryResult(error=f"{type(exc).__name__}: {exc}")


def _value(value: Any) -> Any:
    """A cell as it compares: numbers by value (1 == 1.0 == Decimal('1')), floats rounded,
    dates and times as ISO text, bytes as hex; NULL stays None (equal to NULL)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float, decimal.Decimal)):
        number = round(float(value), FLOAT_DIGITS)
        return int(number) if number.is_integer() else number
    if isinstance(value, (datetime.date, datetime.time, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    return str(value)


def _loose(value: Any) -> str:
    return "NULL" if value is None else str(_value(value))


@dataclass
class Comparison:
    """Two result sets compared as multisets of rows (order ignored, duplicates counted)."""

    equal: bool
    reason: str
    details: dict[str, Any]


def compare_results(golden: list[tuple[Any, ...]], generated: list[tuple[Any, ...]]) -> Comparison:
    """Equal when the rows are the same multiset, cell by cell by value (`_value`): row
    order ignored, duplicates counted, NULL equal to NULL, 1 equal to 1.0 but not to '1'.
    When rows differ only by the types of their values (`'1'` for `1`) the reason says so."""
    want, got = Counter(tuple(map(_value, r)) for r in golden), Counter(tuple(map(_value, r)) for r in generated)
    details: dict[str, Any] = {"golden_rows": len(golden), "generated_rows": len(generated)}
    if want == got:
        return Comparison(True, f"the same {len(golden)} row(s), order aside", details)
    missing, extra = want - got, got - want
    details.update(missing=[list(r) for r in list(missing)[:5]], extra=[list(r) for r in list(extra)[:5]])
    if Counter(tuple(map(_loose, r)) for r in golden) == Counter(tuple(map(_loose, r)) for r in generated):
        return Comparison(
            False, "the same values with different types (e.g. text for a number)", {**details, "type_difference": True}
        )
    widths = {len(r) for r in golden} ^ {len(r) for r in generated}
    if golden and generated and widths:
        return Comparison(False, "a different number of columns", details)
    return Comparison(False, f"{sum(missing.values())} golden row(s) missing, {sum(extra.values())} extra", details)
