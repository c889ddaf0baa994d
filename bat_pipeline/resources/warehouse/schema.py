"""The warehouse's tables, views and schema version, and the in-place migrations from
older versions.

Versions: 1, the first release (no `schema_version` table); 2, `runs.agent_id`; 3, every
score row in `episode_scores`, with `verdict_checks` and `judge_scores` as views over it
(and `phase_timings`, a table a file of version 3 gains when opened); 4, the runs'
provenance and the intervals of `model_metrics` (columns added, null for older runs); 5,
typed for people who query it: the runs' times TIMESTAMPTZ, score details JSON, and
`agent_id` on every table (filled from `runs` for older rows).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from functools import cache
from typing import Any

import duckdb

from bat_pipeline.engine.contracts.names import UNSAFE_NAME_CHARS
from bat_pipeline.engine.contracts.scores import QUALITATIVE_FIELDS, RUBRICS
from bat_pipeline.engine.derived_scores import check_prefixes
from bat_pipeline.engine.scorers.judge_rubrics import SCALE as RUBRIC_SCALE
from bat_pipeline.engine.scorers.judging import FAILED
from bat_pipeline.engine.scorers.support import PASS_FAIL

SCHEMA_VERSION = 5
FINAL_OUTPUT_CHARS = 2000
"""The episode's final output is cut to this length in the warehouse."""
TEXT_CHARS = 4000
"""Score reasons, judge errors and eval errors are cut to this length."""


def _columns(spec: str) -> tuple[tuple[str, str], ...]:
    """`"name TYPE, name TYPE, ..."` → ((name, TYPE), ...)."""
    return tuple((name, kind) for name, kind in (column.split() for column in spec.split(",")))


_PARTITION = "run_id VARCHAR, model_key VARCHAR"

TABLES: dict[str, tuple[tuple[str, str], ...]] = {
    "runs": _columns(
        f"{_PARTITION}, agent_id VARCHAR, model_name VARCHAR, run_name VARCHAR, agent_dir VARCHAR, "
        "started_at TIMESTAMPTZ, finished_at TIMESTAMPTZ, k INTEGER, dagster_run_id VARCHAR, written_at TIMESTAMPTZ, "
        "agent_commit VARCHAR, agent_dirty BOOLEAN, dataset_hash VARCHAR, config_hash VARCHAR, "
        "judge_model VARCHAR, pipeline_version VARCHAR"
    ),
    "tasks": _columns(
        f"{_PARTITION}, task_id VARCHAR, category VARCHAR, expected_status VARCHAR, "
        "expected_outcome VARCHAR, n_turns INTEGER, agent_id VARCHAR"
    ),
    "episodes": _columns(
        f"{_PARTITION}, task_id VARCHAR, attempt INTEGER, final_status VARCHAR, passed BOOLEAN, "
        "wall_ms DOUBLE, tokens_in BIGINT, tokens_out BIGINT, tokens_cached BIGINT, "
        "eval_error VARCHAR, final_output VARCHAR, agent_id VARCHAR"
    ),
    "episode_scores": _columns(
        f"{_PARTITION}, agent_id VARCHAR, task_id VARCHAR, attempt INTEGER, position INTEGER, "
        "scorer VARCHAR, criterion VARCHAR, value DOUBLE, raw DOUBLE, scale VARCHAR, "
        "passed BOOLEAN, gating BOOLEAN, sample INTEGER, judge VARCHAR, reason VARCHAR, "
        "details JSON"
    ),
    "trajectory_totals": _columns(
        f"{_PARTITION}, task_id VARCHAR, attempt INTEGER, found BOOLEAN, model_calls BIGINT, "
        "tokens_in BIGINT, tokens_out BIGINT, tokens_cached BIGINT, tool_calls BIGINT, "
        "agent_calls BIGINT, errors BIGINT, truncated BOOLEAN, agent_id VARCHAR"
    ),
    "model_metrics": _columns(
        f"{_PARTITION}, tasks INTEGER, episodes INTEGER, passed INTEGER, failed INTEGER, "
        "pass_rate DOUBLE, pass_at_k DOUBLE, pass_hat_k DOUBLE, error_episodes INTEGER, "
        "p50_ms DOUBLE, p90_ms DOUBLE, p95_ms DOUBLE, p99_ms DOUBLE, avg_wall_ms DOUBLE, "
        "min_wall_ms DOUBLE, max_wall_ms DOUBLE, total_wall_ms DOUBLE, "
        "prompt_tokens_total BIGINT, completion_tokens_total BIGINT, total_tokens_total BIGINT, "
        "cached_prompt_pct DOUBLE, avg_total_tokens DOUBLE, "
        + ", ".join(f"{column} DOUBLE" for column in QUALITATIVE_FIELDS)
        + ", confidence DOUBLE, pass_rate_ci_low DOUBLE, pass_rate_ci_high DOUBLE, "
        "pass_at_k_ci_low DOUBLE, pass_at_k_ci_high DOUBLE, pass_hat_k_ci_low DOUBLE, pass_hat_k_ci_high DOUBLE, "
        "flaky_tasks INTEGER, agent_id VARCHAR"
    ),
    "task_metrics": _columns(
        f"{_PARTITION}, task_id VARCHAR, attempts INTEGER, passed INTEGER, pass_at_k DOUBLE, pass_hat_k DOUBLE, "
        "agent_id VARCHAR"
    ),
    "phase_timings": _columns(f"{_PARTITION}, phase VARCHAR, seconds DOUBLE, agent_id VARCHAR"),
    "conversations": _columns(
        f"{_PARTITION}, task_id VARCHAR, attempt INTEGER, turns INTEGER, "
        "generated_turns INTEGER, max_turns INTEGER, ended VARCHAR, user_model VARCHAR, "
        "user_calls INTEGER, user_tokens_in BIGINT, user_tokens_out BIGINT, transcript VARCHAR, agent_id VARCHAR"
    ),
}
"""Table → (column, DuckDB type). Every table starts with run_id, model_key and holds the
agent's `agent_id` (so that no question needs a join with `runs` to name the agent).

`episode_scores` holds one row per ScoreRow of every episode: `position` is the row's
index among its episode's rows, `details` the row's details as JSON text (null when
empty). `phase_timings` holds seconds per phase of each partition (engine.contracts.timings),
and the run's `charts` under model_key ''. `conversations` holds a scenario's conversation
(aux.conversation: its turns, why it ended, the simulated user's model, calls and tokens,
the turns as JSON in `transcript`); a file of version 3 gains it when opened."""

