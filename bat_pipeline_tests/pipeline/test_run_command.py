"""`bat-pipeline run` on a trimmed copy of the example (every model at once, each agent on
its own port), and a second evaluation of the same copy with `--executor multiprocess`: the
three partitions' runs at once, every step in a process of its own, all of them writing
to the one warehouse (history and trend, issue 6; the other executors, issue 18: the same
verdicts as the in-process run, no step in a run's process). Runs that fail are in
test_run_failures.py; the Dask executors in test_step_executors and test_dask_cluster.

The copy names a project scorer in its eval.yaml (answer_length.py, one file registered with
`@check`; issue 13's "done when"): its rows must reach the stored episodes, metrics.json,
the UI metadata of eval_metrics and the warehouse's `episode_scores` with nothing else
changed."""

from __future__ import annotations

import json
import re

import pytest

from bat_pipeline_tests.support.example_agent import COMPETENT, FEW_TASKS, MODEL_KEYS, SLOPPY, run
from bat_pipeline_tests.support.paths import BAT_PIPELINE
from bat_pipeline_tests.support.processes import leftover_agents

pytestmark = pytest.mark.slow(seconds=45)

PROJECT_SCORER = "bat_pipeline_tests.pipeline.answer_length"
LOCK_TROUBLE = re.compile(r"WarehouseBusyError|could not set lock|conflicting lock", re.IGNORECASE)


@pytest.fixture(scope="module")
def evaluated(workspace_factory):
    """The first evaluation: `bat-pipeline run --timings` over the three models."""
    ws = workspace_factory("run_command", evaluation={"scorers": [PROJECT_SCORER]})
    config_before = (ws.agent / "config.yaml").read_bytes()
    result = ws.bat_pipeline_run("--timings")
    return ws, result, ws.only_run_dir().name, config_before


@pytest.fixture(scope="module")
def multiprocess(evaluated):
    """The second evaluation of the same copy: every partition at once, each step in its
    own process (the multiprocess executor)."""
    ws, _, first, _ = evaluated
    result = ws.bat_pipeline_run("--executor", "multiprocess")
    (second,) = [p.name for p in (ws.root / "runs").iterdir() if p.name != first]
    return ws, result, second


