"""`bat-pipeline sql`: a query over a real warehouse file, read-only, as a table, CSV or
JSON; a query DuckDB refuses, a write, or no warehouse at all exit 2 with the reason."""

from __future__ import annotations

import csv
import io
import json

import pytest

from bat_pipeline.cli import main
from bat_pipeline.resources.warehouse import Warehouse
from bat_pipeline_tests.resources.test_warehouse import TASKS, episodes_passing, ref


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("BAT_PIPELINE_HOME", str(tmp_path))
    return tmp_path


@pytest.fixture
def written(home):
    wh = Warehouse(home / "warehouse.duckdb")
    wh.write_partition(ref(home, "r1", "a"), episodes_passing(3), TASKS)
    wh.write_partition(ref(home, "r1", "b"), episodes_passing(1), TASKS)
    return wh


QUERY = "SELECT model_key, passed, pass_rate FROM model_metrics ORDER BY model_key"


def test_rows_as_a_table_csv_and_json(written, capsys):
    assert main(["sql", QUERY]) == 0
    table = capsys.readouterr().out
    lines = table.splitlines()
    assert lines[0].split() == ["model_key", "┃", "passed", "┃", "pass_rate"]
    assert lines[2].split() == ["a", "│", "3", "│", "0.75"] and lines[3].split() == ["b", "│", "1", "│", "0.25"]
    assert lines[-1] == "(2 rows)"

    assert main(["sql", QUERY, "--format", "csv"]) == 0
    assert list(csv.reader(io.StringIO(capsys.readouterr().out))) == [
        ["model_key", "passed", "pass_rate"],
        ["a", "3", "0.75"],
        ["b", "1", "0.25"],
    ]
    assert (
        main(["sql", "SELECT run_id, started_at, NULL AS nothing FROM runs ORDER BY model_key", "--format", "json"])
        == 0
    )
    rows = json.loads(capsys.readouterr().out)
    assert rows == [
        {"run_id": "r1", "started_at": rows[0]["started_at"], "nothing": None},
        {"run_id": "r1", "started_at": rows[1]["started_at"], "nothing": None},
    ]
    assert rows[0]["started_at"].startswith("2024-01-01")


def test_refused_queries_writes_and_no_warehouse_exit_2(home, capsys):
    assert main(["sql", "SELECT 1"]) == 2
    assert "no warehouse yet" in capsys.readouterr().err
    Warehouse(home / "warehouse.duckdb").write_partition(ref(home, "r1", "a"), episodes_passing(1), TASKS)
    assert main(["sql", "SELEC 1"]) == 2
    assert "field 'QUERY': ParserException" in capsys.readouterr().err
    assert main(["sql", "DELETE FROM runs"]) == 2
    assert "read-only" in capsys.readouterr().err
    assert main(["sql", "SELECT count(*) AS n FROM runs", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"n": 1}]
