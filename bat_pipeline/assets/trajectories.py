"""`span_trajectories`: what the agent did, rebuilt from its spans after it stopped."""

from datetime import datetime

import dagster as dg

from bat_pipeline.assets.common import GROUP
from bat_pipeline.engine.agent_folder import spans_files
from bat_pipeline.engine.contracts import Task
from bat_pipeline.engine.spans import load_spans, wait_until_quiet
from bat_pipeline.engine.trajectories import build_trajectory, recorded_tool_calls
from bat_pipeline.resources.evaluation import EvaluationResource
from bat_pipeline.storage import PartitionRef, load_episodes, store_episodes, write_json


def build(partitions: dg.PartitionsDefinition, prefix: str) -> dg.AssetsDefinition:
    @dg.asset(
        key_prefix=prefix, group_name=GROUP, partitions_def=partitions,
        description="Trajectories from the span files the episodes step recorded (the agent's "
                    "own, `agent.spans`, `extra_spans`; SPEC §5), read once they are quiet.",
    )
    def span_trajectories(context: dg.AssetExecutionContext, evaluation: EvaluationResource,
                          agent_episodes: PartitionRef, task_specs: list[Task]) -> PartitionRef:
        ref = agent_episodes
        settings = evaluation.config(models=False).evaluation
        # An agent left running (agent.url) may still hold spans of the last conversations.
        ended = datetime.fromisoformat(ref.finished_at).timestamp() if ref.finished_at else 0.0
        waited, quiet = wait_until_quiet(ref.span_paths(), settle_s=settings.spans_settle_s,
                                         wait_s=settings.spans_wait_s, since=ended)
        if not quiet:
            context.log.warning(f"span files still changing after {waited:.1f}s "
                                "(evaluation.spans_wait_s); read as they are")
        # Folders (extra_spans) are listed now; paths that do not exist are left out.
        files = spans_files(ref.dir, ref.span_paths())
        index = load_spans(files)
        for message in index.messages():
            context.log.warning(message)
        turns = {t.id: t.turns for t in task_specs}
        episodes = load_episodes(ref)
        trajectories = {}
        for episode in episodes:
            trajectory = build_trajectory(index, episode.conversation_id, turns.get(episode.task_id, []))
            episode.trace.trajectory = trajectory
            episode.trace.tool_calls = recorded_tool_calls(trajectory)
            trajectories[episode.conversation_id] = trajectory.model_dump(mode="json")
        # Span files outside the partition folder (agent.spans, extra_spans) are not scrubbed.
        redactor = evaluation.redactor()
        store_episodes(ref, [redactor.record(e) for e in episodes])
        write_json(ref.file("trajectories.json"), redactor.data(trajectories))
        found = sum(1 for e in episodes if e.trace.trajectory.found)
        context.add_output_metadata({
            "spans_read": len(index),
            "spans_wait_s": round(waited, 2),
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
