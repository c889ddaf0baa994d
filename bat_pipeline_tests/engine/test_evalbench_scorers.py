"""EvalBench's deterministic scorers (SPEC §12): trajectory_matcher's measures, exact SQL
matching and result-set comparison on real DuckDB and SQLite files, turn_count."""

from __future__ import annotations

import datetime
import decimal
import sqlite3

import duckdb
import pytest

from bat_pipeline.engine.contracts import Episode, Task, ToolStep, Trajectory, Turn
from bat_pipeline.engine.contracts.scenario import ConversationLog, ConversationTurn, Scenario
from bat_pipeline.engine.scorers.behavioral_metrics import parse_behaviour, score
from bat_pipeline.engine.scorers.exact_match import exact_match
from bat_pipeline.engine.scorers.goal_completion import parse_goals
from bat_pipeline.engine.scorers.registry import ScoringInput
from bat_pipeline.engine.scorers.sql_result_match import sql_result_match
from bat_pipeline.engine.scorers.trajectory_matcher import (
    canonical,
    jaccard,
    match_rows,
    sequence_similarity,
    trajectory_matcher,
)
from bat_pipeline.engine.scorers.turn_count import turn_count
from bat_pipeline.engine.sql_results import compare_results, normalise_sql, run_query, sql_of


@pytest.mark.parametrize(
    ("expected", "actual", "value"),
    [
        ([], [], 1.0),
        (["a", "b"], ["b", "a"], 1.0),
        (["a", "b"], ["a", "a", "b"], 1.0),  # sets: repetition does not count
        (["a", "b"], ["a"], 0.5),
        (["a", "b"], ["a", "c"], 1 / 3),
        (["a"], [], 0.0),
        (["a"], ["b"], 0.0),
    ],
)
def test_jaccard(expected, actual, value):
    assert jaccard(expected, actual) == pytest.approx(value)


@pytest.mark.parametrize(
    ("expected", "actual", "value"),
    [
        ([], [], 1.0),
        (["a", "b"], ["a", "b"], 1.0),
        (["a", "b"], ["b", "a"], 0.0),  # two substitutions of two
        (["a", "b", "c"], ["a", "c"], 2 / 3),  # one deletion of three
        (["a"], ["a", "a", "a", "a"], 0.25),  # three insertions, longer is 4
        (["a", "b"], [], 0.0),
        (["k", "i", "t", "t", "e", "n"], ["s", "i", "t", "t", "i", "n", "g"], 1 - 3 / 7),
    ],
)
def test_levenshtein_similarity(expected, actual, value):
    assert sequence_similarity(expected, actual) == pytest.approx(value)


@pytest.mark.parametrize(
    ("expected", "actual", "enforce_order", "value", "exact"),
    [
        (["get_weather"], ["get_weather"], False, 1.0, True),
        (["a", "b"], ["b", "a"], False, 1.0, False),
        (["a", "b"], ["b", "a"], True, 0.0, False),
        (["list_instances"], ["cloud-sql__list_instances"], False, 1.0, True),  # a bare name matches server__name
        (["cloud-sql__list_instances"], ["mcp__cloud-sql__list_instances"], False, 1.0, True),
        (["cloud-sql__list_instances"], ["other__list_instances"], False, 0.0, False),
    ],
)
def test_trajectory_matcher_rows(expected, actual, enforce_order, value, exact):
    main, exact_row, other = match_rows(expected, actual, enforce_order=enforce_order)
    assert main.criterion == "trajectory_matcher" and main.gating and main.value == pytest.approx(value)
    assert main.raw == pytest.approx(round(value * 100, 1)) and main.scale == "0..100"
    assert main.passed is (value == 1.0)
    assert main.details["measure"] == ("levenshtein" if enforce_order else "jaccard")
    assert exact_row.passed is exact and not exact_row.gating
    assert other.criterion == f"trajectory_matcher:{'jaccard' if enforce_order else 'levenshtein'}"


def test_filter_native_tools_and_canonical_names():
    rows = match_rows(["srv__a"], ["native", "srv__a"], filter_native_tools=True)
    assert rows[0].value == 1.0 and rows[0].details["actual"] == ["srv__a"]
    assert match_rows(["srv__a"], ["native", "srv__a"])[0].value == 0.5  # every name kept by default
    assert canonical(["x__a", "a", "y__b"], ["a", "x__b"]) == ["a", "a", "y__b"]