_RUBRICS = ", ".join(f"'{rubric}'" for rubric in RUBRICS)

VIEWS = {
    "verdict_checks": """
        SELECT run_id, model_key, task_id, attempt,
               CAST(row_number() OVER (PARTITION BY run_id, model_key, task_id, attempt ORDER BY position) - 1
                    AS INTEGER) AS position,
               criterion AS check_name, passed, reason AS detail
        FROM episode_scores WHERE gating""",
    "judge_scores": f"""
        SELECT run_id, model_key, task_id, attempt, scorer AS rubric, criterion AS score_field,
               value AS score, nullif(reason, '') AS reasoning,
               CASE WHEN value IS NULL THEN left(coalesce(
                   details ->> '$.error',
                   CASE WHEN starts_with(reason, '{FAILED}') THEN substr(reason, {len(FAILED) + 1}) END), {TEXT_CHARS})
               END AS error
        FROM episode_scores WHERE scorer IN ({_RUBRICS})""",
    "latest_model_metrics": """
        SELECT r.agent_id, m.run_id, m.model_key, r.model_name, r.run_name, r.started_at, r.finished_at,
               r.k, m.* EXCLUDE (run_id, model_key, agent_id)
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
"""View → its query. `verdict_checks` and `judge_scores` keep the columns and meaning of
the tables they were up to version 2: the gating rows, numbered in order, and the rows of
bat-cli's four rubrics (`error` is the judge's failure: `details.error`, else what follows
"judge failed: " in the reason). Each agent (runs.agent_id) has its own latest run and
trend per model: agents sharing a storage root never mix."""


def schema_version(conn: duckdb.DuckDBPyConnection) -> int:
    """The schema of the file: SCHEMA_VERSION for an empty one, 1 for the first release's."""
    tables = _base_tables(conn)
    if "schema_version" in tables:
        return int(_one(conn, "SELECT max(version) FROM schema_version") or 1)
    return 1 if "runs" in tables else SCHEMA_VERSION


