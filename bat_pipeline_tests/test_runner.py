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