def _item(scenario: Scenario, steps=(), output="", log: ConversationLog | None = None) -> ScoringInput:
    trajectory = Trajectory(found=True, turns=[Turn(user="go", steps=[ToolStep(name=n) for n in steps])])
    episode = Episode(
        model_name="m", task_id="t", final_output=output, aux={"conversation": log.model_dump()} if log else {}
    )
    episode.trace.trajectory = trajectory
    return ScoringInput(task=Task(id="t", turns=["go"], scenario=scenario), episode=episode)


def test_the_scorer_reads_the_trajectory_and_the_run_configs_options():
    scenario = Scenario(expected_trajectory=["s__a", "s__b"], scorers={"trajectory_matcher": {"enforce_order": True}})
    [main, *_] = trajectory_matcher(_item(scenario, steps=["s__b", "s__a"]))
    assert main.value == 0.0 and main.details["measure"] == "levenshtein"


def test_filter_native_tools_defaults_as_evalbench_for_its_run_configs():
    """evalbench/scorers/trajectorymatcher.py: `config.get("filter_native_tools", True)`: a
    harness's native tools (Read, run_shell_command) never lower the score of a run config's
    scenario; a bat-cli dataset's scenario (no run config) keeps every name (SPEC §12)."""
    steps = ["Read", "cloud-sql__list_instances", "run_shell_command"]
    from_run_config = Scenario(expected_trajectory=["cloud-sql__list_instances"], scorers={"trajectory_matcher": {}})
    assert trajectory_matcher(_item(from_run_config, steps=steps))[0].raw == 100.0
    written_out = from_run_config.model_copy(update={"scorers": {"trajectory_matcher": {"filter_native_tools": False}}})
    assert trajectory_matcher(_item(written_out, steps=steps))[0].value == pytest.approx(1 / 3)
    plain = Scenario(expected_trajectory=["cloud-sql__list_instances"])
    assert trajectory_matcher(_item(plain, steps=steps))[0].value == pytest.approx(1 / 3)


def test_turn_count_is_the_number_of_turns():
    log = ConversationLog(
        turns=[ConversationTurn(user="a"), ConversationTurn(user="b", generated=True)], ended="terminated", max_turns=4
    )
    [row] = turn_count(_item(Scenario(), log=log))
    assert row.raw == 2 and row.scale == "count" and row.value is None and not row.gating
    assert row.reason == "2 turns of at most 4; ended: terminated" and row.details["generated"] == 1


@pytest.mark.parametrize(
    ("golden", "answer", "passed"),
    [
        ("SELECT 1;", "SELECT 1", True),
        ("SELECT  a\nFROM t", "Here it is:\n```sql\nSELECT a FROM t;\n```", True),
        ("SELECT a FROM t", "SELECT b FROM t", False),
        ("SELECT 'Paris'", "SELECT 'paris'", False),
    ],
)
def test_exact_match(golden, answer, passed):
    [row] = exact_match(_item(Scenario(golden_sql=golden), output=answer))
    assert row.passed is passed and row.gating and row.raw == (100.0 if passed else 0.0)


def test_exact_match_of_an_expected_answer():
    assert exact_match(_item(Scenario(expected_answer="42"), output=" 42\n"))[0].passed is True
    assert normalise_sql(" SELECT  1 ;; ") == "SELECT 1" and sql_of("no fence") == "no fence"


@pytest.mark.parametrize(
    ("golden", "generated", "equal", "says"),
    [
        ([(1, "a"), (2, "b")], [(2, "b"), (1, "a")], True, "order aside"),
        ([(1,), (1,)], [(1,)], False, "1 golden row(s) missing"),  # duplicates count
        ([(1,)], [(1,), (1,)], False, "1 extra"),
        ([(None, 1)], [(None, 1)], True, ""),  # NULL equals NULL
        ([(None,)], [(0,)], False, ""),
        ([(1,)], [(1.0,)], True, ""),  # numbers by value
        ([(decimal.Decimal("2.50"),)], [(2.5,)], True, ""),
        ([(0.1 + 0.2,)], [(0.3,)], True, ""),
        ([(1,)], [("1",)], False, "different types"),
        ([(datetime.date(2026, 1, 2),)], [("2026-01-02",)], True, ""),
        ([(1, 2)], [(1,)], False, "number of columns"),
        ([], [], True, ""),
    ],
)
def test_result_set_comparison(golden, generated, equal, says):
    result = compare_results(golden, generated)
    assert result.equal is equal and says in result.reason


