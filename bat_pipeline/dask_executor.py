"""The Dask executor of `execution.executor: dask` (executors.executor_def imports it only
then): dagster-dask's, with each Dask task named by its Dagster run, a local cluster closed
with its run, and a step lost with its worker failing the run instead of running twice."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
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

LOCAL_DASK_WORKERS = 2
LOOPBACK = "127.0.0.1"
LOCAL_SERVERS = {"host": LOOPBACK, "dashboard_address": f"{LOOPBACK}:8787", "worker_dashboard_address": None}
"""Where a local cluster's servers listen: the scheduler, nannies and workers on 127.0.0.1,
the scheduler's dashboard on 127.0.0.1:8787 (Dask's ':8787' binds every interface; a busy
port gives another, Dask says which), no worker dashboard. Set over any cluster settings."""
PROFILER = "distributed.worker.profile.enabled"


class StepLostError(RuntimeError):
    """A step started on a Dask worker that died: not run a second time."""


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
            cluster = address or stack.enter_context(
                dask.distributed.LocalCluster(**{**self.build_dict(run.job_name), **LOCAL_SERVERS})
            )
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
