"""`eval_charts`: the charts across models and runs, drawn from the warehouse."""

import base64
from pathlib import Path

import dagster as dg

from bat_pipeline.assets.common import metadata, stage_asset
from bat_pipeline.resources.evaluation import EvaluationResource
from bat_pipeline.resources.warehouse import WarehouseResource
from bat_pipeline.storage import charts_dir, publish_charts


def _embedded(path: Path) -> dg.MetadataValue:
    # The UI renders markdown metadata, data-URI images included: the charts show inline.
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return dg.MetadataValue.md(f"![{path.stem}](data:image/png;base64,{data})")


def eval_charts(
    context: dg.AssetExecutionContext, evaluation: EvaluationResource, warehouse: WarehouseResource
) -> None:
    """Pass rate, time, tokens, judge scores, mean score per scorer and criterion, per task,
    trend across runs, pass@k — PNG files, shown here as metadata. Only this agent's runs."""
    from bat_pipeline.engine.charts import render_all  # matplotlib: loaded only to draw

    config = evaluation.config(models=False)
    data = warehouse.warehouse(on_wait=context.log.warning).chart_data(agent_id=config.agent_id)
    out_dir = charts_dir(evaluation.root, config.agent_id)
    written = render_all(data, out_dir)
    publish_charts(config, written.values())
    context.add_output_metadata(
        {
            **metadata({"agent": config.agent_id, "charts_dir": out_dir, "models": len(data.models)}),
            **{f"chart_{name}": _embedded(path) for name, path in written.items()},
        }
    )


def build(prefix: str) -> dg.AssetsDefinition:
    """The `eval_charts` asset of one agent."""
    return stage_asset(eval_charts, prefix, deps=["eval_metrics"])
