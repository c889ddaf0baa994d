"""`task_specs`: the validated dataset."""

import dagster as dg

from bat_pipeline.assets.common import GROUP
from bat_pipeline.engine.contracts import Task
from bat_pipeline.resources.evaluation import EvaluationResource


def build(prefix: str) -> dg.AssetsDefinition:
    """The `task_specs` asset of one agent (asset keys carry the agent id as a prefix)."""

    @dg.asset(key_prefix=prefix, group_name=GROUP,
              description="The tasks of eval/input/tasks.json, validated (SPEC §3).")
    def task_specs(context: dg.AssetExecutionContext, evaluation: EvaluationResource) -> list[Task]:
        config = evaluation.config(models=False)
        warnings = list(config.warnings)
        tasks = evaluation.tasks(warnings)
        for warning in warnings:
            context.log.warning(warning)
        categories: dict[str, int] = {}
        for task in tasks:
            category = str(task.meta.get("category", "uncategorised"))
            categories[category] = categories.get(category, 0) + 1
        context.add_output_metadata({
            "tasks": len(tasks),
            "turns": sum(len(t.turns) for t in tasks),
            "k": config.evaluation.k,
            "warnings": dg.MetadataValue.json(warnings),
            "dataset": dg.MetadataValue.path(str(config.resolve(config.evaluation.dataset))),
            "categories": dg.MetadataValue.json(categories),
            "preview": dg.MetadataValue.md("\n".join(
                ["| id | turns | expected status |", "|---|---|---|"]
                + [f"| {t.id} | {len(t.turns)} | {t.expected.status} |" for t in tasks[:30]])),
        })
        return tasks

    return task_specs
