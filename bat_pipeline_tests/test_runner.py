"""runner: the end-of-run table shows this run's partitions (never another run's figures),
and what a partition process says failed reaches the terminal."""

from __future__ import annotations

from pathlib import Path

from bat_pipeline.engine.contracts import Episode, Verdict
from bat_pipeline.partition_runs import FAILURE_MARK, failure_lines
from bat_pipeline.resources.warehouse import Warehouse
from bat_pipeline.run_summary import print_summary
from bat_pipeline.storage import PartitionRef, partition_dir, save_ref


def _partition(root: Path, run_id: str, key: str, passed: int, *, metrics: bool = True) -> Path:
    folder = partition_dir(root, run_id, key)
    ref = PartitionRef(
        run_id=run_id,
        run_name="bench",
        agent_id="weather",
        model_key=key,
        model_name=f"openai:{key}",
        k=1,
        agent_dir=root / "weather",
        dir=folder,
        output_dir=root / "out",
    )
    save_ref(ref)
    if metrics:
        episodes = [
            Episode(
                model_name=ref.model_name,
                task_id=f"t{i}",
                final_status="completed",
                verdict=Verdict(passed=i < passed, reason=""),
                aux={"attempt_index": 0},
            )
            for i in range(4)
        ]
        Warehouse(root / "warehouse.duckdb").write_partition(ref, episodes)
    return folder


def test_the_table_shows_this_run_and_nothing_of_a_later_one(tmp_path):
    this = _partition(tmp_path, "20260101T000000Z-a", "m", passed=1)
    _partition(tmp_path, "20260102T000000Z-b", "m", passed=4)  # a newer run of the same model
    lines: list[str] = []
    print_summary(tmp_path, [("m", this)], lines.append)
    rows = [line for line in lines if line.startswith("m ")]
    assert len(rows) == 1 and " 25%" in rows[0], lines


def test_a_partition_that_wrote_no_metrics_is_left_out(tmp_path):
    _partition(tmp_path, "20260101T000000Z-a", "m", passed=4)
    failed = _partition(tmp_path, "20260102T000000Z-b", "m", passed=0, metrics=False)
    lines: list[str] = []
    print_summary(tmp_path, [("m", failed)], lines.append)
    assert not any(line.startswith("m ") for line in lines), lines


def test_failure_lines_are_read_from_the_partition_log(tmp_path):
    log = tmp_path / "p.log"
    log.write_text(
        f"noise\n{FAILURE_MARK}step weather__eval_metrics failed: could not open the warehouse\n"
        f"more noise\n{FAILURE_MARK}    another process holds it\n"
    )
    assert failure_lines(log) == [
        "  step weather__eval_metrics failed: could not open the warehouse",
        "      another process holds it",
    ]


def _episodes(root: Path, key: str, episodes: list[Episode]) -> Path:
    from bat_pipeline.storage import load_ref, store_episodes

    folder = _partition(root, "20260103T000000Z-c", key, passed=0, metrics=False)
    store_episodes(load_ref(folder), episodes, save_record=True)
    return folder


def _episode(i: int, error: str | None = None, **fields) -> Episode:
    aux = {"attempt_index": 0, **({"eval_error": error} if error else {})}
    return Episode(model_name="openai:m", task_id=f"t{i}", aux=aux, **fields)


def test_a_judge_failing_every_call_and_a_crashed_agent_are_one_line_each(tmp_path):
    from bat_pipeline.engine.contracts import ScoreRow
    from bat_pipeline.run_summary import print_problems

    judge_failed = ScoreRow(scorer="relevance", criterion="response_relevance", reason="judge failed: HTTP 500")
    answered = ScoreRow(scorer="relevance", criterion="response_relevance", value=0.8, judge="openai:j")
    crashed = "agent process exited with code -9 during the turn"
    all_failed = _episodes(tmp_path, "a", [_episode(i, scores=[judge_failed]) for i in range(3)])
    some = _episodes(
        tmp_path,
        "b",
        [_episode(0, scores=[answered]), _episode(1, scores=[judge_failed]), _episode(2, error=crashed)],
    )
    fine = _episodes(tmp_path, "c", [_episode(0, scores=[answered])])
    lines: list[str] = []
    print_problems([("a", all_failed), ("b", some), ("c", fine), ("d", None)], lines.append)
    assert lines == [
        "⚠ a: the judge failed on every judged episode, first: HTTP 500",
        f"⚠ b: 1 of 3 attempts ended in an error, first: {crashed}",
        "⚠ b: the judge failed on 1 of 2 judged episodes, first: HTTP 500",
    ]


def test_a_missing_report_is_said_and_fails_the_run(tmp_path):
    from bat_pipeline.run_summary import report_written

    lines: list[str] = []
    report = tmp_path / "runs" / "r" / "report.html"
    assert not report_written(report, "step weather__eval_report failed: disk full\nstep x failed: y", lines.append)
    assert lines == [f"✗ the report was not written ({report}): step weather__eval_report failed: disk full"]
    report.parent.mkdir(parents=True)
    report.write_text("<html></html>")
    assert report_written(report, None, lines.append) and lines[-1] == f"report: {report}"


def test_a_failing_charts_step_is_one_line_without_a_traceback(tmp_path, monkeypatch, capfd):
    """A real Dagster run of a charts job whose report step raises: run_charts says which
    step failed and why in one line; nothing of the traceback reaches the terminal."""
    import dagster as dg

    from bat_pipeline import partition_runs
    from bat_pipeline.automation import CHARTS_JOB

    @dg.asset
    def charts() -> None:
        pass

    @dg.asset(deps=[charts])
    def eval_report() -> None:
        raise OSError("No space left on device: report.html")

    defs = dg.Definitions(
        assets=[charts, eval_report], jobs=[dg.define_asset_job(CHARTS_JOB, selection=[charts, eval_report])]
    )
    monkeypatch.setattr(partition_runs, "instance", lambda: dg.DagsterInstance.ephemeral())
    problem = partition_runs.run_charts(defs)
    printed = capfd.readouterr()
    assert problem == "step eval_report failed: No space left on device: report.html"
    assert "Traceback" not in printed.out + printed.err, printed
