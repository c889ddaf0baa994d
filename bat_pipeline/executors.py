"""Where the steps of a partition's Dagster run execute (eval.yaml `execution`, or
`bat-pipeline run --executor`): in the partition's own process (the default), in a process
per step, or as tasks on a Dask cluster.

A step running elsewhere rebuilds the definitions from the arguments of
`reconstructable.evaluate_job` (a reconstructable job: nothing is read from the environment
of the process that started the run), reads what its upstream handed on under the storage
root (resources.handoff), and starts the partition's agent itself, on its own machine.
Imported only by runs that
execute their steps elsewhere; the Dask executor is in dask_executor.py, imported only for
it (dagster-dask and dask take about a second of CPU to import, which the multiprocess
executor's fork server would pay for nothing).
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from bat_pipeline.engine.contracts.config import ExecutionSettings
from bat_pipeline.partition_runs import STEP_MODULES

FORKSERVER_PRELOAD = (
    "bat_pipeline.executors",
    "bat_pipeline.definitions",
    "bat_pipeline.reconstructable",
    *STEP_MODULES,
    "bat_pipeline.fork_ready",
)
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
