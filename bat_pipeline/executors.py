"""Where the steps of a partition's Dagster run execute (eval.yaml `execution`, or
`bat-pipeline run --executor`): in the partition's own process (the default), in a process
per step, or as tasks on a Dask cluster.

A step running elsewhere rebuilds the definitions from the arguments of `evaluate_job`
(a reconstructable job: nothing is read from the environment of the process that started
the run), reads what its upstream handed on under the storage root (resources.handoff),
and starts the partition's agent itself, on its own machine. Imported only by runs that
execute their steps elsewhere (dagster-dask and dask take most of a second to import).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import dagster as dg
import dask.config
import dask.distributed
from dagster._core.events import DagsterEvent, DagsterEventType
from dagster._core.execution.context.system import PlanOrchestrationContext
from dagster._core.execution.plan.plan import ExecutionPlan
from dagster._core.executor.base import Executor
from dagster._core.instance import DagsterInstance, InstanceRef
from dagster_dask.executor import DaskExecutor, get_dask_resource_requirements, query_on_dask_worker

from bat_pipeline.engine.contracts.config import ExecutionSettings
from bat_pipeline.partition_runs import STEP_MODULES

LOCAL_DASK_WORKERS = 2
PROFILER = "distributed.worker.profile.enabled"
FORKSERVER_PRELOAD = ("bat_pipeline.executors", "bat_pipeline.definitions", *STEP_MODULES, "bat_pipeline.fork_ready")
"""What the multiprocess executor's fork server imports before forking each step, in order:
fork_ready last (it freezes what the others allocated)."""


class StepLostError(RuntimeError):
    """A step started on a Dask worker that died: not run a second time."""


def executor_def(execution: ExecutionSettings) -> dg.ExecutorDefinition:
    """The Dagster executor for `execution`."""
    if execution.executor == "multiprocess":
        return dg.multiprocess_executor.configured(
            {
                "max_concurrent": execution.workers or 0,
                # Each step forks from one server process that imported Dagster and the
                # pipeline once, rather than starting a cold interpreter (seconds of CPU each).
                "start_method": {"forkserver": {"preload_modules": list(FORKSERVER_PRELOAD)}},
            }
        )
    if execution.executor == "dask":
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


@dg.executor(
    name="bat_dask",
    config_schema={"cluster": dg.Field(dg.Permissive())},
    requirements=dg.multiple_process_executor_requirements(),
)
def dask_executor(init_context: dg.InitExecutorContext) -> Executor:
    """dagster-dask's executor, with each Dask task named by the Dagster run: the partitions
    of one evaluation run the same steps at once on one scheduler, and Dask shares a task
    among the clients that submit the same key."""
    cluster: dict[str, Any] = init_context.executor_config["cluster"]  # type: ignore[assignment]
    ((kind, settings),) = cluster.items()
    return _RunScopedDaskExecutor(kind, settings)


class _RunScopedDaskExecutor(DaskExecutor):
    def execute(self, plan_context: PlanOrchestrationContext, execution_plan: ExecutionPlan) -> Iterator[DagsterEvent]:
        run = plan_context.dagster_run
        address = self.cluster_configuration["address"] if self.cluster_type == "existing" else None
        with contextlib.ExitStack() as stack:
            # A local cluster lives as long as its run: closed here, since the partition's
            # process ends with os._exit (no atexit hooks would stop its workers).
            if not address:
                # Without Dask's statistical profiler (a tenth of a worker's CPU, for a
                # dashboard nobody reads): the workers get the config the cluster starts with.
                stack.enter_context(dask.config.set({PROFILER: False}))
            cluster = address or stack.enter_context(dask.distributed.LocalCluster(**self.build_dict(run.job_name)))
            client = stack.enter_context(dask.distributed.Client(cluster))
            futures: dict[str, Any] = {}
            for level in execution_plan.get_steps_to_execute_by_level():
                for step in level:
                    needs = sorted({key for step_input in step.step_inputs for key in step_input.dependency_keys})
                    futures[step.key] = client.submit(
                        run_step_once,
                        [futures[key] for key in needs],
                        needs,
                        plan_context.reconstructable_job,
                        run,
                        plan_context.run_config,
                        step.key,
                        plan_context.instance.get_ref(),
                        execution_plan.known_state,
                        key=f"{run.job_name}.{run.run_id}.{step.key}",
                        resources=get_dask_resource_requirements(step.tags),
                        pure=False,
                    )
            for _future, events in dask.distributed.as_completed(list(futures.values()), with_results=True):
                yield from events


def run_step_once(
    upstream: Sequence[Any],
    needs: Sequence[str],
    recon_job: Any,
    run: Any,
    run_config: Mapping[str, Any] | None,
    step_key: str,
    instance_ref: InstanceRef,
    known_state: Any,
) -> Sequence[DagsterEvent]:
    """One step on a Dask worker, once its upstream futures (`upstream`, of the steps
    `needs`) are done. Dask runs a task whatever its upstream step did, so a step whose
    upstream did not succeed in this run does nothing: it would read that step's last
    output, another run's. When a worker dies Dask gives its tasks to another: the one it
    was running, and finished ones whose results it held. A finished step is not run again
    (its output is under the storage root); one that had started is not either: its
    partition's finished episodes stay as stored (`bat-pipeline run --resume` continues
    them) and StepLostError fails the run."""
    with DagsterInstance.from_ref(instance_ref) as instance:
        succeeded = {e.step_key for e in instance.all_logs(run.run_id, of_type=DagsterEventType.STEP_SUCCESS)}
        if step_key in succeeded or not set(needs) <= succeeded:
            return []
        if any(e.step_key == step_key for e in instance.all_logs(run.run_id, of_type=DagsterEventType.STEP_START)):
            raise StepLostError(
                f"step {step_key} was running on a Dask worker that died; it is not run a second "
                f"time (what it stored is kept: `bat-pipeline run --resume` continues it)"
            )
    return query_on_dask_worker(upstream, recon_job, run, run_config, [step_key], instance_ref, known_state)


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

    values: dict[str, Any] = {
        name: Path(value) if isinstance(value, str) else value for name, value in overrides.items()
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
