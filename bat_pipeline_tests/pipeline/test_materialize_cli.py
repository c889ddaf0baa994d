"""`dagster asset materialize` as documented (issue 4), on a copy with a gate: the competent
model's partition materialises every asset and leaves its files and warehouse rows; the
sloppy model's partition fails its blocking gate, the command exits non-zero naming it,
and the check evaluation is in the instance for the UI. Then the competent partition runs
again on a dataset it now fails: the noise-aware regression gate (a paired interval against
its previous run) fails it, with the drop and its interval in the check's metadata."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from bat_pipeline_tests.support.dagster_runs import materialize_command
from bat_pipeline_tests.support.example_agent import FEW_TASKS, SLOPPY
from bat_pipeline_tests.support.processes import leftover_agents

pytestmark = pytest.mark.slow(seconds=8)

GOOD = "openai-competent"
GATE = {"min_pass_rate": 0.9, "max_regression": 0.2}


def materialize(partition: str, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        materialize_command(partition),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
    )


@pytest.fixture(scope="module")
def runs(workspace_factory):
    """Both partitions materialised at once, by two `dagster asset materialize` processes."""
    import dagster as dg

    ws = workspace_factory("materialize_cli", evaluation={"gate": GATE})
    # Two processes creating a new instance's SQLite storage at once both stamp its schema
    # version (Alembic), and every later open fails with "more than one head": create it first.
    with dg.DagsterInstance.from_config(str(ws.dagster_home)):
        pass
    config_before = (ws.agent / "config.yaml").read_bytes()
    processes = {key: materialize(key, ws.env) for key in (GOOD, SLOPPY)}
    outputs = {}
    for key, process in processes.items():
        out, _ = process.communicate(timeout=240)
        outputs[key] = (process.returncode, out)
    return ws, outputs, config_before


def only_dir(pattern: str, base: Path) -> Path:
    found = sorted(base.glob(pattern))
    assert len(found) == 1, f"{pattern} under {base}: {found}"
    return found[0]


def test_documented_command_materialises_a_partition(runs):
    ws, outputs, config_before = runs
    code, out = outputs[GOOD]
    assert code == 0, out[-4000:]

    partition = only_dir(f"runs/*/{GOOD}", ws.root)
    episodes = sorted(p.name for p in (partition / "episodes").glob("*.json"))
    assert episodes == sorted(f"{task}__try0.json" for task in FEW_TASKS)
    for name in (
        "partition.json",
        "trajectories.json",
        "verdicts.json",
        "judge.json",
        "metrics.json",
        "summary.json",
        "agent.log",
    ):
        assert (partition / name).is_file(), name

    reference = only_dir("*/demo_openai-competent", ws.agent / "eval" / "output")
    assert sorted(p.name for p in (reference / "episodes").glob("*.json")) == episodes
    for name in ("summary.json", "metrics.json", "agent.jsonl", "agent.log"):
        assert (reference / name).is_file(), name
    # eval_charts was selected too: charts from the warehouse, and their reference copies.
    assert (ws.root / "charts" / "weather_agent" / "pass_rate.png").is_file()
    assert (ws.agent / "eval" / "output" / "charts" / "pass_rate.png").is_file()

    rows = ws.warehouse.query("SELECT task_id, passed FROM episodes WHERE model_key = ?", [GOOD])
    assert sorted((r["task_id"], r["passed"]) for r in rows) == sorted((t, True) for t in FEW_TASKS)
    assert (ws.agent / "config.yaml").read_bytes() == config_before
    assert leftover_agents(ws.agent, str(ws.root)) == []


def test_failing_gate_fails_the_command_and_is_recorded(runs):
    import dagster as dg

    ws, outputs, config_before = runs
    code, out = outputs[SLOPPY]
    assert code != 0, out[-4000:]
    assert "min_pass_rate" in out
    gate_line = next((line for line in out.splitlines() if "gate min_pass_rate: FAILED" in line), "")
    assert SLOPPY in gate_line and "0.00" in gate_line and "0.90" in gate_line, out[-4000:]
    # Its rows are in the warehouse all the same: the gate judges them, it does not drop them.
    assert ws.warehouse.query("SELECT count(*) AS n FROM episodes WHERE model_key = ?", [SLOPPY])[0]["n"] == len(
        FEW_TASKS
    )

    with dg.DagsterInstance.from_config(str(ws.dagster_home)) as instance:
        key = dg.AssetCheckKey(dg.AssetKey(["weather_agent", "eval_metrics"]), "min_pass_rate")
        records = instance.event_log_storage.get_asset_check_execution_history(key, limit=10)
        by_partition = {}
        for record in records:
            evaluation = record.event.dagster_event.event_specific_data
            by_partition.setdefault(evaluation.partition, (evaluation.passed, evaluation.metadata["message"].value))
    assert by_partition[SLOPPY][0] is False
    assert "0.90" in by_partition[SLOPPY][1]
    assert by_partition[GOOD][0] is True
    assert (ws.agent / "config.yaml").read_bytes() == config_before
    assert leftover_agents(ws.agent, str(ws.root)) == []


def test_a_significant_regression_against_the_previous_run_fails_the_gate(runs):
    import dagster as dg

    ws, outputs, _ = runs
    assert outputs[GOOD][0] == 0
    # The same tasks, now with an answer no model gives: every task flips from pass to fail.
    dataset = ws.agent / "eval" / "input" / "tasks.json"
    tasks = json.loads(dataset.read_text(encoding="utf-8"))
    for task in tasks:
        task["expected"]["output_must_contain"] = ["an answer nobody gives"]
    dataset.write_text(json.dumps(tasks), encoding="utf-8")
    process = materialize(GOOD, ws.env)
    out, _ = process.communicate(timeout=240)
    assert process.returncode != 0, out[-4000:]
    gate_line = next((line for line in out.splitlines() if "gate max_regression: FAILED" in line), "")
    assert "a drop of 1.00 > max_regression 0.20, significant" in gate_line, out[-4000:]
    assert "on 3 common tasks" in gate_line

    with dg.DagsterInstance.from_config(str(ws.dagster_home)) as instance:
        key = dg.AssetCheckKey(dg.AssetKey(["weather_agent", "eval_metrics"]), "max_regression")
        records = instance.event_log_storage.get_asset_check_execution_history(key, limit=10)
        evaluations = [r.event.dagster_event.event_specific_data for r in records]
    ours = [e for e in evaluations if e.partition == GOOD]
    newest = ours[0]  # newest first; the first run of the partition had no previous run
    assert newest.passed is False and len(ours) == 2 and ours[1].passed is True
    figures = {name: value.value for name, value in newest.metadata.items()}
    assert figures["drop"] == 1.0 and figures["max_regression"] == 0.2 and figures["confidence"] == 0.95
    assert figures["tasks_compared"] == 3
    # Wilson's bound for 3 of 3 tasks broken: the drop is at least 3/(3 + 1.96²).
    low, high = figures["drop_ci"]
    assert abs(low - 3 / (3 + 1.959964**2)) < 1e-4 and high == 1.0
    previous_runs = {p.parent.name for p in ws.root.glob(f"runs/*/{GOOD}")}
    assert figures["previous_run_id"] in previous_runs and len(previous_runs) == 2
