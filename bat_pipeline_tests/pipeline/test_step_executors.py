"""A local Dask cluster chosen in eval.yaml alone (issue 18): `execution: {executor: dask}`
with no address starts a cluster of its own for the run, and the example gives its
in-process verdicts with every step outside the run's process. test_run_command runs the
multiprocess executor, test_dask_cluster the example through a cluster of its own. The
local cluster listens on loopback only, its dashboard too (issue 38)."""

from __future__ import annotations

import ipaddress
import json
import os

import pytest

from bat_pipeline_tests.pipeline import executor_runs as runs
from bat_pipeline_tests.support import listening_sockets
from bat_pipeline_tests.support.processes import leftover_agents

pytestmark = pytest.mark.slow(seconds=25)


def test_a_local_dask_cluster_gives_the_in_process_verdicts_with_each_step_outside_the_run_process(
    workspace_factory,
):
    ws = workspace_factory("local_dask", models=runs.MODELS[:1])
    sockets = ws.root.parent / "listening.jsonl"
    wrapper = ["{python}", listening_sockets.__file__, str(sockets), str(os.getpid()), "--"]
    runs.edit_eval(ws.agent, agent={"command": [*wrapper, "{python}", "-m", "bat_pipeline.example.agent"]})
    runs.with_execution(ws, {"executor": "dask", "workers": 1})
    result = runs.bat_pipeline_run(ws)
    assert result.returncode == 0, result.stdout[-4000:]
    # Every server of the run (scheduler, worker, nanny, dashboard) listens on loopback only.
    (listening,) = [json.loads(line) for line in sockets.read_text().splitlines()]
    assert len(listening) >= 3, listening  # at least the scheduler, its dashboard and a worker
    assert [s for s in listening if not ipaddress.ip_address(s["address"]).is_loopback] == [], listening
    assert runs.verdicts(ws) == {key: v for key, v in runs.IN_PROCESS_VERDICTS.items() if key[0] == runs.MODELS[0]}
    pids = runs.step_pids(ws)
    # Dagster's log lines: time - dagster - level - job - run id - pid - event - message.
    (log,) = (ws.root / "logs").glob("*.log")
    run_processes = {int(line.split(" - ")[5]) for line in log.read_text().splitlines() if " - RUN_START - " in line}
    assert len(run_processes) == 1 and len(pids) == 6, (pids, run_processes)
    assert not set().union(*pids.values()) & run_processes, (pids, run_processes)
    assert leftover_agents(ws.agent, ws.llm_url) == []