def test_run_evaluates_every_model_at_once(evaluated):
    ws, result, run_id, config_before = evaluated
    assert result.returncode == 0, result.stdout[-4000:]
    header = next((line for line in result.stdout.splitlines() if line.startswith("model ")), "")
    assert "pass@k" in header and "judge" in header, result.stdout
    table = result.stdout.split(header, 1)[1].splitlines()
    for key in MODEL_KEYS:
        assert any(line.startswith(key) for line in table), (key, result.stdout)
    # Each pass rate with its interval: 3 tasks, none passed: Wilson's [0, 56 %].
    assert "95% interval" in header
    assert next(line for line in table if line.startswith(SLOPPY)).split()[1:3] == ["0%", "0%–56%"], table

    urls = {}
    for key in MODEL_KEYS:
        episodes = [json.loads(p.read_text()) for p in (ws.root / "runs" / run_id / key / "episodes").glob("*.json")]
        assert len(episodes) == len(FEW_TASKS), key
        urls[key] = {e["aux"]["agent_url"] for e in episodes}
        assert len(urls[key]) == 1, urls
    assert len({url for found in urls.values() for url in found}) == len(MODEL_KEYS), urls

    counts = ws.pass_counts(run_id)
    for key in COMPETENT:
        assert counts[key] == dict.fromkeys(FEW_TASKS, 1), counts
    assert counts[SLOPPY] == dict.fromkeys(FEW_TASKS, 0), counts
    # Failures first (issue 34): the run ends listing each failing task, with why.
    failing = result.stdout.split(f"failing tasks ({len(FEW_TASKS)}):\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert sorted(line.split()[1] for line in failing) == sorted(FEW_TASKS), result.stdout[-3000:]
    assert all(line.startswith(f"  {SLOPPY} ") and "(1 of 1 attempts): " in line for line in failing), failing

    assert (ws.agent / "config.yaml").read_bytes() == config_before
    assert leftover_agents(ws.agent, str(ws.root)) == []


def test_multiprocess_run_gives_the_in_process_verdicts_each_step_in_its_own_process(evaluated, multiprocess):
    import dagster as dg

    from bat_pipeline.assets.common import RUN_ID_TAG

    first = evaluated[2]
    ws, result, run_id = multiprocess
    assert result.returncode == 0, result.stdout[-4000:]
    assert not LOCK_TROUBLE.search(result.stdout)
    verdicts = ws.warehouse.query("SELECT run_id, model_key, task_id, passed FROM episodes")
    by_run = {
        run: {(r["model_key"], r["task_id"]): r["passed"] for r in verdicts if r["run_id"] == run}
        for run in (first, run_id)
    }
    assert by_run[run_id] == by_run[first] and len(by_run[first]) == len(MODEL_KEYS) * len(FEW_TASKS), by_run
    counts = ws.pass_counts(run_id)
    assert {key: sum(tasks.values()) for key, tasks in counts.items()} == {
        "openai-competent": 3,
        "anthropic-competent": 3,
        "openai-sloppy": 0,
    }
    assert {r["model_key"] for r in ws.warehouse.model_summary(run_id)} == set(MODEL_KEYS)

    with dg.DagsterInstance.from_config(str(ws.dagster_home)) as instance:
        records = [r for r in instance.get_run_records() if r.dagster_run.tags.get(RUN_ID_TAG) == run_id]
        assert {r.dagster_run.tags["dagster/partition"] for r in records} == set(MODEL_KEYS)
        all_steps: set[int] = set()
        for record in records:
            dagster_run = record.dagster_run
            assert record.dagster_run.is_success, dagster_run.tags
            logs = instance.all_logs(dagster_run.run_id)
            started = _events(logs, "STEP_START")
            run_process = {pid for _, pid in _events(logs, "PIPELINE_START")}
            steps = {pid for _, pid in started}
            # Six steps, each in a process of its own, none of them the run's.
            assert len(started) == len(steps) == 6 and len(run_process) == 1 and not steps & run_process, started
            all_steps |= steps
            workers = {step for step, _ in _events(logs, "STEP_WORKER_STARTED")}
            assert {"weather_agent__agent_episodes", "weather_agent__eval_metrics"} <= workers, dagster_run.tags
            for r in logs:
                text = r.message or ""
                if r.dagster_event and r.dagster_event.is_step_failure:
                    text += r.dagster_event.step_failure_data.error.to_string()
                assert not LOCK_TROUBLE.search(text), (dagster_run.tags, text)
        assert len(all_steps) == 6 * len(MODEL_KEYS)
    assert leftover_agents(ws.agent, str(ws.root)) == []


def _events(logs, event_type: str) -> set[tuple[str | None, int | None]]:
    """(step key, process id) of a run's events of one type."""
    return {
        (r.step_key, r.dagster_event.pid)
        for r in logs
        if r.dagster_event and r.dagster_event.event_type_value == event_type
    }


def test_two_runs_make_a_history_and_a_trend(evaluated, multiprocess):
    ws, _, first, _ = evaluated
    second = multiprocess[2]
    trend = ws.warehouse.trend()
    assert {(r["model_key"], r["run_id"]) for r in trend} == {
        (key, run_id) for key in MODEL_KEYS for run_id in (first, second)
    }
    assert {(r["model_key"], r["run_index"]) for r in trend} == {(k, i) for k in MODEL_KEYS for i in (1, 2)}
    chart_trend = ws.warehouse.chart_data().trend
    assert {(r["model_key"], r["run_id"]) for r in chart_trend} == {(r["model_key"], r["run_id"]) for r in trend}
    charts = {p.name for p in (ws.root / "charts" / "weather_agent").glob("*.png")}
    assert {"pass_rate.png", "pass_rate_trend.png", "task_pass_rate.png"} <= charts, charts


def compare(ws, *args: str):
    return run([str(BAT_PIPELINE), "compare", *args], ws.env)


def test_compare_tells_a_better_model_from_noise(evaluated, multiprocess):
    """`bat-pipeline compare` on the warehouse of the two runs (issue 33): the sloppy model
    against the competent one is significantly worse (exit 1), the other way round better
    (exit 0), and the same deterministic model in two runs shows no difference."""
    ws, _, first, _ = evaluated
    GOOD = "openai-competent"
    second = multiprocess[2]
    worse = compare(ws, GOOD, SLOPPY)
    assert worse.returncode == 1, worse.stdout[-3000:]
    assert f"base       {second}/{GOOD}" in worse.stdout  # a partition alone: its newest run
    assert "tasks compared: 3" in worse.stdout and "verdict: worse" in worse.stdout
    for task in FEW_TASKS:
        assert re.search(rf"^{task}\s+1\.00\s+0\.00\s+-1\.00  broken$", worse.stdout, re.MULTILINE), worse.stdout

    better = compare(ws, SLOPPY, GOOD, "--format", "json")
    assert better.returncode == 0, better.stdout[-3000:]
    result = json.loads(better.stdout)
    assert result["verdict"] == "better" and result["significant"] is True
    assert result["tasks_compared"] == 3 and result["base"]["partition"] == SLOPPY
    rate = result["pass_rate"]
    assert (rate["base"], rate["candidate"], rate["difference"]) == (0.0, 1.0, 1.0)
    # Every task flipped: Wilson's bound for 3 of 3, 3/(3 + 1.96²), not a zero-width interval.
    assert abs(rate["ci_low"] - 3 / (3 + 1.959964**2)) < 1e-4 and rate["ci_high"] == 1.0
    assert sorted(t["task_id"] for t in result["per_task"]) == sorted(FEW_TASKS)
    assert {f["change"] for f in result["flipped"]} == {"fixed"}
    assert "answer_length" in result["scores"], result["scores"].keys()

    same = compare(ws, f"{first}/{GOOD}", f"{second[:20]}/{GOOD}", "--format", "json")
    assert same.returncode == 0, same.stdout[-3000:]
    same_result = json.loads(same.stdout)
    assert same_result["verdict"] == "no detectable difference" and not same_result["significant"]
    assert same_result["pass_rate"]["difference"] == 0.0
    assert same_result["base"]["run_id"] == first and same_result["candidate"]["run_id"] == second
    assert same_result["not_like_for_like"] == []  # same dataset, config and judge

    unknown = compare(ws, GOOD, "no-such-model")
    assert unknown.returncode == 2 and "no run holds partition 'no-such-model'" in unknown.stdout
    assert "Traceback" not in unknown.stdout


def answer_length_rows(rows: list[dict]) -> list[dict]:
    return [r for r in rows if r["scorer"] == "answer_length"]


def test_a_project_scorers_rows_are_in_the_episodes_and_metrics_json(evaluated):
    ws, _, run_id, _ = evaluated
    for key in MODEL_KEYS:
        partition = ws.root / "runs" / run_id / key
        for path in (partition / "episodes").glob("*.json"):
            episode = json.loads(path.read_text())
            (row,) = answer_length_rows(episode["scores"])
            assert (row["criterion"], row["raw"], row["gating"]) == ("characters", len(episode["final_output"]), False)
            assert [r["scorer"] for r in episode["scores"]][:2] == ["status", "output"]
            assert "characters" not in episode["verdict"]["reason"]
        metrics = json.loads((partition / "metrics.json").read_text())
        assert all(len(answer_length_rows(row["scores"])) == 1 for row in metrics["per_episode"])
        stats = metrics["summary"]["scorers"]["answer_length"]["characters"]
        assert stats["count"] == stats["passed"] + stats["failed"] == len(FEW_TASKS), key
        assert 0 <= stats["min"] <= stats["avg"] <= stats["max"] <= 1
    competent = json.loads((ws.root / "runs" / run_id / COMPETENT[0] / "metrics.json").read_text())
    assert competent["summary"]["scorers"]["status"]["status"]["passed"] == len(FEW_TASKS)


def test_a_project_scorers_rows_are_in_the_metadata_of_eval_metrics(evaluated):
    import dagster as dg

    ws = evaluated[0]
    with dg.DagsterInstance.from_config(str(ws.dagster_home)) as instance:
        for key in MODEL_KEYS:
            records = instance.fetch_materializations(
                dg.AssetRecordsFilter(asset_key=dg.AssetKey(["weather_agent", "eval_metrics"]), asset_partitions=[key]),
                limit=1,
            ).records
            metadata = records[0].asset_materialization.metadata
            rows = [record.data for record in metadata["scores"].records]
            (row,) = answer_length_rows(rows)
            assert (row["criterion"], row["count"]) == ("characters", len(FEW_TASKS)), key
            assert 0 <= row["mean"] <= 1 and row["passed"] + row["failed"] == len(FEW_TASKS)
            assert {"status", "output"} <= {r["scorer"] for r in rows}
            # Intervals beside the means (issue 33): each a pair around its figure.
            assert row["ci_low"] <= row["mean"] <= row["ci_high"], row
            low, high = metadata["pass_rate_ci"].value
            assert low <= metadata["pass_rate"].value <= high and high - low > 0, (key, low, high)
            assert metadata["confidence"].value == 0.95
            assert metadata["flaky_task_count"].value == 0  # one attempt per task: nothing to disagree
            # Numbers rounded for reading (issue 34): 1 decimal from 100 up, else 4.
            numbers = {k: v.value for k, v in metadata.items() if isinstance(v.value, float)}
            assert numbers and all(v == round(v, 1 if abs(v) >= 100 else 4) for v in numbers.values()), numbers


def test_a_project_scorers_rows_are_in_the_warehouse(evaluated):
    ws, _, run_id, _ = evaluated
    for key in MODEL_KEYS:
        rows = ws.warehouse.query(
            "SELECT scorer, criterion, value, passed FROM episode_scores WHERE run_id = ? AND model_key = ?",
            [run_id, key],
        )
        found = answer_length_rows(rows)
        assert len(found) == len(FEW_TASKS), (key, rows)
        assert all(r["criterion"] == "characters" and 0 <= r["value"] <= 1 for r in found)


def test_every_phase_of_the_run_is_timed_everywhere(evaluated):
    from bat_pipeline.engine.contracts.timings import PHASES

    ws, result, run_id, _ = evaluated
    steps = [phase for phase in PHASES if phase != "charts"]
    run = json.loads((ws.root / "runs" / run_id / "timings.json").read_text())
    assert set(run["partitions"]) == set(MODEL_KEYS) and run["charts"] > 0 and run["total"] > run["charts"]
    for key in MODEL_KEYS:
        partition = ws.root / "runs" / run_id / key
        timings = json.loads((partition / "timings.json").read_text())
        assert set(timings) == set(steps) and all(s >= 0 for s in timings.values()), timings
        assert timings["conversations"] > 0 and timings["agent_start"] > 0
        metrics = json.loads((partition / "metrics.json").read_text())
        assert set(metrics["timings"]) == set(steps) - {"metrics"}
        # The log says the phase's seconds to 2 decimals, timings.json to 3: the same figure.
        logged = re.search(r"phase conversations: ([0-9.]+)s", (ws.root / "logs" / f"{run_id}-{key}.log").read_text())
        assert logged and abs(float(logged.group(1)) - timings["conversations"]) <= 0.006, (logged, timings)
    stored = ws.warehouse.query("SELECT model_key, phase FROM phase_timings WHERE run_id = ?", [run_id])
    assert {(r["model_key"], r["phase"]) for r in stored} == {(key, phase) for key in MODEL_KEYS for phase in steps} | {
        ("", "charts")
    }
    header = next(line for line in result.stdout.splitlines() if line.startswith("model ") and "startup" in line)
    assert all(phase in header for phase in steps)
    assert f"charts {run['charts']:.2f}s · whole run" in result.stdout