@pytest.fixture(params=["duckdb", "sqlite"])
def database(request, tmp_path):
    path = tmp_path / f"cities.{request.param}"
    rows = [("Paris", 22), ("Berlin", 15), ("Oslo", None)]
    if request.param == "duckdb":
        with duckdb.connect(str(path)) as db:
            db.execute("CREATE TABLE cities (name TEXT, temp INTEGER)")
            db.executemany("INSERT INTO cities VALUES (?, ?)", rows)
    else:
        with sqlite3.connect(path) as db:
            db.execute("CREATE TABLE cities (name TEXT, temp INTEGER)")
            db.executemany("INSERT INTO cities VALUES (?, ?)", rows)
        db.close()
    return path


def _sql_row(database, golden, answer):
    [row] = sql_result_match(_item(Scenario(golden_sql=golden, database=str(database)), output=answer))
    return row


def test_sql_result_match_on_a_real_database(database):
    golden = "SELECT name FROM cities WHERE temp > 10 ORDER BY name"
    assert _sql_row(database, golden, "SELECT name FROM cities WHERE temp >= 15").passed is True
    assert _sql_row(database, golden, "SELECT name FROM cities").passed is False
    failed = _sql_row(database, golden, "SELECT nope FROM cities")
    assert failed.passed is False and failed.reason.startswith("the generated query failed:")
    assert failed.details["comparison_error"]
    broken = _sql_row(database, "SELECT * FROM missing", "SELECT 1")
    assert broken.value is None and broken.reason.startswith("the golden query failed:")


def test_the_database_is_opened_read_only(database):
    result = run_query(database, "DELETE FROM cities")
    assert result.error is not None
    assert run_query(database, "SELECT count(*) FROM cities").rows == [(3,)]
    assert run_query(database.parent / "none.db", "SELECT 1").error.startswith("no such database file")


def _hostile_queries(tmp_path, kind):
    """SQL an injected agent could answer, each touching a file or a setting."""
    written, secret = tmp_path / "written.txt", tmp_path / "secret.txt"
    secret.write_text("the user's secret", encoding="utf-8")
    if kind == "duckdb":
        return written, [
            f"COPY cities TO '{written}'",
            f"COPY (SELECT 1) TO '{written}' (FORMAT csv)",
            f"SELECT * FROM read_text('{secret}')",
            f"SELECT * FROM read_csv('{secret}')",
            f"SELECT * FROM glob('{tmp_path}/*')",
            f"ATTACH '{written}' AS other",
            f"EXPORT DATABASE '{tmp_path / 'export'}'",
            "SET enable_external_access = true",
            "SET threads = 1",
            "RESET lock_configuration",
            "PRAGMA enable_profiling",
            "INSTALL httpfs",
            "LOAD httpfs",
        ]
    return written, [
        f"ATTACH DATABASE '{written}' AS other",
        "PRAGMA journal_mode = WAL",
        "PRAGMA writable_schema = ON",
        "SELECT load_extension('/no/such/extension')",
        "CREATE TEMP TABLE t (a INTEGER)",
        "INSERT INTO cities VALUES ('Rome', 30)",
        "BEGIN",
    ]


def test_an_agents_sql_cannot_touch_files_or_settings(database, tmp_path):
    """An agent's SQL is untrusted (issue 38): every query that writes or reads a file other
    than the named database, attaches one, changes a setting or loads an extension is
    refused, while an ordinary SELECT still scores."""
    written, queries = _hostile_queries(tmp_path, database.suffix.lstrip("."))
    for sql in queries:
        result = run_query(database, sql)
        assert result.error is not None, sql
        row = _sql_row(database, "SELECT count(*) FROM cities", sql)
        assert row.passed is False and row.reason.startswith("the generated query failed:"), sql
    assert not written.exists() and not (tmp_path / "export").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([database.name, "secret.txt"])
    assert _sql_row(database, "SELECT count(*) FROM cities", "SELECT count(*) FROM cities").passed is True
    with_cte = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3) SELECT count(*) FROM n"
    assert _sql_row(database, "SELECT count(*) FROM cities", with_cte).passed is True


def test_llm_answers_are_read_and_scored():
    goals, summary = parse_goals(
        '<think>{"sub_goals": []}</think> {"sub_goals": [{"goal": "g", "met": true, '
        '"reasoning": "r"}, {"goal": "h", "met": false, "reasoning": "s"}], "summary": "ok"}'
    )
    assert [g["met"] for g in goals] == [True, False] and summary == "ok"
    with pytest.raises(ValueError):
        parse_goals('{"sub_goals": [], "summary": ""}')
    listed, _ = parse_behaviour("Hallucination Count: 1\nClarification Count: 2")
    assert (len(listed["hallucinations"]), len(listed["unnecessary_clarifications"])) == (1, 2)
    assert [score(0, 0), score(1, 0), score(1, 2), score(3, 0)] == [100, 50, 10, 0]
