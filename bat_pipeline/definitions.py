"""Assembles the asset graph for one agent folder: assets, checks, resources, schedules.

The agent folder (or AgentV eval file) is `$BAT_AGENT_DIR`, else the current folder when it holds
eval/eval.yaml, else the bundled example agent (locations.agent_dir_from_env); results go
under `$BAT_PIPELINE_HOME` (default: the agent's own `.bat_pipeline`, storage.project_root). Several
agents: one code location each in workspace.yaml, with the agent folder as its
working_directory.
"""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg

from bat_pipeline.assets import charts, episodes, judge, metrics, report, tasks, trajectories, verdicts
from bat_pipeline.automation import build_automation
from bat_pipeline.engine.config.project import Overrides, load_project
from bat_pipeline.engine.contracts.config import ExecutionSettings
from bat_pipeline.locations import WAREHOUSE_WAIT_VAR, agent_dir_from_env, overrides_from_env
from bat_pipeline.remote_root import url_of
from bat_pipeline.resources.evaluation import EvaluationResource
from bat_pipeline.resources.handoff import HandoffIOManager
from bat_pipeline.resources.io_manager import AtomicFilesystemIOManager
from bat_pipeline.resources.judge import JudgeResource
from bat_pipeline.resources.scripted_llm import ScriptedLlmResource
from bat_pipeline.resources.warehouse import DEFAULT_MAX_WAIT_S, WarehouseResource
from bat_pipeline.storage import default_root, warehouse_path


def build_definitions(
    agent_dir: Path,
    storage_root: Path,
    overrides: Overrides | None = None,
    *,
    execution: ExecutionSettings | None = None,
    scripted_url: str | None = None,
) -> dg.Definitions:
    """`agent_dir`: an agent folder or an AgentV eval file (engine.config.project).
    `execution`: where the steps run (default: eval.yaml's `execution`); `scripted_url`: a
    running scripted model server (default: `$BAT_DEMO_LLM_URL`, else one is started)."""
    overrides = overrides or Overrides()
    config = load_project(agent_dir, overrides)
    execution = execution or config.execution
    partitions = dg.StaticPartitionsDefinition([m.partition_key for m in config.models])
    # Asset keys carry the agent id, so two agents' code locations in one workspace (and
    # their history in the UI) never collide.
    prefix = config.agent_id
    chain = [
        episodes.build(partitions, prefix),
        trajectories.build(partitions, prefix),
        verdicts.build(partitions, prefix),
        judge.build(partitions, prefix),
        metrics.build(partitions, config),
    ]
    task_specs = tasks.build(prefix)
    eval_charts = charts.build(prefix)
    eval_report = report.build(prefix)
    assets = [task_specs, *chain, eval_charts, eval_report]
    jobs, schedules, sensors = build_automation(config, partitions, [task_specs, *chain], eval_charts, eval_report)
    return dg.Definitions(
        assets=assets,
        # The chain is linear (one step at a time), so on one machine a process per step buys
        # no parallelism and costs a fresh interpreter and code-location load per step
        # (seconds each); models run in parallel as separate runs, one per partition. Other
        # executors put the steps elsewhere (bat_pipeline.executors; imported only then).
        executor=dg.in_process_executor if execution.executor == "in_process" else _executor(execution, storage_root),
        jobs=jobs,
        schedules=schedules,
        sensors=sensors,
        resources={
            # The scripted model server starts only in a run whose eval.yaml names it.
            "evaluation": EvaluationResource(
                agent_dir=str(agent_dir),
                storage_root=str(storage_root),
                scripted_llm=ScriptedLlmResource(url=scripted_url),
                providers_file=str(overrides.providers_file) if overrides.providers_file else None,
                threshold=overrides.threshold,
                output_dir=str(overrides.output_dir) if overrides.output_dir else None,
                dataset=str(overrides.dataset) if overrides.dataset else None,
                trust_datasets=overrides.trust_datasets,
                export_otlp=overrides.export_otlp,
                adk_config=str(overrides.adk_config) if overrides.adk_config else None,
            ),
            "judge": JudgeResource(storage_root=str(storage_root)),
            # In one machine's processes: files under the instance's storage folder, each
            # written whole (partitions at once read the unpartitioned task_specs while
            # another writes it); elsewhere, or with the root on an object store (whose
            # mirror a later step's machine may lack), through the storage root.
            "io_manager": AtomicFilesystemIOManager()
            if execution.executor == "in_process" and url_of(storage_root) is None
            else HandoffIOManager(root=str(storage_root)),
            "warehouse": WarehouseResource(
                database=str(warehouse_path(storage_root)),
                max_wait_s=float(os.environ.get(WAREHOUSE_WAIT_VAR) or DEFAULT_MAX_WAIT_S),
            ),
        },
    )


def _executor(execution: ExecutionSettings, storage_root: Path) -> dg.ExecutorDefinition:
    from bat_pipeline.executors import executor_def

    return executor_def(execution, storage_root)


@dg.definitions
def defs() -> dg.Definitions:
    agent = agent_dir_from_env()
    return build_definitions(agent, default_root(agent), overrides_from_env())
