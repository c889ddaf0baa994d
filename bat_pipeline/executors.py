"""Where the steps of a partition's Dagster run execute (eval.yaml `execution`, or
`bat-pipeline run --executor`): in the partition's own process (the default), in a process
per step, or as tasks on a Dask cluster.

A step running elsewhere rebuilds the definitions from the arguments of `evaluate_job`
(a reconstructable job: nothing is read from the environment of the process that started
the run), reads what its upstream handed on under the storage root (resources.handoff),
and starts the partition's agent itself, on its own machine. Imported only by runs that
execute their steps elsewhere; the Dask executor is in dask_executor.py, imported only for
it (dagster-dask and dask take about a second of CPU to import, which the multiprocess
executor's fork server would pay for nothing).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import dagster as dg

from bat_pipeline.engine.contracts.config import ExecutionSettings
from bat_pipeline.partition_runs import STEP_MODULES

FORKSERVER_PRELOAD = ("bat_pipeline.executors", "bat_pipeline.definitions", *STEP_MODULES, "bat_pipeline.fork_ready")
"""What the multiprocess executor's fork server imports before forking each step, in order:
fork_ready last (it freezes what the others allocated)."""


def forkserver_preload(storage_root: Path | str) -> list[str]:
    """FORKSERVER_PRELOAD, with the object store's fsspec package (s3fs: half a second of
    CPU per step otherwise) before fork_ready when the root is on one."""
    from bat_pipeline.remote_root import filesystem_module

    store = filesystem_module(storage_root)
    return [*FORKSERVER_PRELOAD[:-1], *([store] if store else []), FORKSERVER_PRELOAD[-1]]


def executor_def(execution: ExecutionSettings, storage_root: Path | str) -> dg.ExecutorDefinition:
    """The Dagster executor for `execution`, its steps reading and writing under `storage_root`."""
    if execution.executor == "multiprocess":
        return dg.multiprocess_executor.configured(
            {
                "max_concurrent": execution.workers or 0,
                # Each step forks from one server process that imported Dagster and the
                # pipeline once, rather than starting a cold interpreter (seconds of CPU each).
                "start_method": {"forkserver": {"preload_modules": forkserver_preload(storage_root)}},
            }
        )
    if execution.executor == "dask":
        from bat_pipeline.dask_executor import LOCAL_DASK_WORKERS, dask_executor

        cluster = (
            {"existing": {"address": execution.address}}
            if execution.address
            else {
                "local": {
                    "n_workers": execution.workers or LOCAL_DASK_WORKERS,
                    "threads_per_worker": 1,
                    "processes": True,
                }
            }
        )
        return dask_executor.configured({"cluster": cluster})
    return dg.in_process_executor


def evaluate_job(
    agent_dir: str, root: str, execution: dict[str, Any], overrides: dict[str, Any], scripted_url: str | None = None
) -> dg.JobDefinition:
    """The `evaluate` job, built from plain values: how a step in another process or on a
    Dask worker gets the run's definitions (dg.build_reconstructable_job). `overrides`:
    `plain_overrides` of the command line's."""
    from bat_pipeline.automation import EVALUATE_JOB
    from bat_pipeline.definitions import build_definitions
    from bat_pipeline.engine.config.project import Overrides
    from bat_pipeline.locations import root_path

    # The paths back as paths; `export_otlp` is a URL, kept as text.
    values: dict[str, Any] = {
        name: Path(value) if isinstance(value, str) and name != "export_otlp" else value
        for name, value in overrides.items()
    }
    given = Overrides(**values)
    defs = build_definitions(
        Path(agent_dir),
        root_path(root),
        given,
        execution=ExecutionSettings.model_validate(execution),
        scripted_url=scripted_url,
    )
    return defs.resolve_job_def(EVALUATE_JOB)


def plain_overrides(overrides: Any) -> dict[str, Any]:
    """An engine.config.project.Overrides as plain values (its paths as strings, the rest
    as they are), for `evaluate_job`."""
    import dataclasses

    return {
        name: str(value) if isinstance(value, Path) else value for name, value in dataclasses.asdict(overrides).items()
    }


def reconstructable_evaluate(agent_dir: Path, root: Path, execution: ExecutionSettings, overrides: Any) -> Any:
    """The `evaluate` job of this run as a reconstructable job (`evaluate_job`'s values):
    with the scripted model server this process started, if any."""
    from bat_pipeline.remote_root import root_text
    from bat_pipeline.resources.scripted_process import URL_VAR

    values = {
        "agent_dir": str(agent_dir),
        "root": root_text(root),  # an object store's URL, not this machine's mirror of it
        "execution": execution.model_dump(),
        "overrides": plain_overrides(overrides),
        "scripted_url": os.environ.get(URL_VAR),
    }
    return dg.build_reconstructable_job(__name__, evaluate_job.__name__, reconstructable_kwargs=values)
