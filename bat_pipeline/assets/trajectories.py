"""`span_trajectories`: what the agent did, rebuilt from its spans after it stopped."""

import dagster as dg

from bat_pipeline.assets.common import GROUP
from bat_pipeline.engine.agent_folder import spans_files
from bat_pipeline.engine.contracts import Task
from bat_pipeline.engine.spans import load_spans
from bat_pipeline.engine.trajectories import build_trajectory, recorded_tool_calls
from bat_pipeline.resources.evaluation import EvaluationResource
from bat_pipeline.storage import PartitionRef, load_episodes, write_episodes, write_json


def build(partitions: dg.PartitionsDefinition, prefix: str) -> dg.AssetsDefinition:
    @dg.asset(
        key_prefix=prefix, group_name=GROUP, partitions_def=partitions,
        description="Trajectories from the agent's span files and `extra_spans` (SPEC §5), "
                    "all files read once.",
    )
    def span_trajectories(context: dg.AssetExecutionContext, evaluation: EvaluationResource,
                          agent_episodes: PartitionRef, task_specs: list[Task]) -> PartitionRef:
        ref = agent_episodes
        config = evaluation.config()
        own = sorted(ref.spans_dir.glob("*.jsonl"))
        files = own + spans_files(config.agent_dir, config.evaluation.extra_spans)
        index = load_spans(files)
        for message in index.messages():
            context.log.warning(message)
        turns = {t.id: t.turns for t in task_specs}
        episodes = load_episodes(ref.episodes_dir)
        trajectories = {}
        for episode in episodes:
            trajectory = build_trajectory(index, episode.conversation_id, turns.get(episode.task_id, []))
            episode.trace.trajectory = trajectory
            episode.trace.tool_calls = recorded_tool_calls(trajectory)
            trajectories[episode.conversation_id] = trajectory.model_dump(mode="json")
        # Span files outside the partition folder (agent.spans, extra_spans) are not scrubbed.
        redactor = evaluation.redactor()
        write_episodes(ref.episodes_dir, [redactor.record(e) for e in episodes])
        write_json(ref.file("trajectories.json"), redactor.data(trajectories))
        found = sum(1 for e in episodes if e.trace.trajectory.found)
        context.add_output_metadata({
            "spans_read": len(index),
            "span_files": dg.MetadataValue.json([str(f) for f in files]),
            "trajectories_found": found,
            "trajectories_missing": len(episodes) - found,
            "model_calls": sum(e.trace.trajectory.totals.model_calls for e in episodes),
            "tool_calls": sum(e.trace.trajectory.totals.tool_calls for e in episodes),
            "agent_calls": sum(e.trace.trajectory.totals.agent_calls for e in episodes),
            "failed_steps": sum(e.trace.trajectory.totals.errors for e in episodes),
            "skipped_lines": dg.MetadataValue.json(index.messages()),
        })
        return ref

    return span_trajectories
