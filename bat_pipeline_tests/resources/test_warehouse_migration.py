"""Warehouses written by earlier releases, opened by this one: migrated in place, nothing lost."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import duckdb
import pytest

from bat_pipeline.resources.warehouse import SCHEMA_VERSION, Warehouse
from bat_pipeline_tests.resources.test_warehouse import TASKS, agent_ref, episodes_passing, ref
from bat_pipeline_tests.support.paths import FIXTURES

V2_RUNS = ("20261104T100000Z-cccc0001", "20261105T100000Z-cccc0002")


def unpack(version: int, path: Path) -> Path:
    with gzip.open(FIXTURES / f"warehouse-v{version}" / "warehouse.duckdb.gz") as packed, open(path, "wb") as out:
        shutil.copyfileobj(packed, out)
    return path


def kinds(wh: Warehouse) -> dict[str, str]:
    return {
        r["table_name"]: r["table_type"]
        for r in wh.query("SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = 'main'")
    }


def test_a_warehouse_of_the_first_release_is_migrated_in_place(tmp_path):
    path = unpack(1, tmp_path / "warehouse.duckdb")
    # A reader first: it sees the migrated schema (old runs belong to their folder's name).
    latest = Warehouse(path).latest("weather_agent")
    assert [(r["model_key"], r["run_id"], r["pass_rate"]) for r in latest] == [
        ("openai-competent", "20261102T100000Z-aaaa0002", 1.0),
        ("openai-sloppy", "20261102T100000Z-aaaa0002", 0.0),
    ]
    wh = Warehouse(path)
    assert wh.query("SELECT version FROM schema_version") == [{"version": SCHEMA_VERSION}] and SCHEMA_VERSION == 5
    assert kinds(wh)["verdict_checks"] == "VIEW" and kinds(wh)["episode_scores"] == "BASE TABLE"
    assert len(wh.trend(agent_id="weather_agent")) == 4
    # New runs are written beside the old ones, and the regression gate sees the old run.
    wh.write_partition(
        agent_ref(tmp_path, "20261103T100000Z-bbbb0003", "openai-competent", "weather_agent"),
        episodes_passing(2),
        TASKS,
    )
    previous = wh.previous_metrics("openai-competent", "20261103T100000Z-bbbb0003", agent_id="weather_agent")
    assert previous["run_id"] == "20261102T100000Z-aaaa0002" and previous["pass_rate"] == 1.0
    assert wh.query("SELECT count(*) AS n FROM episodes")[0]["n"] == 8 + 4
    assert wh.query("SELECT count(*) AS n FROM verdict_checks")[0]["n"] == 4 * 2


def old_tables(path: Path) -> dict[str, list[tuple]]:
    """The v2 file's verdict_checks and judge_scores rows, read without migrating."""
    with duckdb.connect(str(path), read_only=True) as conn:
        assert conn.execute("SELECT version FROM schema_version").fetchall() == [(2,)]
        return {
            table: sorted(conn.execute(f"SELECT * FROM {table}").fetchall(), key=repr)
            for table in ("verdict_checks", "judge_scores")
        }


