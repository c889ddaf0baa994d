"""`bat-pipeline run --executor dask` through a real cluster on 127.0.0.1: a `dask scheduler`
and two `dask worker` processes (issue 18), one cluster for the module. The example with two
models runs through them with the verdicts of an in-process run (the example's: the competent
model passes every quick task, the sloppy one none, as test_run_command's in-process run
shows), both workers execute steps, each partition's agent runs on the worker of its episodes
step. The multiprocess executor and a local Dask cluster chosen in eval.yaml give the same
verdicts too. Last, a worker killed mid-run fails its partition clearly, keeps every episode
it stored (`--resume` on the worker left finishes it) and leaves no process behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from bat_pipeline_tests.pipeline.dask_cluster import dask_cluster
from bat_pipeline_tests.support.example_agent import FEW_TASKS, SLOPPY, edit_eval, run
from bat_pipeline_tests.support.paths import VENV_BIN
from bat_pipeline_tests.support.processes import agent_processes, leftover_agents

MODELS = ("openai-competent", "openai-sloppy")
IN_PROCESS_VERDICTS = {(model, task): model != SLOPPY for model in MODELS for task in FEW_TASKS}
"""What the in-process run gives the example's quick tasks (test_run_command)."""
pytestmark = pytest.mark.slow(seconds=140)


def bat_pipeline_run(ws, *args: str) -> subprocess.CompletedProcess:
    return run([str(VENV_BIN / "bat-pipeline"), "run", str(ws.agent), *args], ws.env, timeout_s=400)


def verdicts(ws) -> dict[tuple[str, str], bool]:
    rows = ws.warehouse.query("SELECT model_key, task_id, passed FROM episodes")
    return {(r["model_key"], r["task_id"]): bool(r["passed"]) for r in rows}


def step_pids(ws) -> dict[str, set[int]]:
    """The processes that started each step of the partitions' runs (the `evaluate` job; the
    charts' and report's run is bat-pipeline's own, in its process), by step key."""
    import dagster as dg
    from dagster._core.events import DagsterEventType

    from bat_pipeline.automation import EVALUATE_JOB

    with dg.DagsterInstance.from_config(str(ws.dagster_home)) as instance:
        pids: dict[str, set[int]] = {}
        for record in instance.get_run_records(dg.RunsFilter(job_name=EVALUATE_JOB)):
            for entry in instance.all_logs(record.dagster_run.run_id, of_type=DagsterEventType.STEP_START):
                assert entry.dagster_event is not None
                pids.setdefault(entry.step_key or "", set()).add(entry.dagster_event.pid)
        return pids


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


def with_execution(ws, execution: dict) -> None:
    """The copy's eval.yaml with this `execution` block."""
    edit_eval(ws.agent, execution=execution)


@pytest.mark.parametrize(
    ("execution", "args"),
    [
        ({}, ("--executor", "multiprocess")),
        ({"executor": "dask", "workers": 1}, ()),  # eval.yaml alone: a local cluster of its own
    ],
    ids=["multiprocess", "local_dask_cluster"],
)
def test_other_executors_give_the_in_process_verdicts_with_each_step_outside_the_run_process(
    workspace_factory, execution, args
):
    ws = workspace_factory("other_executor", models=MODELS[:1])
    if execution:
        with_execution(ws, execution)
    result = bat_pipeline_run(ws, *args)
    assert result.returncode == 0, result.stdout[-4000:]
    assert verdicts(ws) == {key: v for key, v in IN_PROCESS_VERDICTS.items() if key[0] == MODELS[0]}
    pids = step_pids(ws)
    # Dagster's log lines: time - dagster - level - job - run id - pid - event - message.
    (log,) = (ws.root / "logs").glob("*.log")
    run_processes = {int(line.split(" - ")[5]) for line in log.read_text().splitlines() if " - RUN_START - " in line}
    assert len(run_processes) == 1 and len(pids) == 6, (pids, run_processes)
    assert not set().union(*pids.values()) & run_processes, (pids, run_processes)
    if args:  # multiprocess: a process per step
        assert len(set().union(*pids.values())) == len(pids), pids
    assert leftover_agents(ws.agent, ws.llm_url) == []


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
    """The module's last test: it kills one of the cluster's workers."""
    ws = workspace_factory("dask_killed", models=MODELS, k=3, evaluation={"concurrency": 1})
    command = [
        str(VENV_BIN / "bat-pipeline"),
        "run",
        str(ws.agent),
        "--executor",
        "dask",
        "--address",
        cluster.address,
    ]
    process = subprocess.Popen(
        command,
        env=ws.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 240
        victim = None
        while victim is None and time.monotonic() < deadline and process.poll() is None:
            found = _agent_on_a_worker(ws.agent, ws.llm_url, cluster.worker_pids)
            if found and _stored(found[1]):
                victim = found
            time.sleep(0.05)
        assert victim is not None, process.communicate()[0][-4000:] if process.poll() is not None else "no agent"
        worker, partition = victim
        os.kill(worker, signal.SIGKILL)
        before = _stored(partition)
        output = process.communicate(timeout=300)[0]
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
