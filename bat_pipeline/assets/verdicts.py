"""`episode_verdicts`: the deterministic scorers' rows of each episode and the verdict they
give (SPEC §6)."""

import dagster as dg

from bat_pipeline.assets.common import GROUP, counts, episode_table
from bat_pipeline.engine.contracts import Task
from bat_pipeline.engine.verdicts import check_partition
from bat_pipeline.resources.evaluation import EvaluationResource
from bat_pipeline.storage import PartitionRef, load_episodes, publish_reference, store_episodes, write_json


def build(partitions: dg.PartitionsDefinition, prefix: str) -> dg.AssetsDefinition:
    @dg.asset(
        key_prefix=prefix, group_name=GROUP, partitions_def=partitions,
        description="One check per expectation; the episode passes when every check does. "
                    "Also writes the reference's episode files, before any judging.",
    )
    def episode_verdicts(context: dg.AssetExecutionContext, span_trajectories: PartitionRef,
                         task_specs: list[Task], evaluation: EvaluationResource) -> PartitionRef:
        ref = span_trajectories
        episodes = check_partition(load_episodes(ref), task_specs, evaluation.config())
        store_episodes(ref, episodes)
        write_json(ref.file("verdicts.json"), {
            e.conversation_id: e.verdict.model_dump(mode="json") for e in episodes if e.verdict})
        out = publish_reference(ref, episodes, copy=[*ref.own_span_files(), ref.log_file])
        for e in episodes:
            if e.verdict and not e.verdict.passed:
                context.log.info(f"{e.conversation_id}: FAIL - {e.verdict.reason}")
        context.add_output_metadata({
            **counts(episodes),
            "reference_output": dg.MetadataValue.path(str(out)),
            "preview": episode_table(episodes),
        })
        return ref

    return episode_verdicts