@pytest.mark.parametrize("first", ["reader", "writer"])
def test_a_warehouse_of_schema_2_is_migrated_in_place(tmp_path, first):
    before = old_tables(unpack(2, tmp_path / "untouched.duckdb"))
    assert len(before["verdict_checks"]) == 78 and len(before["judge_scores"]) == 32
    path = unpack(2, tmp_path / "warehouse.duckdb")
    wh = Warehouse(path)
    if first == "reader":
        assert [r["run_id"] for r in wh.latest("weather_agent")] == [V2_RUNS[1]] * 2
    else:
        wh.write_partition(
            agent_ref(tmp_path, "20261106T100000Z-dddd0003", "openai-competent", "weather_agent"),
            episodes_passing(2),
            TASKS,
        )

    assert wh.query("SELECT version FROM schema_version") == [{"version": SCHEMA_VERSION}]
    assert {kinds(wh)[t] for t in ("verdict_checks", "judge_scores")} == {"VIEW"}
    # The views give back exactly the rows the tables held.
    old_runs = "WHERE run_id IN (?, ?)"
    for table, rows in before.items():
        after = sorted((tuple(r.values()) for r in wh.query(f"SELECT * FROM {table} {old_runs}", V2_RUNS)), key=repr)
        assert after == rows, table
    # As score rows: each check of its scorer, the judge rows after the episode's checks.
    scores = wh.query(
        "SELECT * FROM episode_scores WHERE run_id = ? AND model_key = 'openai-sloppy' "
        "AND task_id = 'weather_paris' AND attempt = 0 ORDER BY position",
        [V2_RUNS[1]],
    )
    assert [(s["scorer"], s["criterion"], s["value"], s["gating"]) for s in scores] == [
        ("status", "status", 1.0, True),
        ("output", "output[0]", 0.0, True),
        ("spans", "spans", 0.0, True),
        ("relevance", "response_relevance", 0.4, False),
        ("task_completion", "task_completion_quality", None, False),
        ("hallucination", "hallucination_score", 0.5, False),
        ("tool_call", "tool_call_appropriateness", 0.2, False),
    ]
    assert {s["agent_id"] for s in scores} == {"weather_agent"} and [s["position"] for s in scores] == list(range(7))
    assert scores[4]["reason"] == "judge failed: HTTP 500" and json.loads(scores[4]["details"]) == {
        "error": "HTTP 500 from the judge"
    }
    mapped = wh.query("SELECT DISTINCT scorer, criterion FROM episode_scores WHERE gating ORDER BY ALL")
    assert {(m["scorer"], m["criterion"]) for m in mapped} >= {
        ("tool_calls", "tool_call:get_weather"),
        ("attempt", "attempt"),
        ("limits", "model_calls"),
        ("limits", "tokens"),
        ("errors", "no_errors"),
    }
    # Metrics, trend and charts go on over the old runs.
    assert len(wh.trend(agent_id="weather_agent")) == (4 if first == "reader" else 5)
    means = {(s["model_key"], s["criterion"]): s["mean"] for s in wh.chart_data(V2_RUNS[1]).scores}
    assert means[("openai-competent", "response_relevance")] == pytest.approx(0.9)
    assert means[("openai-sloppy", "output[0]")] == 0.0