def ensure_schema(conn: duckdb.DuckDBPyConnection) -> None:
    """Create what is missing, migrating a warehouse of an older schema in place first.
    A file of a newer schema is refused (RuntimeError).

    A file this release already brought up to date is left alone (no catalog write, which
    would cost every writer a checkpoint): `schema_version`'s comment records the digest of
    the statements that made it and of the columns of every table and view they left, and
    both still match. A table or view gone or changed in shape (by hand, or by a release
    that keeps no digest) makes the statements run again; so does another release's."""
    version = schema_version(conn)
    if version > SCHEMA_VERSION:
        raise RuntimeError(
            f"the warehouse has schema version {version}, newer than this bat_pipeline "
            f"knows ({SCHEMA_VERSION}): upgrade bat_pipeline to write to it"
        )
    if version == SCHEMA_VERSION and _schema_comment(conn) == _made_by_us(conn):
        return
    if version < SCHEMA_VERSION:
        _migrate(conn, version)
    _create_tables(conn)
    conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER)")
    if _one(conn, "SELECT count(*) FROM schema_version") == 0:
        conn.execute("INSERT INTO schema_version VALUES (?)", [SCHEMA_VERSION])
    for view, sql in VIEWS.items():
        conn.execute(f"CREATE OR REPLACE VIEW {view} AS {sql}")
    conn.execute(f"COMMENT ON TABLE schema_version IS '{_made_by_us(conn)}'")


@cache
def _statements_digest() -> str:
    """What this release's tables and views are made of (the same for the process's life)."""
    text = repr((SCHEMA_VERSION, TABLES, VIEWS))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _made_by_us(conn: duckdb.DuckDBPyConnection) -> str:
    """The comment `schema_version` carries once ensure_schema has made the catalog as it is
    now: this release's statements' digest, and the digest of every table's and view's
    columns (name, type) as DuckDB lists them."""
    rows = conn.execute(
        "SELECT table_name, column_name, data_type FROM duckdb_columns() "
        "WHERE schema_name = 'main' AND NOT internal AND table_name <> 'schema_version' "
        "ORDER BY table_name, column_index"
    ).fetchall()
    catalog = hashlib.sha256(repr(rows).encode()).hexdigest()[:16]
    return f"{_statements_digest()}:{catalog}"


def _schema_comment(conn: duckdb.DuckDBPyConnection) -> str | None:
    comment = _one(
        conn,
        "SELECT comment FROM duckdb_tables() WHERE schema_name = 'main' AND table_name = 'schema_version'",
    )
    return None if comment is None else str(comment)


def _create_tables(conn: duckdb.DuckDBPyConnection) -> None:
    for table, columns in TABLES.items():
        body = ", ".join(f"{name} {kind}" for name, kind in columns)
        conn.execute(f"CREATE TABLE IF NOT EXISTS {table} ({body})")


def _one(conn: duckdb.DuckDBPyConnection, sql: str) -> Any:
    row = conn.execute(sql).fetchone()
    return None if row is None else row[0]


def _base_tables(conn: duckdb.DuckDBPyConnection) -> set[str]:
    return {
        row[0]
        for row in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' AND table_type = 'BASE TABLE'"
        ).fetchall()
    }


def _migrate(conn: duckdb.DuckDBPyConnection, version: int) -> None:
    """Bring a warehouse of schema `version` to SCHEMA_VERSION, in one transaction."""
    with transaction(conn):
        if version < 2:
            # Runs written before agents had an identity belong to their agent folder's name.
            conn.execute("ALTER TABLE runs ADD COLUMN agent_id VARCHAR")
            conn.execute(
                "UPDATE runs SET agent_id = regexp_replace("
                f"regexp_extract(rtrim(agent_dir, '/'), '[^/]*$'), '{UNSAFE_NAME_CHARS.pattern}', '_', 'g')"
            )
        if version < 3:
            _scores_into_one_table(conn)
        if version < 4:
            _add_new_columns(conn)
        if version < 5:
            _typed_columns(conn)
        conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER)")
        conn.execute("DELETE FROM schema_version")
        conn.execute("INSERT INTO schema_version VALUES (?)", [SCHEMA_VERSION])


