"""`span_trajectories`: what the agent did, rebuilt from its spans after it stopped."""

import dagster as dg

from bat_pipeline.assets.common import metadata, stage_asset
from bat_pipeline.engine.contracts import Task
from bat_pipeline.engine.target_inputs import agent_partition
from bat_pipeline.engine.trajectories import rebuild_trajectories
from bat_pipeline.resources.evaluation import EvaluationResource
from bat_pipeline.storage import PartitionRef, load_episodes, store_episodes, write_json


def span_trajectories(
    context: dg.AssetExecutionContext,
    evaluation: EvaluationResource,
    agent_episodes: PartitionRef,
    task_specs: list[Task],
) -> PartitionRef:
    """Trajectories from the span files the episodes step recorded (the agent's own,
    `agent.spans`, `extra_spans`; SPEC §5), read once they are quiet."""
    ref = agent_episodes
    # The partition's agent's own settings (an AgentV a2a target's, engine.target_inputs).
    settings = agent_partition(evaluation.config(models=False), context.partition_key)[0].evaluation
    # An agent left running (agent.url) may still hold spans of the last conversations.
    rebuilt = rebuild_trajectories(
        load_episodes(ref),
        task_specs,
        ref.span_paths(),
        base=ref.dir,
        settle_s=settings.spans_settle_s,
        wait_s=settings.spans_wait_s,
        since=ref.finished_timestamp(),
    )
    for warning in rebuilt.warnings():
        context.log.warning(warning)
    # Span files outside the partition folder (agent.spans, extra_spans) are not scrubbed.
    redactor = evaluation.redactor()
    store_episodes(ref, map(redactor.record, rebuilt.episodes))
    write_json(ref.file("trajectories.json"), redactor.data(rebuilt.by_conversation()))
    context.add_output_metadata(metadata(rebuilt.figures()))
    return ref


def build(partitions: dg.PartitionsDefinition, prefix: str) -> dg.AssetsDefinition:
    return stage_asset(span_trajectories, prefix, phase="spans", partitions_def=partitions)