def test_a_newer_warehouse_is_refused(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb")
    wh.write_partition(ref(tmp_path, "r1", "a"), episodes_passing(2), TASKS)
    with wh.connect() as conn:
        conn.execute("UPDATE schema_version SET version = 6")
    with pytest.raises(RuntimeError, match="schema version 6, newer than this bat_pipeline knows"):
        wh.write_partition(ref(tmp_path, "r2", "a"), episodes_passing(2), TASKS)
    assert wh.query("SELECT count(*) AS n FROM episodes") == [{"n": 4}]


V3_RUN = "20261120T100000Z-eeee0001"


@pytest.mark.parametrize("first", ["reader", "writer"])
def test_a_warehouse_of_schema_3_gains_provenance_and_intervals(tmp_path, first):
    path = unpack(3, tmp_path / "warehouse.duckdb")
    with duckdb.connect(str(path), read_only=True) as conn:
        assert conn.execute("SELECT version FROM schema_version").fetchall() == [(3,)]
    wh = Warehouse(path)
    if first == "writer":
        wh.write_partition(
            agent_ref(tmp_path, "20261121T100000Z-ffff0002", "openai-competent", "weather_agent"),
            episodes_passing(3),
            TASKS,
        )
    assert wh.query("SELECT version FROM schema_version") == [{"version": SCHEMA_VERSION}]
    # The old rows are all there, with the new columns empty.
    old = wh.query(
        "SELECT model_key, pass_rate, pass_rate_ci_low, flaky_tasks FROM model_metrics WHERE run_id = ? ORDER BY 1",
        [V3_RUN],
    )
    assert old == [
        {"model_key": "openai-competent", "pass_rate": 1.0, "pass_rate_ci_low": None, "flaky_tasks": None},
        {"model_key": "openai-sloppy", "pass_rate": 0.25, "pass_rate_ci_low": None, "flaky_tasks": None},
    ]
    assert wh.query("SELECT DISTINCT dataset_hash, agent_commit FROM runs WHERE run_id = ?", [V3_RUN]) == [
        {"dataset_hash": None, "agent_commit": None}
    ]
    assert wh.query("SELECT count(*) AS n FROM episodes WHERE run_id = ?", [V3_RUN]) == [{"n": 8}]
    if first == "writer":
        new = wh.query(
            "SELECT pass_rate, pass_rate_ci_low, pass_rate_ci_high, flaky_tasks, confidence FROM model_metrics "
            "WHERE run_id = '20261121T100000Z-ffff0002'"
        )[0]
        # Task t1 passed one of its two attempts: flaky; the interval brackets 0.75.
        assert new["pass_rate"] == 0.75 and new["flaky_tasks"] == 1 and new["confidence"] == 0.95
        assert new["pass_rate_ci_low"] < 0.75 < new["pass_rate_ci_high"]


V4_RUN = "20261204T100000Z-gggg0001"


def column_types(wh: Warehouse) -> dict[tuple[str, str], str]:
    return {
        (r["table_name"], r["column_name"]): r["data_type"]
        for r in wh.query(
            "SELECT table_name, column_name, data_type FROM duckdb_columns() "
            "WHERE schema_name = 'main' AND NOT internal"
        )
    }


@pytest.mark.parametrize("first", ["reader", "writer"])
def test_a_warehouse_of_schema_4_gains_types_and_agent_ids(tmp_path, first):
    import datetime

    path = unpack(4, tmp_path / "warehouse.duckdb")
    with duckdb.connect(str(path), read_only=True) as conn:
        assert conn.execute("SELECT version FROM schema_version").fetchall() == [(4,)]
        assert conn.execute("SELECT typeof(started_at) FROM runs LIMIT 1").fetchone() == ("VARCHAR",)
    wh = Warehouse(path)
    if first == "writer":
        wh.write_partition(
            agent_ref(tmp_path, "20261205T100000Z-hhhh0002", "openai-competent", "weather_agent"),
            episodes_passing(3),
            TASKS,
        )
    assert wh.query("SELECT version FROM schema_version") == [{"version": 5}]
    types = column_types(wh)
    for column in ("started_at", "finished_at", "written_at"):
        assert types[("runs", column)] == "TIMESTAMP WITH TIME ZONE", column
    assert types[("episode_scores", "details")] == "JSON"
    tables = ("tasks", "episodes", "trajectory_totals", "model_metrics", "task_metrics", "phase_timings")
    assert all(types[(table, "agent_id")] == "VARCHAR" for table in tables)
    # The old rows: the times read back as times, the details as JSON, every row's agent named.
    (run,) = wh.query(
        "SELECT started_at, written_at FROM runs WHERE run_id = ? AND model_key = 'openai-sloppy'", [V4_RUN]
    )
    assert run["started_at"] == datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)
    assert run["written_at"].year == 2026
    assert wh.query(
        "SELECT DISTINCT details ->> '$.error' AS error FROM episode_scores WHERE run_id = ? AND details IS NOT NULL",
        [V4_RUN],
    ) == [{"error": "HTTP 500"}]
    for table in tables:
        assert wh.query(f"SELECT DISTINCT agent_id FROM {table} WHERE run_id = ?", [V4_RUN]) in (
            [{"agent_id": "weather_agent"}],
            [],  # phase_timings may hold no row of that run
        ), table
    assert wh.query("SELECT count(*) AS n FROM episodes WHERE run_id = ? AND agent_id = 'weather_agent'", [V4_RUN]) == [
        {"n": 8}
    ]
    # The views people query answer without joins, the old run's provenance kept.
    latest = wh.query("SELECT agent_id, model_key, pass_rate FROM latest_model_metrics ORDER BY model_key")
    assert {(r["agent_id"], r["model_key"]) for r in latest} == {
        ("weather_agent", "openai-competent"),
        ("weather_agent", "openai-sloppy"),
    }
    assert wh.query("SELECT DISTINCT dataset_hash FROM runs WHERE run_id = ?", [V4_RUN]) == [{"dataset_hash": "d4"}]
    if first == "writer":  # and a new run's rows carry their agent too
        new = "20261205T100000Z-hhhh0002"
        assert wh.query("SELECT DISTINCT agent_id FROM task_metrics WHERE run_id = ?", [new]) == [
            {"agent_id": "weather_agent"}
        ]
