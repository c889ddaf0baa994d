"""The DuckDB warehouse on real files: history, replacement, views, and other processes
holding the file."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from dagster_duckdb import DuckDBResource

from bat_pipeline.engine.contracts import (
    Episode,
    EpisodeTrace,
    JudgeScores,
    Task,
    Totals,
    Trajectory,
    Verdict,
    VerdictCheck,
)
from bat_pipeline.engine.redaction import Redactor
from bat_pipeline.resources.warehouse import (
    FINAL_OUTPUT_CHARS,
    TABLES,
    Warehouse,
    WarehouseBusyError,
    WarehouseResource,
)
from bat_pipeline.resources.warehouse.schema import ensure_schema
from bat_pipeline.storage import PartitionRef
from bat_pipeline_tests.support.forked_cli import preloaded_context


def episode(
    task_id: str,
    attempt: int,
    passed: bool,
    *,
    wall_ms: float = 100.0,
    status: str = "completed",
    judged: bool = True,
    output: str = "done",
    eval_error: str | None = None,
) -> Episode:
    aux = {"attempt_index": attempt, "agent_url": "http://localhost:9900"}
    if eval_error:
        aux["eval_error"] = eval_error
    return Episode(
        model_name="openai:m",
        task_id=task_id,
        final_status=status,
        final_output=output,
        verdict=Verdict(
            passed=passed,
            reason="status ok" if passed else "status wrong",
            checks=[
                VerdictCheck(check="status", passed=passed, detail=f"status {status}"),
                VerdictCheck(check="output[0]", passed=True, detail="contains 'x'"),
            ],
        ),
        qualitative_scores=JudgeScores(
            response_relevance=0.75,
            task_completion_quality=None,
            judge_reasoning={"relevance": "on topic", "task_completion": "judge failed"},
            judge_errors={"task_completion": "HTTP 500"},
        )
        if judged
        else None,
        aux=aux,
        trace=EpisodeTrace(
            wall_ms=wall_ms,
            trajectory=Trajectory(
                found=True,
                totals=Totals(
                    model_calls=2, tokens_in=120, tokens_out=30, tokens_cached=20, tool_calls=1, agent_calls=0, errors=0
                ),
            ),
        ),
    )


def ref(root: Path, run_id: str, model_key: str, k: int = 2) -> PartitionRef:
    folder = root / "runs" / run_id / model_key
    return PartitionRef(
        run_id=run_id,
        run_name="bench",
        model_key=model_key,
        model_name=f"openai:{model_key}",
        k=k,
        agent_dir=root / "agent",
        dir=folder,
        output_dir=root / "out",
        started_at="2024-01-01T00:00:00+00:00",
        dagster_run_id="dagster-1",
    )


def episodes_passing(n_passed: int, total: int = 4) -> list[Episode]:
    """`total` episodes over two tasks × attempts, the first `n_passed` passing."""
    return [episode(f"t{i // 2}", i % 2, i < n_passed, wall_ms=100.0 * (i + 1)) for i in range(total)]


TASKS = [Task(id="t0", turns=["a", "b"], meta={"category": "booking"}), Task(id="t1", turns=["c"])]


def counts(wh: Warehouse) -> dict[tuple[str, str, str], int]:
    """(table, run_id, model_key) → rows."""
    found = {}
    for table in TABLES:
        for row in wh.query(f"SELECT run_id, model_key, count(*) AS n FROM {table} GROUP BY ALL"):
            found[(table, row["run_id"], row["model_key"])] = row["n"]
    return found


def test_two_runs_two_models_make_a_trend(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb")
    rates = {("r1", "a"): 4, ("r1", "b"): 1, ("r2", "a"): 2, ("r2", "b"): 3}
    for (run_id, model_key), passed in rates.items():
        wh.write_partition(ref(tmp_path, run_id, model_key), episodes_passing(passed), TASKS)

    trend = wh.trend()
    assert [(r["model_key"], r["run_id"], r["run_index"], r["pass_rate"]) for r in trend] == [
        ("a", "r1", 1, 1.0),
        ("a", "r2", 2, 0.5),
        ("b", "r1", 1, 0.25),
        ("b", "r2", 2, 0.75),
    ]
    assert trend[1]["previous_pass_rate"] == 1.0 and trend[1]["pass_rate_change"] == -0.5
    assert [r["run_id"] for r in wh.trend("b", last_n=1)] == ["r2"]

    latest = wh.latest()
    assert [(r["model_key"], r["run_id"], r["pass_rate"]) for r in latest] == [("a", "r2", 0.5), ("b", "r2", 0.75)]
    assert latest[0]["model_name"] == "openai:a" and latest[0]["k"] == 2

    assert wh.previous_metrics("a", "r2")["pass_rate"] == 1.0
    assert wh.previous_metrics("a", "r1") is None
    summary = wh.model_summary("r1")
    assert [(r["run_id"], r["model_key"]) for r in summary] == [("r1", "a"), ("r1", "b")]
    assert (summary[0]["tasks"], summary[0]["episodes"]) == (2, 4)
    assert len(wh.history_runs()) == 4


def test_rewriting_a_partition_replaces_only_its_rows(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb")
    for run_id, model_key in (("r1", "a"), ("r1", "b"), ("r2", "a")):
        wh.write_partition(ref(tmp_path, run_id, model_key), episodes_passing(2), TASKS)
    before = counts(wh)

    written = wh.write_partition(ref(tmp_path, "r1", "a"), episodes_passing(1, total=2), TASKS[:1])

    after = counts(wh)
    assert written["episodes"] == 2 and written["episode_scores"] == 2 * (2 + 4)  # checks, rubrics
    assert wh.query("SELECT count(*) AS n FROM verdict_checks WHERE run_id = 'r1' AND model_key = 'a'") == [{"n": 4}]
    assert after[("episodes", "r1", "a")] == 2 and after[("tasks", "r1", "a")] == 1
    assert after[("runs", "r1", "a")] == 1 and after[("model_metrics", "r1", "a")] == 1
    assert {k: v for k, v in after.items() if k[1:] != ("r1", "a")} == {
        k: v for k, v in before.items() if k[1:] != ("r1", "a")
    }
    assert wh.model_summary("r1")[0]["pass_rate"] == 0.5


class RecordingConnection:
    """A DuckDB connection that keeps the text of every statement run through it."""

    def __init__(self, conn):
        self.conn = conn
        self.statements: list[str] = []

    def execute(self, sql, *args):
        self.statements.append(sql)
        return self.conn.execute(sql, *args)


def catalog_writes(wh: Warehouse) -> list[str]:
    """What ensure_schema changes in the catalog when `wh` is opened for writing now."""
    import duckdb

    with duckdb.connect(str(wh.path)) as conn:
        recording = RecordingConnection(conn)
        ensure_schema(recording)
        return [sql for sql in recording.statements if sql.lstrip().upper().startswith(("CREATE", "COMMENT", "ALTER"))]


def test_a_current_warehouse_is_written_without_touching_its_catalog_until_another_writer_changes_it(tmp_path):
    import duckdb

    wh = Warehouse(tmp_path / "w.duckdb")
    wh.write_partition(ref(tmp_path, "r1", "a"), episodes_passing(2), TASKS)
    assert catalog_writes(wh) == []

    # Another release (or a user) redefines a view: the next writer makes it ours again.
    with duckdb.connect(str(wh.path)) as conn:
        conn.execute("CREATE OR REPLACE VIEW verdict_checks AS SELECT 1 AS one")
    wh.write_partition(ref(tmp_path, "r2", "a"), episodes_passing(1), TASKS)  # 4 episodes, 2 checks each
    assert wh.query("SELECT count(*) AS n FROM verdict_checks WHERE run_id = 'r2'") == [{"n": 8}]
    assert catalog_writes(wh) == []

    # A table of this release gone missing is made again, and the rows land in it.
    with duckdb.connect(str(wh.path)) as conn:
        conn.execute("DROP TABLE phase_timings")
    assert any("phase_timings" in sql for sql in catalog_writes(wh))
    wh.write_run_phase("r2", "charts", 1.5)
    assert wh.query("SELECT seconds FROM phase_timings WHERE run_id = 'r2'") == [{"seconds": 1.5}]


def test_tables_hold_checks_scores_and_totals(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb")
    long_output = "x" * (FINAL_OUTPUT_CHARS + 500)
    eps = [
        episode("t0", 0, True, output=long_output),
        episode("t1", 0, False, status="error", judged=False, eval_error="ConnectError: refused"),
    ]
    wh.write_partition(ref(tmp_path, "r1", "a", k=1), eps, TASKS)

    rows = wh.query(
        "SELECT task_id, passed, final_status, eval_error, length(final_output) AS n, "
        "tokens_in, tokens_cached FROM episodes ORDER BY task_id"
    )
    assert rows == [
        {
            "task_id": "t0",
            "passed": True,
            "final_status": "completed",
            "eval_error": None,
            "n": FINAL_OUTPUT_CHARS,
            "tokens_in": 120,
            "tokens_cached": 20,
        },
        {
            "task_id": "t1",
            "passed": False,
            "final_status": "error",
            "eval_error": "ConnectError: refused",
            "n": 4,
            "tokens_in": 120,
            "tokens_cached": 20,
        },
    ]
    checks = wh.query("SELECT check_name, passed FROM verdict_checks WHERE task_id = 't1' ORDER BY position")
    assert checks == [{"check_name": "status", "passed": False}, {"check_name": "output[0]", "passed": True}]
    scores = wh.query("SELECT rubric, score, error FROM judge_scores ORDER BY rubric")
    assert len(scores) == 4  # only the judged episode, one row per rubric
    assert {"rubric": "task_completion", "score": None, "error": "HTTP 500"} in scores
    assert {"rubric": "relevance", "score": 0.75, "error": None} in scores
    totals = wh.query("SELECT sum(model_calls) AS calls, sum(tool_calls) AS tools FROM trajectory_totals")
    assert totals == [{"calls": 4, "tools": 2}]
    tasks = wh.query("SELECT task_id, category, n_turns FROM tasks ORDER BY task_id")
    assert tasks == [
        {"task_id": "t0", "category": "booking", "n_turns": 2},
        {"task_id": "t1", "category": None, "n_turns": 1},
    ]
    metrics = wh.model_summary("r1")[0]
    assert metrics["error_episodes"] == 1 and metrics["response_relevance"] == 0.75
    assert metrics["task_completion_quality"] is None and metrics["p50_ms"] == 100.0
    stored = " ".join(str(v) for table in TABLES for row in wh.query(f"SELECT * FROM {table}") for v in row.values())
    assert "localhost:9900" not in stored  # aux fields other than eval_error are not kept


def test_rows_are_redacted_before_they_are_cut(tmp_path):
    secret = "sk-warehouse-canary-0d9f7c"
    wh = Warehouse(tmp_path / "w.duckdb")
    straddling = "x" * (FINAL_OUTPUT_CHARS - 10) + secret  # the cut falls inside the secret
    eps = [episode("t0", 0, True, output=straddling, eval_error=f"agent said {secret}")]
    eps[0].qualitative_scores.judge_reasoning["relevance"] = f"echo {secret}"
    tasks = [Task(id="t0", turns=["a"], expected={"expected_outcome": f"mentions {secret}"})]
    wh.write_partition(ref(tmp_path, "r1", "a", k=1), eps, tasks, redactor=Redactor([secret]))
    stored = " ".join(str(v) for table in TABLES for row in wh.query(f"SELECT * FROM {table}") for v in row.values())
    assert secret[:8] not in stored
    assert "agent said [redacted]" in stored and "echo [redacted]" in stored and "mentions [redacted]" in stored
    output = wh.query("SELECT final_output FROM episodes")[0]["final_output"]
    assert output.endswith("x[redacted]")


def test_reads_before_any_write_are_empty(tmp_path):
    wh = Warehouse(tmp_path / "missing.duckdb")
    assert wh.trend() == [] and wh.latest() == [] and wh.previous_metrics("a", "r9") is None
    assert wh.chart_data().models == []
    assert not (tmp_path / "missing.duckdb").exists()


def test_chart_data_of_a_run_and_of_the_latest(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb")
    wh.write_partition(ref(tmp_path, "r1", "a"), episodes_passing(1), TASKS)
    wh.write_partition(ref(tmp_path, "r2", "a"), episodes_passing(3), TASKS)
    wh.write_partition(ref(tmp_path, "r1", "b"), episodes_passing(2), TASKS)

    latest = wh.chart_data()
    assert [(m["model_key"], m["run_id"]) for m in latest.models] == [("a", "r2"), ("b", "r1")]
    assert len(latest.episodes) == 8 and len(latest.tasks) == 4 and len(latest.trend) == 3
    one_run = wh.chart_data("r1")
    assert {m["model_key"] for m in one_run.models} == {"a", "b"}
    assert sum(e["passed"] for e in one_run.episodes) == 3
    # Score means of the same scope: r2's for model a (3 of 4 status checks passed), r1's for b.
    means = {(s["model_key"], s["scorer"], s["criterion"]): s for s in latest.scores}
    assert len(means) == 2 * (2 + 4)
    assert means[("a", "status", "status")]["mean"] == 0.75 and means[("b", "status", "status")]["mean"] == 0.5
    assert (means[("a", "status", "status")]["passed"], means[("a", "status", "status")]["failed"]) == (3, 1)
    relevance = means[("a", "relevance", "response_relevance")]
    assert (relevance["mean"], relevance["scored"], relevance["total"], relevance["first_position"]) == (0.75, 4, 4, 2)
    assert means[("a", "task_completion", "task_completion_quality")]["mean"] is None
    assert [s["criterion"] for s in latest.scores if s["model_key"] == "a"][:2] == ["status", "output[0]"]
    assert {s["model_key"] for s in one_run.scores} == {"a", "b"}
    assert wh.score_means("r1") == one_run.scores


def _write_partition_in_process(db: str, root: str, model_key: str, barrier) -> None:
    barrier.wait()
    wh = Warehouse(db, max_wait_s=30)
    for run_id in ("r1", "r2"):
        wh.write_partition(ref(Path(root), run_id, model_key), episodes_passing(2, total=6), TASKS)


def test_parallel_writer_processes_all_land(tmp_path):
    db = tmp_path / "w.duckdb"
    models = [f"m{i}" for i in range(4)]
    ctx = preloaded_context()
    barrier = ctx.Barrier(len(models))
    workers = [
        ctx.Process(target=_write_partition_in_process, args=(str(db), str(tmp_path), m, barrier)) for m in models
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    assert [w.exitcode for w in workers] == [0] * len(models)

    wh = Warehouse(db)
    found = counts(wh)
    for model_key in models:
        for run_id in ("r1", "r2"):
            assert found[("episodes", run_id, model_key)] == 6
            assert found[("model_metrics", run_id, model_key)] == 1
    assert len(wh.trend()) == 8


_READER = """
import sys, duckdb
conn = duckdb.connect(sys.argv[1], read_only=True)
print("open", flush=True)
sys.stdin.readline()
conn.close()
print("closed", flush=True)
"""


@pytest.fixture
def foreign_reader(tmp_path):
    """Another process (a notebook, the UI) holding the warehouse open read-only until
    it is sent a line."""
    db = tmp_path / "w.duckdb"
    Warehouse(db).write_partition(ref(tmp_path, "r0", "a"), episodes_passing(1), TASKS)
    proc = subprocess.Popen(
        [sys.executable, "-c", _READER, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout.readline().strip() == "open"

    def release() -> None:
        if proc.poll() is None:
            proc.stdin.write("close\n")
            proc.stdin.flush()
            assert proc.stdout.readline().strip() == "closed"
        proc.wait(timeout=10)

    yield db, release
    release()


def test_writer_waits_for_a_reader_process_then_succeeds(tmp_path, foreign_reader):
    db, release = foreign_reader
    waiting = threading.Event()
    outcome: dict[str, object] = {}
    wh = Warehouse(db, max_wait_s=30, on_wait=lambda message: waiting.set())

    def write() -> None:
        try:
            outcome["written"] = wh.write_partition(ref(tmp_path, "r1", "a"), episodes_passing(2), TASKS)
        except BaseException as error:  # noqa: BLE001 - surfaced by the assertion below
            outcome["error"] = error
            waiting.set()

    writer = threading.Thread(target=write)
    writer.start()
    assert waiting.wait(timeout=30)
    assert "written" not in outcome and "error" not in outcome
    release()
    writer.join(timeout=30)
    assert outcome.get("error") is None and outcome["written"]["episodes"] == 4
    assert [r["run_id"] for r in wh.trend("a")] == ["r0", "r1"]


def test_writer_gives_up_with_a_clear_error(tmp_path, foreign_reader):
    db, _ = foreign_reader
    wh = Warehouse(db, max_wait_s=0.3)
    with pytest.raises(WarehouseBusyError) as raised:
        wh.write_partition(ref(tmp_path, "r1", "a"), episodes_passing(2), TASKS)
    message = str(raised.value)
    assert str(db) in message and "another process holds it" in message and "Gave up after" in message


def test_reader_waits_for_a_writer_lock_then_gives_up(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb", max_wait_s=0.2)
    wh.write_partition(ref(tmp_path, "r1", "a"), episodes_passing(2), TASKS)
    fd = os.open(wh.lock_path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # a writer of another process, as flock sees it
        with pytest.raises(WarehouseBusyError, match="another bat_pipeline process is writing"):
            wh.trend()
    finally:
        os.close(fd)
    assert len(wh.trend()) == 1


def test_dagster_resource_uses_the_same_locking(tmp_path):
    resource = WarehouseResource(database=str(tmp_path / "w.duckdb"), max_wait_s=5)
    assert isinstance(resource, DuckDBResource)
    resource.warehouse().write_partition(ref(tmp_path, "r1", "a"), episodes_passing(2), TASKS)
    with resource.get_connection(read_only=True) as conn:
        assert conn.execute("SELECT count(*) FROM episodes").fetchone() == (4,)
    with resource.get_connection() as conn:
        conn.execute("CREATE TABLE notes (text VARCHAR)")
    assert (tmp_path / "w.duckdb.lock").exists()


def agent_ref(root: Path, run_id: str, model_key: str, agent_id: str) -> PartitionRef:
    return ref(root, run_id, model_key).model_copy(update={"agent_id": agent_id})


def test_agents_sharing_a_warehouse_never_mix(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb")
    # Same model key in both agents; the other agent's run is the newer one.
    wh.write_partition(agent_ref(tmp_path, "r1", "m", "weather"), episodes_passing(4), TASKS)
    wh.write_partition(agent_ref(tmp_path, "r2", "m", "planner"), episodes_passing(1), TASKS)
    wh.write_partition(agent_ref(tmp_path, "r3", "m", "weather"), episodes_passing(2), TASKS)

    assert [(r["agent_id"], r["run_id"]) for r in wh.latest()] == [("planner", "r2"), ("weather", "r3")]
    assert [r["run_id"] for r in wh.latest("weather")] == ["r3"]
    weather = wh.trend(agent_id="weather")
    assert [(r["run_id"], r["run_index"], r["previous_pass_rate"]) for r in weather] == [
        ("r1", 1, None),
        ("r3", 2, 1.0),
    ]
    assert wh.previous_metrics("m", "r3", agent_id="weather")["run_id"] == "r1"
    assert wh.previous_metrics("m", "r3", agent_id="planner")["run_id"] == "r2"
    assert wh.previous_metrics("m", "r2", agent_id="planner") is None
    charts = wh.chart_data(agent_id="planner")
    assert [m["run_id"] for m in charts.models] == ["r2"]
    assert [r["run_id"] for r in charts.trend] == ["r2"]
    assert {e["attempt"] for e in charts.episodes} == {0, 1} and len(charts.episodes) == 4
    status = [s for s in charts.scores if s["scorer"] == "status"]
    assert [(s["total"], s["passed"]) for s in status] == [(4, 1)]
