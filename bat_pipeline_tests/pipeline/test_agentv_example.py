"""The AgentV example end to end with real processes (issue 15): `bat-pipeline run` on
the bundled screening file, and `dagster asset materialize` on a copy whose targets and
graders go wrong in each way — pass, fail, missing record, grader error, failed
healthcheck — each outcome in results.jsonl, index.jsonl and the warehouse."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from bat_pipeline.locations import BUNDLED_AGENT_DIR
from bat_pipeline_tests.support.dagster_runs import materialize_command
from bat_pipeline_tests.support.example_agent import run
from bat_pipeline_tests.support.paths import VENV_BIN, dagster_home

pytestmark = pytest.mark.slow(seconds=15)

EXAMPLE = BUNDLED_AGENT_DIR.parent / "screening"


def environment(root: Path, eval_file: Path) -> dict[str, str]:
    home = dagster_home(root / "dagster_home")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BAT_")}
    env.update(
        {
            "BAT_AGENT_DIR": str(eval_file),
            "BAT_PIPELINE_HOME": str(root),
            "DAGSTER_HOME": str(home),
            "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        }
    )
    return env


def lines(path: Path) -> dict[str, dict]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {row["test_id"]: row for row in rows}


def warehouse_rows(root: Path, sql: str) -> list[tuple]:
    import duckdb

    with duckdb.connect(str(root / "warehouse.duckdb"), read_only=True) as db:
        return db.execute(sql).fetchall()


def test_bat_pipeline_run_on_the_example(tmp_path):
    root, output = tmp_path / "home", tmp_path / "out"
    eval_file = EXAMPLE / "screening.yaml"
    # `make demo` may have left its results beside the example; this run adds none.
    left_before = sorted((EXAMPLE / ".agentv").rglob("*"))
    done = run(
        [str(VENV_BIN / "bat-pipeline"), "run", str(eval_file), "--output", str(output)], environment(root, eval_file)
    )
    assert done.returncode == 0, done.stdout[-4000:]
    assert "batch_cli: 2 passed, 1 failed, 0 errors" in done.stdout
    [partition] = output.glob("*/batch_cli")
    results = lines(partition / "results.jsonl")
    assert {k: (r["pass"], r["error"]) for k, r in results.items()} == {
        "case-001": (True, None),
        "case-002": (True, None),
        "case-003": (False, None),
    }
    wrong = results["case-003"]
    assert wrong["score"] == 0.0 and wrong["target"] == "batch_cli" and wrong["attempt"] == 0
    assert wrong["checks"] == [
        {
            "name": "decision-check",
            "type": "script",
            "pass": False,
            "score": 0.0,
            "reason": "decision differs: expected BLOCK, got CLEAR",
        }
    ]
    index = lines(partition / "index.jsonl")
    assert [index[k]["execution_status"] for k in sorted(index)] == ["ok", "ok", "quality_failure"]
    # The long score table and the history, as for an agent.
    assert sorted(
        warehouse_rows(
            root,
            "SELECT e.task_id, e.passed FROM episodes e JOIN runs r USING (run_id, model_key) "
            "WHERE r.agent_id = 'screening'",
        )
    ) == [("case-001", True), ("case-002", True), ("case-003", False)]
    scorers = {r[0] for r in warehouse_rows(root, "SELECT DISTINCT scorer FROM episode_scores")}
    assert {"script", "text", "tool_trajectory", "agentv"} <= scorers
    # The batch records' tool calls, checked by the trajectory graders.
    screened = {c["name"]: c for c in results["case-001"]["checks"]}["screened"]
    assert screened["type"] == "trajectory" and screened["pass"] is True and screened["score"] == 1.0
    assert {c["name"]: c["pass"] for c in results["case-002"]["checks"]}["one-check"] is True
    # The LLM graders, graded by the scripted judge, weigh into the final verdict.
    rubric = {c["name"]: c for c in results["case-001"]["checks"]}["llm-rubric"]
    assert rubric["type"] == "llm-rubric" and rubric["pass"] is True and rubric["score"] == 1.0
    assert "criteria terms in the answer: ['CLEAR']" in rubric["reason"]
    graders = {s["name"]: s for s in index["case-002"]["scores"]}
    assert graders["explained"]["weight"] == 2 and graders["explained"]["verdict"] == "pass"
    judged = warehouse_rows(
        root, "SELECT task_id, criterion, value, judge FROM episode_scores WHERE scorer = 'llm_grader' ORDER BY task_id"
    )
    assert judged == [("case-001", "llm-rubric", 1.0, "openai:judge"), ("case-002", "explained", 1.0, "openai:judge")]
    assert not warehouse_rows(root, "SELECT * FROM episode_scores WHERE scorer IN ('relevance', 'task_completion')")
    # Nothing written into the package: --output took the result files.
    assert sorted((EXAMPLE / ".agentv").rglob("*")) == left_before


def broken_copy(dest: Path) -> Path:
    """The example with a test whose grader crashes, one that only its LLM grader fails,
    and two targets from
    agentv-providers.yaml: the batch runner leaving case-002 out, and one whose
    healthcheck fails."""
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns(".agentv", "__pycache__"))
    eval_file = dest / "screening.yaml"
    data = yaml.safe_load(eval_file.read_text(encoding="utf-8"))
    runner = data.pop("providers")["batch_cli"]
    data["providers"] = ["batch_cli", "unhealthy"]
    crash = {**data["tests"][0], "id": "case-004"}
    crash["assert"] = [
        {"name": "crashing", "type": "script", "command": ["python3", "-c", "import sys; sys.exit('grader blew up')"]}
    ]
    data["tests"].append(crash)
    judged_wrong = {**data["tests"][0], "id": "case-005", "assert": [{"type": "is_json"}, 'The decision is "BLOCK".']}
    data["tests"].append(judged_wrong)
    eval_file.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    (dest / "agentv-providers.yaml").write_text(
        yaml.safe_dump(
            {
                "providers": {
                    "batch_cli": {**runner, "env": {"SCREENING_SKIP": "case-002"}},
                    "unhealthy": {**runner, "env": {"SCREENING_UNHEALTHY": "1"}},
                }
            }
        ),
        encoding="utf-8",
    )
    return eval_file


@pytest.fixture(scope="module")
def materialized(tmp_path_factory):
    import dagster as dg

    base = tmp_path_factory.mktemp("agentv_materialize")
    eval_file = broken_copy(base / "screening")
    root = base / "home"
    env = environment(root, eval_file)
    with dg.DagsterInstance.from_config(env["DAGSTER_HOME"]):
        pass
    done = {}
    for key in ("batch_cli", "unhealthy"):
        done[key] = run(
            materialize_command(key),
            env,
        )
    return root, done


def test_materialize_grades_each_outcome(materialized):
    root, done = materialized
    assert done["batch_cli"].returncode == 0, done["batch_cli"].stdout[-4000:]
    [partition] = root.glob("runs/*/batch_cli")
    results = lines(partition / "results.jsonl")
    assert (results["case-001"]["pass"], results["case-001"]["error"]) == (True, None)
    assert (results["case-003"]["pass"], results["case-003"]["error"]) == (False, None)
    missing = results["case-002"]
    assert missing["pass"] is False and missing["error"].startswith("no record for this test in batch_output_try0")
    broken = results["case-004"]
    assert broken["pass"] is False and broken["score"] is None
    assert "crashing: exited with status 1: grader blew up" in broken["error"]
    # The LLM grader fails the test after the judge, though its other grader passed.
    judged = results["case-005"]
    assert (judged["pass"], judged["score"], judged["error"]) == (False, 0.0, None)
    assert "required grader failed: llm-rubric" in judged["reason"]
    assert {c["name"]: c["score"] for c in judged["checks"]} == {"is-json": 1.0, "llm-rubric": 0.0}
    index = lines(partition / "index.jsonl")
    assert {k: v["execution_status"] for k, v in index.items()} == {
        "case-001": "ok",
        "case-002": "execution_error",
        "case-003": "quality_failure",
        "case-004": "execution_error",
        "case-005": "quality_failure",
    }
    # The target's tool calls are the episode's trajectory.
    episode = json.loads((partition / "episodes" / "case-001__try0.json").read_text(encoding="utf-8"))
    assert [c["name"] for c in episode["trace"]["tool_calls"]] == ["screening_check"]
    assert episode["trace"]["trajectory"]["turns"][0]["steps"][0]["args"] == {"amount": 5000}


def test_failed_healthcheck_fails_the_partition_with_every_test_an_error(materialized):
    root, done = materialized
    out = done["unhealthy"].stdout
    assert done["unhealthy"].returncode != 0
    assert "healthcheck of target 'unhealthy' failed" in out and "screening list unavailable" in out
    [partition] = root.glob("runs/*/unhealthy")
    results = lines(partition / "results.jsonl")
    assert sorted(results) == ["case-001", "case-002", "case-003", "case-004", "case-005"]
    assert all(not r["pass"] and "screening list unavailable" in r["error"] for r in results.values())
    episode = json.loads((partition / "episodes" / "case-001__try0.json").read_text(encoding="utf-8"))
    assert "screening list unavailable" in episode["aux"]["target_output"]


def test_an_llm_grader_without_a_judge_is_refused_before_anything_runs(tmp_path):
    dest = tmp_path / "screening"
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns(".agentv", "__pycache__"))
    eval_file = dest / "screening.yaml"
    data = yaml.safe_load(eval_file.read_text(encoding="utf-8"))
    del data["judge"]
    eval_file.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    root = tmp_path / "home"
    done = run([str(VENV_BIN / "bat-pipeline"), "run", str(eval_file)], environment(root, eval_file))
    assert done.returncode == 2, done.stdout[-2000:]
    assert "grader 'llm-rubric' needs a judge model" in done.stdout and "test 'case-001'" in done.stdout
    assert not (root / "runs").exists()
