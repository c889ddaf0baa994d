"""`task_specs`: the validated dataset."""

import dagster as dg

from bat_pipeline.assets.common import markdown_table, metadata, stage_asset
from bat_pipeline.engine.contracts import Task
from bat_pipeline.engine.figures import TASK_COLUMNS, dataset_figures
from bat_pipeline.resources.evaluation import EvaluationResource


def task_specs(context: dg.AssetExecutionContext, evaluation: EvaluationResource) -> list[Task]:
    """The tasks of eval/input/tasks.json, validated (SPEC §3)."""
    config = evaluation.config(models=False)
    warnings = list(config.warnings)
    tasks = evaluation.tasks(warnings)
    for warning in warnings:
        context.log.warning(warning)
    figures = dataset_figures(tasks)
    context.add_output_metadata(
        {
            **metadata(
                {
                    "tasks": figures["tasks"],
                    "turns": figures["turns"],
                    "k": config.evaluation.k,
                    "warnings": warnings,
                    "dataset": config.resolve(config.evaluation.dataset),
                    "categories": figures["categories"],
                }
            ),
            "preview": markdown_table(figures["preview"], TASK_COLUMNS),
        }
    )
    return tasks


def build(prefix: str) -> dg.AssetsDefinition:
    """The `task_specs` asset of one agent."""
    return stage_asset(task_specs, prefix)
