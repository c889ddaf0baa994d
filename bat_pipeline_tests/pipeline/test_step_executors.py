"""The other executors, each starting what it needs (issue 18): `--executor multiprocess`
(a process per step) and a local Dask cluster chosen in eval.yaml alone give the example's
in-process verdicts, with every step outside the run's process. test_dask_cluster runs the
same example through a cluster of its own."""

from __future__ import annotations

import pytest

from bat_pipeline_tests.pipeline import executor_runs as runs
from bat_pipeline_tests.support.processes import leftover_agents

pytestmark = pytest.mark.slow(seconds=45)


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
    ws = workspace_factory("other_executor", models=runs.MODELS[:1])
    if execution:
        runs.with_execution(ws, execution)
    result = runs.bat_pipeline_run(ws, *args)
    assert result.returncode == 0, result.stdout[-4000:]
    assert runs.verdicts(ws) == {key: v for key, v in runs.IN_PROCESS_VERDICTS.items() if key[0] == runs.MODELS[0]}
    pids = runs.step_pids(ws)
    # Dagster's log lines: time - dagster - level - job - run id - pid - event - message.
    (log,) = (ws.root / "logs").glob("*.log")
    run_processes = {int(line.split(" - ")[5]) for line in log.read_text().splitlines() if " - RUN_START - " in line}
    assert len(run_processes) == 1 and len(pids) == 6, (pids, run_processes)
    assert not set().union(*pids.values()) & run_processes, (pids, run_processes)
    if args:  # multiprocess: a process per step
        assert len(set().union(*pids.values())) == len(pids), pids
    assert leftover_agents(ws.agent, ws.llm_url) == []
