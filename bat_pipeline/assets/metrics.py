"""`eval_metrics`: metrics.json / summary.json of one model's run, its rows in the warehouse,
and the quality gates as blocking asset checks."""

import warnings
from datetime import datetime, timezone

import dagster as dg

from bat_pipeline.assets.common import GROUP, counts, score_table
from bat_pipeline.engine.contracts import EvalConfig, Task
from bat_pipeline.engine.gates import evaluate_gates, nothing_ran, set_gates
from bat_pipeline.engine.metrics import build_metrics, build_summary, in_dataset_order, summary_timestamp
from bat_pipeline.resources.evaluation import EvaluationResource
from bat_pipeline.resources.warehouse import WarehouseResource
from bat_pipeline.storage import PartitionRef, load_episodes, publish_reference, write_json

def gate_specs(config: EvalConfig, partitions: dg.PartitionsDefinition | None = None) -> list[dg.AssetCheckSpec]:
    """One blocking check per gate set in eval.yaml; partitioned like the asset, so each
    model's last result is kept (and shown) apart from the others'."""
    # Partitioned checks are a Dagster preview (dagster is pinned to one version in
    # pyproject.toml); without them the UI shows one status for all models: the last run's.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.PreviewWarning)
        return [
            dg.AssetCheckSpec(name=name, asset=dg.AssetKey([config.agent_id, "eval_metrics"]), blocking=True, partitions_def=partitions,
                              description=f"evaluation.gate.{name} = {limit}")
            for name, limit in set_gates(config.evaluation.gate).items()
        ]


def build(partitions: dg.PartitionsDefinition, config: EvalConfig) -> dg.AssetsDefinition:
    @dg.asset(
        key_prefix=config.agent_id, group_name=GROUP, partitions_def=partitions, check_specs=gate_specs(config, partitions),
        description="Per-model metrics (pass rate, pass@k, pass^k, latency percentiles, tokens, "
                    "judge means) written to metrics.json, summary.json and the DuckDB warehouse.",
    )
    def eval_metrics(context: dg.AssetExecutionContext, judge_scores: PartitionRef,
                     task_specs: list[Task], warehouse: WarehouseResource, evaluation: EvaluationResource):
        ref = judge_scores
        episodes = in_dataset_order(load_episodes(ref), [t.id for t in task_specs])
        metrics = build_metrics(episodes, k=ref.k)
        # bat-cli stamps the start of the model's evaluation.
        started = datetime.fromisoformat(ref.started_at) if ref.started_at else datetime.now(timezone.utc)
        summary = build_summary(episodes, run_name=ref.run_name, k=ref.k, model_name=ref.model_name,
                                timestamp_utc=summary_timestamp(started))
        write_json(ref.file("metrics.json"), metrics)
        write_json(ref.file("summary.json"), summary)
        # The episodes were published by the verdicts (and judge) steps and are unchanged here.
        publish_reference(ref, (), files={"metrics.json": metrics, "summary.json": summary})
        store = warehouse.warehouse(on_wait=context.log.warning)
        written = store.write_partition(ref, episodes, task_specs, metrics, redactor=evaluation.redactor())
        figures = metrics.summary
        # With gate checks the asset has several outputs: the metadata goes on the Output.
        yield dg.Output(ref, metadata={
            **counts(episodes),
            "pass_at_k": figures.pass_at_k,
            "pass_hat_k": figures.pass_hat_k,
            "latency_p50_ms": figures.latency_ms.p50,
            "latency_p95_ms": figures.latency_ms.p95,
            "total_tokens": figures.tokens.total_tokens_total,
            "judge_means": dg.MetadataValue.json(summary.qualitative_scores),
            "scores": score_table(figures.scorers),
            "warehouse_rows": dg.MetadataValue.json(written),
            "warehouse": dg.MetadataValue.path(str(store.path)),
        })

        gate = context.assets_def.check_specs  # only the gates that are set
        nothing = nothing_ran(episodes, ref.model_name)
        if nothing:
            # Written and loaded above, so the episodes stay inspectable; the partition fails.
            context.log.error(nothing)
            raise dg.Failure(description=nothing)
        if not list(gate):
            return
        previous = store.previous_metrics(ref.model_key, ref.run_id, agent_id=ref.agent_id or None)
        results = evaluate_gates(
            config.evaluation.gate, model_key=ref.model_key, pass_rate=figures.pass_rate if episodes else None,
            error_episodes=figures.error_episodes,
            previous_pass_rate=previous["pass_rate"] if previous else None)
        for result in results:
            context.log.info(f"gate {result.name}: {'passed' if result.passed else 'FAILED'} - {result.message}")
            yield dg.AssetCheckResult(
                check_name=result.name, passed=result.passed, severity=dg.AssetCheckSeverity.ERROR,
                metadata={"message": result.message, "model": ref.model_name, "run_id": ref.run_id})

    return eval_metrics
