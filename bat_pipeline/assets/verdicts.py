"""`episode_verdicts`: the deterministic checks of each episode (SPEC §6)."""

import dagster as dg

from bat_pipeline.assets.common import GROUP, counts, episode_table
from bat_pipeline.engine.contracts import Task
from bat_pipeline.engine.verdicts import decide, error_verdict
from bat_pipeline.storage import PartitionRef, load_episodes, publish_reference, write_episodes, write_json


def build(partitions: dg.PartitionsDefinition, prefix: str) -> dg.AssetsDefinition:
    @dg.asset(
        key_prefix=prefix, group_name=GROUP, partitions_def=partitions,
        description="One check per expectation; the episode passes when every check does. "
                    "Also writes the reference's episode files, before any judging.",
    )
    def episode_verdicts(context: dg.AssetExecutionContext, span_trajectories: PartitionRef,
                         task_specs: list[Task]) -> PartitionRef:
        ref = span_trajectories
        tasks = {t.id: t for t in task_specs}
        episodes = load_episodes(ref.episodes_dir)
        for episode in episodes:
            task = tasks.get(episode.task_id)
            if episode.eval_error:
                episode.verdict = error_verdict(episode.eval_error)
            elif task is None:
                episode.verdict = error_verdict(f"task '{episode.task_id}' is no longer in the dataset")
            else:
                episode.verdict = decide(task, episode.final_status, episode.final_output,
                                         episode.trace.trajectory)
        write_episodes(ref.episodes_dir, episodes)
        write_json(ref.file("verdicts.json"), {
            e.conversation_id: e.verdict.model_dump(mode="json") for e in episodes})
        out = publish_reference(ref, episodes, copy=[*ref.own_span_files(), ref.log_file])
        summary = counts(episodes)
        for line in (f"{e.conversation_id}: {'PASS' if e.verdict.passed else 'FAIL'} - {e.verdict.reason}"
                     for e in episodes if not e.verdict.passed):
            context.log.info(line)
        context.add_output_metadata({
            **summary,
            "reference_output": dg.MetadataValue.path(str(out)),
            "preview": episode_table(episodes),
        })
        return ref

    return episode_verdicts
