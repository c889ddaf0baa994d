"""`bat-pipeline run --executor dask` through a real cluster on 127.0.0.1: a `dask scheduler`
and two `dask worker` processes (issue 18), one cluster for the module. The example with two
models runs through them with the verdicts of an in-process run (the example's: the competent
model passes every quick task, the sloppy one none, as test_run_command's in-process run
shows), both workers execute steps, each partition's agent runs on the worker of its episodes
step. Last, a worker killed mid-run fails its partition clearly, keeps every episode
it stored (`--resume` on the worker left finishes it) and leaves no process behind."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from bat_pipeline_tests.pipeline.dask_cluster import dask_cluster
from bat_pipeline_tests.pipeline.executor_runs import (
    IN_PROCESS_VERDICTS,
    MODELS,
    bat_pipeline_run,
    step_pids,
    verdicts,
    with_execution,
)
from bat_pipeline_tests.support.paths import VENV_BIN
from bat_pipeline_tests.support.processes import agent_processes, leftover_agents, start_logged

pytestmark = pytest.mark.slow(seconds=100)


@pytest.fixture(scope="module")
def cluster(workspace_factory, tmp_path_factory):
    """The scheduler and two workers every test of the module submits to (the last one kills
    a worker)."""
    env = workspace_factory("dask_cluster_env", models=MODELS).env
    with dask_cluster(tmp_path_factory.mktemp("cluster"), env) as started:
        yield started


@pytest.fixture(scope="module")
def on_cluster(workspace_factory, cluster):
    ws = workspace_factory("dask_run", models=MODELS)
    result = bat_pipeline_run(ws, "--executor", "dask", "--address", cluster.address)
    return ws, result, cluster.worker_pids


def test_the_example_runs_through_a_scheduler_and_two_workers_with_the_in_process_verdicts(on_cluster):
    ws, result, _ = on_cluster
    assert result.returncode == 0, result.stdout[-4000:]
    assert verdicts(ws) == IN_PROCESS_VERDICTS
    assert leftover_agents(ws.agent, ws.llm_url) == []


def test_both_workers_execute_the_partitions_steps_and_nothing_runs_in_the_submitting_processes(on_cluster):
    ws, _, workers = on_cluster
    pids = step_pids(ws)
    assert any(key.endswith("agent_episodes") for key in pids) and len(pids) == 6, pids
    assert set().union(*pids.values()) == workers, (pids, workers)


def test_the_partition_record_names_its_folder_relative_to_the_root(on_cluster):
    ws = on_cluster[0]
    records = sorted(ws.root.glob("runs/*/*/partition.json"))
    assert len(records) == len(MODELS)
    for record in records:
        assert json.loads(record.read_text())["dir"] == f"runs/{record.parent.parent.name}/{record.parent.name}"


def test_a_failed_episodes_step_on_a_worker_runs_none_of_the_later_steps(workspace_factory, cluster):
    """Dask runs a task whatever its upstream did: the later steps must not read the
    previous output of the failed step (another run's partition). The cluster's address is
    the eval.yaml's here."""
    ws = workspace_factory(
        "dask_agent_fails",
        models=MODELS[:1],
        agent={"command": ["sh", "-c", "echo no agent here; exit 3"]},
        evaluation={"agent_startup_timeout_s": 5},
    )
    with_execution(ws, {"executor": "dask", "address": cluster.address})
    # What the episodes step handed on last time: another run's partition.
    ws.root.joinpath("handoff", "weather_agent", "agent_episodes").mkdir(parents=True)
    ws.root.joinpath("handoff", "weather_agent", "agent_episodes", f"{MODELS[0]}.json").write_text(
        json.dumps({"partition": "runs/20200101T000000Z/" + MODELS[0]})
    )
    result = bat_pipeline_run(ws)
    assert result.returncode == 1, result.stdout[-4000:]
    assert "step weather_agent__agent_episodes failed" in result.stdout, result.stdout[-4000:]
    started = step_pids(ws)
    assert set(started["weather_agent__agent_episodes"]) <= cluster.worker_pids, started
    assert not [
        key
        for key in started
        if key.split("__")[-1] in ("span_trajectories", "episode_verdicts", "judge_scores", "eval_metrics")
    ], started
    assert leftover_agents(ws.agent, ws.llm_url) == []


def _agent_on_a_worker(agent: Path, llm_url: str, workers: set[int]) -> tuple[int, Path] | None:
    """(worker pid, partition folder) of a running agent whose parent is a worker."""
    for line in agent_processes(agent, llm_url):
        pid = int(line.split(":", 1)[0])
        try:
            ppid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue
        config = next((v.split(b"=", 1)[1].decode() for v in environ if v.startswith(b"CONFIG_PATH=")), None)
        if ppid in workers and config:
            return ppid, Path(config).parent.parent
    return None


def _stored(partition: Path) -> list[str]:
    """Episode files the partition's record lists that are on disk."""
    record = partition / "partition.json"
    names = json.loads(record.read_text())["episode_files"] if record.is_file() else []
    return [n for n in names if (partition / "episodes" / n).is_file()]


def test_a_worker_killed_mid_run_fails_its_partition_keeps_its_episodes_and_leaves_no_process(
    workspace_factory, cluster
):
    """The module's last test: it kills one of the cluster's workers. One model: a second
    partition's steps run on both workers too, so whether it survives the kill is chance,
    and nothing here could be asserted of it."""
    ws = workspace_factory("dask_killed", models=MODELS[:1], k=3, evaluation={"concurrency": 1})
    command = [
        str(VENV_BIN / "bat-pipeline"),
        "run",
        str(ws.agent),
        "--executor",
        "dask",
        "--address",
        cluster.address,
    ]
    log = ws.root.parent / "killed-run.out"
    process = start_logged(command, cwd=ws.root.parent, env=ws.env, log_path=log)
    try:
        deadline = time.monotonic() + 240
        victim = None
        while victim is None and time.monotonic() < deadline and process.poll() is None:
            found = _agent_on_a_worker(ws.agent, ws.llm_url, cluster.worker_pids)
            if found and _stored(found[1]):
                victim = found
            time.sleep(0.05)
        assert victim is not None, log.read_text(errors="replace")[-4000:] if process.poll() is not None else "no agent"
        worker, partition = victim
        os.kill(worker, signal.SIGKILL)
        before = _stored(partition)
        process.wait(timeout=300)
        output = log.read_text(errors="replace")
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode != 0, output[-4000:]
    key = partition.name
    assert f"✗ {key} failed" in output, output[-4000:]
    assert "step weather_agent__agent_episodes was running on a Dask worker that died" in output, output[-4000:]
    after = _stored(partition)
    assert before and set(before) <= set(after), (before, after)
    assert leftover_agents(ws.agent, ws.llm_url) == []

    # The worker left finishes the partition: the episodes stored before are kept.
    started = {name: _started_at(partition, name) for name in before}
    resumed = bat_pipeline_run(ws, "--resume", "--executor", "dask", "--address", cluster.address)
    assert resumed.returncode == 0, resumed.stdout[-4000:]
    assert len(_stored(partition)) == 3 * 3
    assert {name: _started_at(partition, name) for name in before} == started
    assert leftover_agents(ws.agent, ws.llm_url) == []


def _started_at(partition: Path, name: str) -> str:
    return json.loads((partition / "episodes" / name).read_text())["aux"]["started_at"]
