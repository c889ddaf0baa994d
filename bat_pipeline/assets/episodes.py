"""`agent_episodes`: k attempts of every task against the agent, one partition per model."""

import asyncio
import secrets
from datetime import datetime, timezone

import dagster as dg

from bat_pipeline.assets.common import GROUP, episode_table, evaluation_run_id, redact_log, wants_resume
from bat_pipeline.engine.contracts import Episode, EvalConfig, Task
from bat_pipeline.engine.contracts.names import conversation_id
from bat_pipeline.resources.a2a_conversations import Attempt, run_attempts
from bat_pipeline.resources.agent_process import AgentLauncher, AgentStartError
from bat_pipeline.resources.evaluation import EvaluationResource
from bat_pipeline.engine.errors import InputError
from bat_pipeline.storage import (
    AGENT_SPANS,
    PartitionRef,
    check_result_folders,
    load_episodes,
    new_partition,
    resumed_partition,
    save_ref,
    store_episodes,
)


class EpisodesConfig(dg.Config):
    resume: bool = False
    """Re-run only the episodes of this model's last run that are missing or ended in an
    eval error; keep the others (also set by the run tag `bat_pipeline/resume=true`)."""


def plan_attempts(tasks: list[Task], k: int, kept: list[Episode], conversation_suffix: str = "") -> list[Attempt]:
    """Every (task, attempt) not already stored without an eval error. With a suffix each
    conversation id is `<task id>__try<n><suffix>`, else `<task id>__try<n>`."""
    done = {(e.task_id, e.attempt_index) for e in kept if not e.eval_error}
    return [Attempt(t, i, f"{conversation_id(t.id, i)}{conversation_suffix}" if conversation_suffix else None)
            for t in tasks for i in range(k) if (t.id, i) not in done]


def needs_fresh_conversation_ids(config: EvalConfig, resumed: bool) -> bool:
    """Whether `<task id>__try<n>` could name conversations other than this run's in the
    span files read: a resumed run (the killed run's half-done conversations), an agent
    at `agent.url` or one writing to `agent.spans` (files kept across runs and shared by
    the models' partitions)."""
    return resumed or bool(config.agent.url) or bool(config.agent.spans)


def build(partitions: dg.PartitionsDefinition, prefix: str) -> dg.AssetsDefinition:
    @dg.asset(
        key_prefix=prefix, group_name=GROUP, partitions_def=partitions,
        description="Conversations with the agent over A2A (SPEC §4): k attempts per task, "
                    "the agent started for this model only. Each episode is stored as it ends.",
    )
    def agent_episodes(context: dg.AssetExecutionContext, config: EpisodesConfig,
                       evaluation: EvaluationResource, task_specs: list[Task]) -> PartitionRef:
        eval_config = evaluation.config()
        model_key = context.partition_key
        try:  # a full disk or a read-only folder is found before the agent starts
            check_result_folders(evaluation.root, eval_config)
        except InputError as exc:
            raise dg.Failure(description=str(exc)) from None
        model = eval_config.model(model_key)
        ref = resumed_partition(evaluation.root, model_key, eval_config.agent_id, context.run.run_id) \
            if wants_resume(context, config.resume) else None
        resumed = ref is not None
        kept: list[Episode] = []
        if ref is None:
            ref = new_partition(evaluation.root, eval_config, model_key, evaluation_run_id(context), context.run.run_id)
        else:
            kept = [e for e in load_episodes(ref) if not e.eval_error]
            context.log.info(f"resuming run {ref.run_id}: {len(kept)} episodes kept")
        ref.started_at = ref.started_at or datetime.now(timezone.utc).isoformat()
        ref.dir.mkdir(parents=True, exist_ok=True)
        save_ref(ref)

        launch = secrets.token_hex(4)
        suffix = f"-r{launch}" if needs_fresh_conversation_ids(eval_config, resumed) else ""
        attempts = plan_attempts(task_specs, eval_config.evaluation.k, kept, suffix)
        total = len(attempts)
        done = {"n": 0, "completed": 0, "errors": 0}

        redactor = evaluation.redactor()
        redact_log(context, redactor)

        def store(episode: Episode) -> None:
            episode = redactor.record(episode)
            store_episodes(ref, [episode])
            save_ref(ref)
            done["n"] += 1
            done["completed"] += episode.final_status == "completed"
            done["errors"] += bool(episode.eval_error)
            context.log.info(f"{done['n']}/{total} episodes done ({done['completed']} completed, "
                             f"{done['errors']} eval errors) for {model.name}")

        extra_spans = [eval_config.resolve(p) for p in eval_config.evaluation.extra_spans]
        spans_name = f"agent-resume-{launch}.jsonl" if resumed else AGENT_SPANS
        launcher = AgentLauncher(eval_config, model, ref.dir, log=context.log.info, spans_name=spans_name,
                                 redactor=redactor)
        if attempts:
            try:
                with launcher.running() as agent:
                    # Recorded before the first conversation: a run killed from here on
                    # leaves a record a resume reads the kept episodes' spans from.
                    ref.add_span_files([*agent.spans_files, *extra_spans])
                    save_ref(ref)
                    asyncio.run(run_attempts(
                        agent.url, attempts, model.name,
                        concurrency=eval_config.evaluation.concurrency, on_episode=store,
                        turn_timeout_s=eval_config.evaluation.turn_timeout_s))
            except AgentStartError as exc:
                # Not chained: Dagster would store the cause's unredacted message too.
                raise dg.Failure(description=redactor.text(f"{model.name}: {exc}"),
                                 metadata={"agent_log": dg.MetadataValue.path(str(ref.log_file))}) from None
        episodes = load_episodes(ref)
        ref.add_span_files(extra_spans)
        ref.finished_at = datetime.now(timezone.utc).isoformat()
        save_ref(ref)
        errors = sum(1 for e in episodes if e.eval_error)
        context.add_output_metadata({
            "run_id": ref.run_id,
            "model": model.name,
            "episodes": len(episodes),
            "conversations_made": total,
            "kept_from_previous_run": len(kept),
            "completed": sum(1 for e in episodes if e.final_status == "completed"),
            "eval_errors": errors,
            "storage": dg.MetadataValue.path(str(ref.dir)),
            "preview": episode_table(episodes),
        })
        return ref

    return agent_episodes
