"""The bundled EvalBench example (`bat_pipeline/example/scenarios/`, in `make demo`):
`bat-pipeline run run_config.yaml` on a copy, the scripted server playing the agent's
model, the user and the judge. Four scenarios, one failing on purpose; the CSV report and
the warehouse hold the same rows."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

from bat_pipeline.engine.evalbench_report import csv_score
from bat_pipeline.resources.warehouse import Warehouse
from bat_pipeline_tests.support.example_agent import pipeline_env, run
from bat_pipeline_tests.support.paths import VENV_BIN

EXAMPLE = Path(__file__).resolve().parents[2] / "bat_pipeline" / "example"
SCENARIOS = ("clarify_city", "compare_then_add", "forecast_rome", "fahrenheit_paris")


def test_the_example_runs_and_its_csv_and_warehouse_agree(tmp_path, scripted_llm):
    # Without what `make demo` may have left in the source tree (its results are git-ignored).
    left_by_demo = shutil.ignore_patterns("output", "results", "eval_output")
    for folder in ("scenarios", "weather_agent"):
        shutil.copytree(EXAMPLE / folder, tmp_path / "example" / folder, ignore=left_by_demo)
    run_config = tmp_path / "example" / "scenarios" / "run_config.yaml"
    root = tmp_path / "home"
    result = run(
        [str(VENV_BIN / "bat-pipeline"), "run", str(run_config), "--output", str(tmp_path / "out")],
        pipeline_env(run_config, root, scripted_llm.url),
        cwd=run_config.parent,  # EvalBench writes reporting.csv.output_directory from the working directory
    )
    assert result.returncode == 0, result.stdout
    [csv_folder] = (run_config.parent / "results").iterdir()
    assert f"csv: {csv_folder}" in result.stdout

    warehouse = Warehouse(root / "warehouse.duckdb")
    run_id = csv_folder.name
    episodes = {r["task_id"]: r for r in warehouse.query("SELECT * FROM episodes WHERE run_id = ?", [run_id])}
    assert sorted(episodes) == sorted(SCENARIOS)
    assert [t for t, e in sorted(episodes.items()) if not e["passed"]] == ["fahrenheit_paris"]

    stored = warehouse.query("SELECT * FROM episode_scores WHERE run_id = ? ORDER BY task_id, position", [run_id])
    main = {(r["task_id"], r["scorer"]): r for r in reversed(stored)}  # each scorer's first row...
    main.update({(r["task_id"], r["scorer"]): r for r in stored if r["criterion"] == r["scorer"]})  # ...or its own
    lines = list(csv.DictReader((csv_folder / "scores.csv").open(encoding="utf-8")))
    assert {(line["id"], line["comparator"]) for line in lines} == set(main)
    assert {scorer for _, scorer in main} == {
        "trajectory_matcher",
        "turn_count",
        "goal_completion",
        "behavioral_metrics",
    }  # only the run config's scorers
    for line in lines:
        row = main[(line["id"], line["comparator"])]
        expected = csv_score(row)
        assert (float(line["score"]) if line["score"] else None) == expected, line
        assert line["comparison_logs"] == row["reason"] and line["job_id"] == run_id
    failing = {line["comparator"]: line for line in lines if line["id"] == "fahrenheit_paris"}
    assert failing["trajectory_matcher"]["score"] == "50.0" and failing["goal_completion"]["score"] == "0.0"

    conversations = {r["task_id"]: r for r in warehouse.query("SELECT * FROM conversations WHERE run_id = ?", [run_id])}
    evals = {line["eval_id"]: line for line in csv.DictReader((csv_folder / "evals.csv").open(encoding="utf-8"))}
    for task_id, line in evals.items():
        held = conversations[task_id]
        assert (int(line["turns"]), line["ended"], int(line["simulated_user_tokens_in"])) == (
            held["turns"],
            held["ended"],
            held["user_tokens_in"],
        )
        assert line["passed"] == str(episodes[task_id]["passed"])
    assert (
        conversations["clarify_city"]["generated_turns"] == 2 and conversations["clarify_city"]["ended"] == "terminated"
    )

    summary = list(csv.DictReader((csv_folder / "summary.csv").open()))
    # EvalBench's analyzer: the run config's scorers in order, behavioral_metrics only logged,
    # the executable line last; turn_count's sum makes the counts a float column.
    assert [
        (line["metric_name"], line["metric_score"], line["correct_results_count"], line["total_results_count"])
        for line in summary
    ] == [
        ("trajectory_matcher", "100.0", "3.0", "4"),
        ("turn_count", summary[1]["metric_score"], summary[1]["correct_results_count"], "4"),
        ("goal_completion", "100.0", summary[2]["correct_results_count"], "4"),
        ("executable", "1.0", "4.0", "4"),
    ]
    turns = [int(line["turns"]) for line in evals.values()]
    assert float(summary[1]["correct_results_count"]) == sum(turns)
    assert float(summary[1]["metric_score"]) == sum(turns) / 4
