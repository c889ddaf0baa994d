"""`eval_metrics`: metrics.json / summary.json of one model's run, its rows in the warehouse,
and the quality gates as blocking asset checks."""

import time
import warnings

import dagster as dg

from bat_pipeline.assets.common import metadata, stage_asset, table
from bat_pipeline.engine.adk_results import result_files
from bat_pipeline.engine.comparison import outcomes_by_task
from bat_pipeline.engine.contracts import EvalConfig, Task
from bat_pipeline.engine.figures import metrics_figures
from bat_pipeline.engine.gates import evaluate_gates, nothing_ran, paired_against_previous, set_gates
from bat_pipeline.engine.measures.partition import partition_measures
from bat_pipeline.engine.metrics import measure
from bat_pipeline.engine.results import index_lines, result_lines
from bat_pipeline.engine.score_stats import SCORE_COLUMNS, scores_table
from bat_pipeline.resources.evaluation import EvaluationResource
from bat_pipeline.resources.partition_charts import write_partition_charts
from bat_pipeline.resources.warehouse import WarehouseResource
from bat_pipeline.storage import (
    PartitionRef,
    load_episodes,
    load_timings,
    record_timings,
    write_lines,
    write_results,
)


def gate_specs(config: EvalConfig, partitions: dg.PartitionsDefinition | None = None) -> list[dg.AssetCheckSpec]:
    """One blocking check per gate set in eval.yaml; partitioned like the asset, so each
    model's last result is kept (and shown) apart from the others'."""
    # Partitioned checks are a Dagster preview (dagster is pinned to one version in
    # pyproject.toml); without them the UI shows one status for all models: the last run's.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.PreviewWarning)
        return [
            dg.AssetCheckSpec(
                name=name,
                asset=dg.AssetKey([config.agent_id, "eval_metrics"]),
                blocking=True,
                partitions_def=partitions,
                description=f"evaluation.gate.{name} = {limit}",
            )
            for name, limit in set_gates(config.evaluation.gate).items()
        ]


def eval_metrics(
    context: dg.AssetExecutionContext,
    judge_scores: PartitionRef,
    task_specs: list[Task],
    warehouse: WarehouseResource,
    evaluation: EvaluationResource,
):
    """Per-model metrics (pass rate, pass@k, pass^k, latency percentiles, tokens, judge
    means) written to metrics.json, summary.json and the DuckDB warehouse."""
    ref = judge_scores
    start = time.perf_counter()
    config = evaluation.config(models=False)
    measured = measure(
        load_episodes(ref),
        task_specs,
        k=ref.k,
        run_name=ref.run_name,
        model_name=ref.model_name,
        started=ref.started_time(),
        timings=load_timings(ref.dir),
        confidence=config.metrics.confidence,
    )
    # Ours beside bat-cli's keys: `classification` (when tasks carry labels), `performance`.
    extra = {
        k: v for k, v in partition_measures(measured.episodes, config.metrics, measured.metrics.timings).items() if v
    }
    # The episodes were published by the verdicts (and judge) steps and are unchanged here.
    write_results(ref, {**measured.files(), "metrics.json": {**measured.metrics.model_dump(mode="json"), **extra}})
    # Google ADK's own result files beside ours, for the run's ADK eval cases (engine.adk_results).
    write_results(ref, result_files(measured.episodes, task_specs, config.agent_id, ref.started_time().timestamp()))
    charts = write_partition_charts(ref, extra.get("classification"))
    lines = {"results.jsonl": result_lines(measured.episodes)}
    if evaluation.config(models=False).agentv is not None:
        lines["index.jsonl"] = index_lines(measured.episodes, suite=ref.agent_identity)
    write_lines(ref, lines)
    store = warehouse.warehouse(on_wait=context.log.warning)
    # The warehouse's phases add this step's, up to the moment its rows are written.
    timings = {**measured.metrics.timings, "metrics": time.perf_counter() - start}
    written = store.write_partition(
        ref,
        measured.episodes,
        task_specs,
        measured.metrics.model_copy(update={"timings": timings}),
        redactor=evaluation.redactor(),
    )
    if config.export.otlp_endpoint:
        from bat_pipeline.resources.score_export import export_scores

        export_scores(config.export.otlp_endpoint, ref, measured.episodes, context.log.info)
    seconds = time.perf_counter() - start
    record_timings(ref.dir, {"metrics": seconds})
    context.log.info(f"phase metrics: {seconds:.2f}s")
    # With gate checks the asset has several outputs: the metadata goes on the Output.
    yield dg.Output(
        ref,
        metadata={
            **metadata(
                {
                    **metrics_figures(measured.episodes, measured.metrics, measured.summary),
                    "warehouse_rows": written,
                    "warehouse": store.path,
                    **charts,
                }
            ),
            "scores": table(scores_table(measured.metrics.summary.scorers), SCORE_COLUMNS),
        },
    )

    nothing = nothing_ran(measured.episodes, ref.model_name)
    if nothing:
        # Written and loaded above, so the episodes stay inspectable; the partition fails.
        context.log.error(nothing)
        raise dg.Failure(description=nothing)
    declared = {spec.name for spec in context.assets_def.check_specs}  # the gates set when the graph was built
    if not declared:
        return
    gate = config.evaluation.gate
    previous = store.previous_metrics(ref.model_key, ref.run_id, agent_id=ref.agent_id or None)
    paired = None
    if previous is not None and gate.max_regression is not None and gate.confidence is not None:
        # Both sides as the warehouse holds them, the same reading as `bat-pipeline compare`.
        paired = paired_against_previous(
            outcomes_by_task(store.partition_outcomes(ref.run_id, ref.model_key)),
            outcomes_by_task(store.partition_outcomes(previous["run_id"], ref.model_key)),
            gate.confidence,
        )
    figures = measured.metrics.summary
    results = evaluate_gates(
        gate,
        model_key=ref.model_key,
        pass_rate=figures.pass_rate,
        error_episodes=figures.error_episodes,
        previous_pass_rate=previous["pass_rate"] if previous else None,
        paired=paired,
    )
    for result in (r for r in results if r.name in declared):
        context.log.info(f"gate {result.name}: {'passed' if result.passed else 'FAILED'} - {result.message}")
        yield dg.AssetCheckResult(
            check_name=result.name,
            passed=result.passed,
            severity=dg.AssetCheckSeverity.ERROR,
            metadata={
                "message": result.message,
                "model": ref.model_name,
                "run_id": ref.run_id,
                **({"previous_run_id": previous["run_id"]} if previous and result.name == "max_regression" else {}),
                **metadata({k: v for k, v in result.figures.items() if v is not None}),
            },
        )


def build(partitions: dg.PartitionsDefinition, config: EvalConfig) -> dg.AssetsDefinition:
    return stage_asset(
        eval_metrics,
        config.agent_id,
        partitions_def=partitions,
        check_specs=gate_specs(config, partitions),
    )