@contextmanager
def transaction(conn: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """Everything done inside is committed together, or rolled back when it raises."""
    conn.execute("BEGIN TRANSACTION")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        with suppress(duckdb.Error):  # no transaction left when COMMIT itself failed
            conn.execute("ROLLBACK")
        raise


def _add_new_columns(conn: duckdb.DuckDBPyConnection) -> None:
    """Version 4 (and 5): the columns of TABLES a table of the file lacks are added (null
    in the rows already there)."""
    existing = _base_tables(conn)
    for table, columns in TABLES.items():
        if table not in existing:
            continue
        have = {
            row[0]
            for row in conn.execute(
                "SELECT column_name FROM duckdb_columns() WHERE schema_name = 'main' AND table_name = ?", [table]
            ).fetchall()
        }
        for name, kind in columns:
            if name not in have:
                conn.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")


TIMES = ("started_at", "finished_at", "written_at")
"""The runs' times, ISO 8601 text up to version 4."""


def _typed_columns(conn: duckdb.DuckDBPyConnection) -> None:
    """Version 5: the runs' times become TIMESTAMPTZ and score details JSON (text that does
    not parse as either becomes null), every table gains `agent_id`, filled from `runs`.
    The views, which read these columns, are dropped first; ensure_schema makes them again."""
    for view in VIEWS:
        conn.execute(f"DROP VIEW IF EXISTS {view}")
    _add_new_columns(conn)
    for column in TIMES:
        conn.execute(
            f"ALTER TABLE runs ALTER COLUMN {column} SET DATA TYPE TIMESTAMPTZ USING try_cast({column} AS TIMESTAMPTZ)"
        )
    conn.execute(
        "ALTER TABLE episode_scores ALTER COLUMN details SET DATA TYPE JSON "
        "USING CASE WHEN json_valid(details) THEN details END"
    )
    for table in _base_tables(conn) & set(TABLES) - {"runs", "episode_scores"}:
        conn.execute(
            f"UPDATE {table} t SET agent_id = r.agent_id FROM runs r "
            "WHERE t.run_id = r.run_id AND t.model_key = r.model_key AND t.agent_id IS NULL"
        )


def _scores_into_one_table(conn: duckdb.DuckDBPyConnection) -> None:
    """Version 3: the rows of the `verdict_checks` and `judge_scores` tables (every file of
    versions 1 and 2 has both) become score rows, as `derived_scores.score_rows` derives
    them from an episode file, the judge rows after the episode's checks in rubric order;
    the tables are dropped, and the views of the same names replace them."""
    _create_tables(conn)
    scorer = (
        "CASE "
        + " ".join(
            f"WHEN starts_with(v.check_name, '{prefix}') THEN '{name}'" for prefix, name in check_prefixes().items()
        )
        + " ELSE v.check_name END"
    )
    conn.execute(f"""
        INSERT INTO episode_scores BY NAME
        SELECT v.run_id, v.model_key, r.agent_id, v.task_id, v.attempt, v.position,
               {scorer} AS scorer, v.check_name AS criterion,
               CAST(v.passed AS DOUBLE) AS value, CAST(v.passed AS DOUBLE) AS raw, '{PASS_FAIL}' AS scale,
               v.passed, TRUE AS gating, 0 AS sample, coalesce(v.detail, '') AS reason
        FROM verdict_checks v LEFT JOIN runs r USING (run_id, model_key)""")
    conn.execute(f"""
        INSERT INTO episode_scores BY NAME
        SELECT j.run_id, j.model_key, r.agent_id, j.task_id, j.attempt,
               coalesce(c.n, 0) + coalesce(list_position([{_RUBRICS}], j.rubric) - 1, {len(RUBRICS)})
                   AS position,
               j.rubric AS scorer, j.score_field AS criterion, j.score AS value, j.score AS raw,
               '{RUBRIC_SCALE}' AS scale, FALSE AS gating, 0 AS sample,
               coalesce(j.reasoning, '{FAILED}' || j.error, '') AS reason,
               CASE WHEN j.error IS NOT NULL THEN CAST(json_object('error', j.error) AS VARCHAR) END AS details
        FROM judge_scores j LEFT JOIN runs r USING (run_id, model_key)
        LEFT JOIN (SELECT run_id, model_key, task_id, attempt, max(position) + 1 AS n
                   FROM verdict_checks GROUP BY ALL) c USING (run_id, model_key, task_id, attempt)""")
    conn.execute("DROP TABLE verdict_checks")
    conn.execute("DROP TABLE judge_scores")
