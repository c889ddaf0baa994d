"""What the executor tests share: the example's two models, the verdicts an in-process run
gives them, a `bat-pipeline run` of a workspace, and which processes ran each step."""

from __future__ import annotations

import subprocess

from bat_pipeline_tests.support.example_agent import FEW_TASKS, SLOPPY, edit_eval, run
from bat_pipeline_tests.support.paths import VENV_BIN

MODELS = ("openai-competent", "openai-sloppy")
IN_PROCESS_VERDICTS = {(model, task): model != SLOPPY for model in MODELS for task in FEW_TASKS}
"""What the in-process run gives the example's quick tasks (test_run_command)."""


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


def with_execution(ws, execution: dict) -> None:
    """The copy's eval.yaml with this `execution` block."""
    edit_eval(ws.agent, execution=execution)
