"""A storage root on an object store (issue 18): `BAT_PIPELINE_HOME=s3://bucket/prefix` on a
real S3 server (moto's, a process on 127.0.0.1), reached through s3fs as AWS would be.

`bat-pipeline run` of the example with two models on the multiprocess executor puts every
file a later step reads on the store and gives the example's verdicts; the warehouse stays
a local file. Then, as on a machine that has never seen the run (a new mirror folder, a new
Dagster home), a later step materialised alone and `bat-pipeline report` work from what
the store holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bat_pipeline_tests.support.example_agent import COMPETENT, FEW_TASKS, SLOPPY, run
from bat_pipeline_tests.support.paths import BAT_PIPELINE, VENV_BIN, dagster_home
from bat_pipeline_tests.support.processes import leftover_agents
from bat_pipeline_tests.support.s3_server import s3_server

MODELS = (COMPETENT[0], SLOPPY)
BUCKET = "results"
PREFIX = "team/evals"
CHAIN = ("agent_episodes", "span_trajectories", "episode_verdicts", "judge_scores", "eval_metrics")
pytestmark = pytest.mark.slow(seconds=25)


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    with s3_server(tmp_path_factory.mktemp("moto") / "moto.log") as server:
        server.bucket(BUCKET)
        yield server


def _fresh_machine(env: dict[str, str], tmp: Path) -> dict[str, str]:
    """`env` as on another machine: an empty mirror folder and a Dagster home of its own."""
    home = dagster_home(tmp / "dagster_home")
    return {**env, "BAT_PIPELINE_CACHE": str(tmp / "mirror"), "DAGSTER_HOME": str(home)}


@pytest.fixture(scope="module")
def stored_run(workspace_factory, s3, tmp_path_factory):
    """The example's two models run with the root on the S3 server, a step per process."""
    ws = workspace_factory("object_store_root", models=MODELS)
    env = {**ws.env, **s3.env, "BAT_PIPELINE_HOME": f"s3://{BUCKET}/{PREFIX}"}
    env = _fresh_machine(env, tmp_path_factory.mktemp("run_machine"))
    result = run([str(BAT_PIPELINE), "run", str(ws.agent), "--executor", "multiprocess"], env, timeout_s=280)
    assert result.returncode == 0, result.stdout[-4000:]
    (run_id,) = s3.filesystem().ls(f"{BUCKET}/{PREFIX}/runs", detail=False)
    return ws, env, result, run_id.rsplit("/", 1)[-1]


def _objects(s3, under: str) -> set[str]:
    """The keys under `<bucket>/<prefix>/<under>`, relative to it."""
    base = f"{BUCKET}/{PREFIX}/{under}/"
    return {key[len(base) :] for key in s3.filesystem().find(base)}


def _stored_verdicts(s3, run_id: str) -> dict[tuple[str, str], bool]:
    """(model, task) → passed, from the episode files on the store."""
    fs = s3.filesystem()
    verdicts = {}
    for model in MODELS:
        for key in fs.find(f"{BUCKET}/{PREFIX}/runs/{run_id}/{model}/episodes/"):
            episode = json.loads(fs.cat_file(key))
            verdicts[(model, episode["task_id"])] = episode["verdict"]["passed"]
    return verdicts


EXPECTED = {(model, task): model in COMPETENT for model in MODELS for task in FEW_TASKS}
"""The example's verdicts of the trimmed tasks: the competent persona passes them, the sloppy one fails."""


def test_every_file_a_later_step_reads_is_on_the_store_with_the_examples_verdicts(stored_run, s3):
    ws, env, result, run_id = stored_run
    for model in MODELS:
        stored = _objects(s3, f"runs/{run_id}/{model}")
        record = json.loads(s3.filesystem().cat_file(f"{BUCKET}/{PREFIX}/runs/{run_id}/{model}/partition.json"))
        assert record["dir"] == f"runs/{run_id}/{model}"
        assert len(record["episode_files"]) == len(FEW_TASKS), record
        assert {f"episodes/{name}" for name in record["episode_files"]} <= stored, stored
        # The partition's own span files (the example's sub-agent writes its own in the agent folder).
        spans = [name for name in record["span_files"] if not Path(name).is_absolute()]
        assert spans and set(spans) <= stored, (record["span_files"], stored)
        assert {"partition.json", "trajectories.json", "verdicts.json", "metrics.json", "agent.log"} <= stored
    pointers = _objects(s3, "handoff/weather_agent")
    assert {f"{asset}/{model}.json" for asset in CHAIN for model in MODELS} <= pointers, pointers
    assert "task_specs/__all__.pickle" in pointers
    assert _objects(s3, "judge_cache") and _objects(s3, "charts/weather_agent")
    assert _stored_verdicts(s3, run_id) == EXPECTED
    # The warehouse is this machine's: in the mirror, never on the store.
    mirror = Path(env["BAT_PIPELINE_CACHE"]) / "s3" / BUCKET / PREFIX
    assert (mirror / "warehouse.duckdb").is_file()
    assert "warehouse.duckdb" not in {key.rsplit("/", 1)[-1] for key in s3.filesystem().find(BUCKET)}
    assert f"results: s3://{BUCKET}/{PREFIX}/runs" in result.stdout
    assert leftover_agents(ws.agent, ws.llm_url) == []


def test_a_step_on_a_machine_with_an_empty_mirror_reads_what_the_store_holds(stored_run, s3, tmp_path):
    _, env, _, run_id = stored_run
    fs = s3.filesystem()
    verdicts_file = f"{BUCKET}/{PREFIX}/runs/{run_id}/{SLOPPY}/verdicts.json"
    before = json.loads(fs.cat_file(verdicts_file))
    fs.rm(verdicts_file)  # the step must write it again, from the episodes and spans it fetches
    elsewhere = _fresh_machine(env, tmp_path)
    select = "weather_agent/episode_verdicts"
    command = [str(VENV_BIN / "dagster"), "asset", "materialize", "-m", "bat_pipeline.definitions"]
    result = run([*command, "--select", select, "--partition", SLOPPY], elsewhere)
    assert result.returncode == 0, result.stdout[-4000:]
    assert json.loads(fs.cat_file(verdicts_file)) == before
    assert {v["passed"] for v in before.values()} == {False}
    mirror = Path(elsewhere["BAT_PIPELINE_CACHE"]) / "s3" / BUCKET / PREFIX / "runs" / run_id / SLOPPY
    assert json.loads((mirror / "verdicts.json").read_text()) == before
    assert not (mirror.parent / COMPETENT[0]).exists()  # only what this step reads was fetched


def test_the_report_of_a_run_only_on_the_store(stored_run, tmp_path):
    _, env, _, run_id = stored_run
    result = run([str(BAT_PIPELINE), "report", "--format", "json"], _fresh_machine(env, tmp_path))
    assert result.returncode == 0, result.stdout[-4000:]
    report = json.loads(result.stdout)
    assert report["run_id"] == run_id
    assert {p["key"]: p["pass_rate"] for p in report["partitions"]} == {COMPETENT[0]: 1.0, SLOPPY: 0.0}
    assert {(e["partition"], e["task_id"]): e["passed"] for e in report["episodes"]} == EXPECTED
