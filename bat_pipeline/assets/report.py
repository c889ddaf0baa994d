"""`eval_report`: the report of this agent's latest run — JSON, Markdown for a pull-request
comment, one self-contained HTML page — written beside the run (SPEC §11)."""

import dagster as dg

from bat_pipeline.assets.common import metadata, stage_asset
from bat_pipeline.resources.evaluation import EvaluationResource
from bat_pipeline.resources.reports import make_report, render, write_report


def eval_report(context: dg.AssetExecutionContext, evaluation: EvaluationResource) -> None:
    """The latest run as a report: JSON, Markdown sized for a pull-request comment (summary
    per model, regressions against the previous run, worst tasks) and one self-contained
    HTML page with a drill-down per episode."""
    config = evaluation.config(models=False)
    report = make_report(evaluation.root, agent_id=config.agent_id, colours=config.report)
    written = write_report(evaluation.root, report)
    context.add_output_metadata(
        {
            **metadata(
                {
                    "run_id": report.run_id,
                    "previous_run_id": report.previous_run_id or "",
                    "regressions": len(report.regressions),
                    **{f"report_{k}": v for k, v in written.items()},
                }
            ),
            "summary": dg.MetadataValue.md(render(report, "markdown")),
        }
    )


def build(prefix: str) -> dg.AssetsDefinition:
    """The `eval_report` asset of one agent."""
    return stage_asset(eval_report, prefix, deps=["eval_metrics"])
