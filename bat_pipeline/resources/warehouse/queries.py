"""What the runner, the gates, the charts and the UI read from the warehouse: plain
functions over an open connection, each returning rows as dicts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import duckdb

if TYPE_CHECKING:
    from bat_pipeline.engine.charts import ChartData

Row = dict[str, Any]


def fetch(conn: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] | None = None) -> list[Row]:
    cursor = conn.execute(sql, list(params or []))
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def model_summary(conn: duckdb.DuckDBPyConnection, run_id: str) -> list[Row]:
    """model_metrics of one run, with model and run names, one row per model."""
    return fetch(conn, _RUN_MODELS, [run_id])


def latest(conn: duckdb.DuckDBPyConnection, agent_id: str | None = None) -> list[Row]:
    """The `latest_model_metrics` view: each model's newest run (of one agent, or of every
    agent when `agent_id` is None)."""
    return fetch(
        conn,
        "SELECT * FROM latest_model_metrics WHERE (? IS NULL OR agent_id = ?) ORDER BY agent_id, model_key",
        [agent_id, agent_id],
    )


def trend(
    conn: duckdb.DuckDBPyConnection, model_key: str | None = None, last_n: int = 10, agent_id: str | None = None
) -> list[Row]:
    """The `model_trend` view over each model's last `last_n` runs (all models when
    `model_key` is None; all agents when `agent_id` is None), ordered by agent, model,
    then run."""
    return fetch(
        conn,
        "SELECT * FROM model_trend WHERE (? IS NULL OR model_key = ?) AND (? IS NULL OR agent_id = ?) "
        "QUALIFY row_number() OVER (PARTITION BY agent_id, model_key ORDER BY run_id DESC) <= ? "
        "ORDER BY agent_id, model_key, run_id",
        [model_key, model_key, agent_id, agent_id, last_n],
    )


def previous_metrics(
    conn: duckdb.DuckDBPyConnection, model_key: str, before_run_id: str, agent_id: str | None = None
) -> Row | None:
    """The model's metrics in its newest run before `before_run_id` (of that agent, when
    given); None if none."""
    rows = fetch(
        conn,
        "SELECT m.run_id, m.model_key, r.agent_id, r.model_name, r.run_name, m.* EXCLUDE (run_id, model_key, agent_id) "
        "FROM model_metrics m JOIN runs r USING (run_id, model_key) "
        "WHERE m.model_key = ? AND m.run_id < ? AND (? IS NULL OR r.agent_id = ?) "
        "ORDER BY m.run_id DESC LIMIT 1",
        [model_key, before_run_id, agent_id, agent_id],
    )
    return rows[0] if rows else None


def history_runs(conn: duckdb.DuckDBPyConnection) -> list[Row]:
    """Every (run, model) written, oldest first, with its pass rate and episode count."""
    return fetch(
        conn,
        "SELECT r.*, m.pass_rate, m.episodes FROM runs r "
        "LEFT JOIN model_metrics m USING (run_id, model_key) ORDER BY r.run_id, r.model_key",
    )


def score_means(conn: duckdb.DuckDBPyConnection, run_id: str | None = None, agent_id: str | None = None) -> list[Row]:
    """Per model, scorer and criterion of one run (each model's latest run when `run_id`
    is None; only that agent's when `agent_id` is given): `mean` value (None when no row
    has one), `scored` rows with a value, `total` rows, `passed` and `failed` rows, and
    `first_position`, the criterion's earliest place among an episode's rows."""
    scope, params = _scope(run_id, agent_id)
    return fetch(conn, _SCORE_MEANS.format(scope=scope), params)


def chart_data(
    conn: duckdb.DuckDBPyConnection, run_id: str | None = None, last_n: int = 10, agent_id: str | None = None
) -> ChartData:
    """What `charts.render_all` draws: the models, episodes, tasks and score means of one
    run (of each model's latest run when `run_id` is None) and the trend over the last
    runs; only that agent's runs when `agent_id` is given."""
    from bat_pipeline.engine.charts import ChartData  # matplotlib only when charts are drawn

    scope, params = _scope(run_id, agent_id)
    if run_id is None:
        models = latest(conn, agent_id)
    else:
        models = [m for m in model_summary(conn, run_id) if agent_id is None or m["agent_id"] == agent_id]
    return ChartData(
        models=models,
        episodes=fetch(
            conn,
            "SELECT x.model_key, x.task_id, x.attempt, x.passed, x.wall_ms, "
            f"x.tokens_in, x.tokens_out FROM episodes x {scope} "
            "ORDER BY x.model_key, x.task_id, x.attempt",
            params,
        ),
        tasks=fetch(
            conn,
            "SELECT x.model_key, x.task_id, x.attempts, x.passed, x.pass_at_k, "
            f"x.pass_hat_k FROM task_metrics x {scope} ORDER BY x.model_key, x.task_id",
            params,
        ),
        scores=fetch(conn, _SCORE_MEANS.format(scope=scope), params),
        trend=fetch(
            conn,
            "SELECT model_key, run_id, run_index, pass_rate FROM model_trend "
            "WHERE (? IS NULL OR agent_id = ?) "
            "QUALIFY row_number() OVER (PARTITION BY agent_id, model_key ORDER BY run_id DESC) <= ? "
            "ORDER BY model_key, run_id",
            [agent_id, agent_id, last_n],
        ),
    )


def _scope(run_id: str | None, agent_id: str | None) -> tuple[str, list[Any]]:
    """SQL that keeps, of a table aliased `x`, the rows of one run (of each model's latest
    run when `run_id` is None), of one agent when `agent_id` is given; and its parameters."""
    if run_id is None:
        latest_runs = "SELECT run_id, model_key FROM latest_model_metrics WHERE (? IS NULL OR agent_id = ?)"
        return f"JOIN ({latest_runs}) l USING (run_id, model_key)", [agent_id, agent_id]
    # A plain filter on run_id lets DuckDB skip row groups by their min/max.
    agent_models = "SELECT model_key FROM runs WHERE run_id = ? AND (? IS NULL OR agent_id = ?)"
    return f"WHERE x.run_id = ? AND x.model_key IN ({agent_models})", [run_id, run_id, agent_id, agent_id]


_RUN_MODELS = (
    "SELECT m.run_id, m.model_key, r.agent_id, r.model_name, r.run_name, r.k, "
    "m.* EXCLUDE (run_id, model_key, agent_id) "
    "FROM model_metrics m JOIN runs r USING (run_id, model_key) "
    "WHERE m.run_id = ? ORDER BY m.model_key"
)

_SCORE_MEANS = """
    SELECT x.model_key, x.scorer, x.criterion, avg(x.value) AS mean, count(x.value) AS scored,
           count(*) AS total, count(*) FILTER (x.passed) AS passed,
           count(*) FILTER (NOT x.passed) AS failed, min(x.position) AS first_position
    FROM episode_scores x {scope}
    GROUP BY x.model_key, x.scorer, x.criterion
    ORDER BY x.model_key, first_position, x.scorer, x.criterion"""


def partitions_of(conn: duckdb.DuckDBPyConnection, model_key: str, agent_id: str | None = None) -> list[Row]:
    """Every run holding partition `model_key` (of that agent, when given), newest first,
    with its provenance."""
    return fetch(
        conn,
        "SELECT * FROM runs WHERE model_key = ? AND (? IS NULL OR agent_id = ?) ORDER BY run_id DESC",
        [model_key, agent_id, agent_id],
    )


def partition_outcomes(conn: duckdb.DuckDBPyConnection, run_id: str, model_key: str) -> list[Row]:
    """task_id, attempt and passed of every episode of one partition (passed is false for
    an episode without a verdict)."""
    return fetch(
        conn,
        "SELECT task_id, attempt, coalesce(passed, false) AS passed FROM episodes "
        "WHERE run_id = ? AND model_key = ? ORDER BY task_id, attempt",
        [run_id, model_key],
    )


def partition_score_values(conn: duckdb.DuckDBPyConnection, run_id: str, model_key: str) -> list[Row]:
    """scorer, criterion, task_id and value of every score row of one partition that has a
    value, in the order the rows were written."""
    return fetch(
        conn,
        "SELECT scorer, criterion, task_id, value FROM episode_scores "
        "WHERE run_id = ? AND model_key = ? AND value IS NOT NULL ORDER BY task_id, attempt, position",
        [run_id, model_key],
    )
