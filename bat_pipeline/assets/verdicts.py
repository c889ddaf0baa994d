"""`episode_verdicts`: the deterministic scorers' rows of each episode and the verdict they
give (SPEC §6)."""

import dagster as dg

from bat_pipeline.assets.common import metadata, stage_asset, table
from bat_pipeline.engine.contracts import Task
from bat_pipeline.engine.figures import EPISODE_COLUMNS, episode_counts, episode_preview, failed_verdicts
from bat_pipeline.engine.measures.classification import expected_label
from bat_pipeline.engine.verdicts import check_partition, verdicts_by_conversation
from bat_pipeline.resources.code_tools import ScorerTools
from bat_pipeline.resources.evaluation import EvaluationResource
from bat_pipeline.storage import PartitionRef, load_episodes, publish_reference, store_episodes, write_json


def episode_verdicts(
    context: dg.AssetExecutionContext,
    span_trajectories: PartitionRef,
    task_specs: list[Task],
    evaluation: EvaluationResource,
) -> PartitionRef:
    """One check per expectation; the episode passes when every check does. Also writes the
    reference's episode files, before any judging."""
    ref = span_trajectories
    config = evaluation.config()
    labels = sorted({label for t in task_specs if (label := expected_label(t, config.metrics.label_field))})
    episodes = check_partition(load_episodes(ref), task_specs, config, options=ScorerTools(config.metrics, labels))
    store_episodes(ref, episodes)
    write_json(ref.file("verdicts.json"), verdicts_by_conversation(episodes))
    out = publish_reference(ref, episodes, copy=[*ref.own_span_files(), ref.log_file])
    for line in failed_verdicts(episodes):
        context.log.info(line)
    context.add_output_metadata(
        {
            **metadata({**episode_counts(episodes), "reference_output": out}),
            "preview": table(episode_preview(episodes), EPISODE_COLUMNS),
        }
    )
    return ref


def build(partitions: dg.PartitionsDefinition, prefix: str) -> dg.AssetsDefinition:
    return stage_asset(episode_verdicts, prefix, phase="verdicts", partitions_def=partitions)
