"""`agent_episodes`: k attempts of every task against the agent, one partition per model."""

import asyncio
import secrets
import shutil
from datetime import datetime, timezone

import dagster as dg

from bat_pipeline.assets.common import GROUP, episode_table, evaluation_run_id, redact_log, wants_resume
from bat_pipeline.engine.contracts import Episode, EvalConfig, Task
from bat_pipeline.engine.contracts.episode import conversation_id
from bat_pipeline.resources.a2a_conversations import Attempt, run_attempts
from bat_pipeline.resources.agent_process import AgentLauncher, AgentStartError
from bat_pipeline.resources.evaluation import EvaluationResource
from bat_pipeline.engine.errors import InputError
from bat_pipeline.storage import (
    check_writable,
    PartitionRef,
    latest_run_dir,
    load_episodes,
    load_ref,
    partition_dir,
    reference_dir,
    save_ref,
    write_episode,
)


class EpisodesConfig(dg.Config):
    resume: bool = False
    """Re-run only the episodes of this model's last run that are missing or ended in an
    eval error; keep the others (also set by the run tag `bat_pipeline/resume=true`)."""


def _fresh_ref(context, config: EvalConfig, evaluation: EvaluationResource, model_key: str) -> PartitionRef:
    model = config.model(model_key)
    run_id = evaluation_run_id(context)
    directory = partition_dir(evaluation.root, run_id, model_key)
    # A retry of the same run overwrites: nothing from a previous attempt is mixed in.
    if directory.exists():
        shutil.rmtree(directory)
    return PartitionRef(
        run_id=run_id, run_name=config.evaluation.run_name, agent_id=config.agent_id, model_key=model_key,
        model_name=model.name, k=config.evaluation.k, agent_dir=config.agent_dir, dir=directory,
        output_dir=reference_dir(config.resolve(config.evaluation.output_dir), run_id,
                                 config.evaluation.run_name, model.name),
        dagster_run_id=context.run.run_id)


def _resumed_ref(context, evaluation: EvaluationResource, model_key: str) -> PartitionRef | None:
    directory = latest_run_dir(evaluation.root, model_key, evaluation.config().agent_id)
    if directory is None:
        return None
    ref = load_ref(directory)
    return ref.model_copy(update={"dagster_run_id": context.run.run_id})


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
            check_writable(evaluation.root, "pipeline's results (BAT_PIPELINE_HOME)")
            check_writable(eval_config.resolve(eval_config.evaluation.output_dir), "output files")
        except InputError as exc:
            raise dg.Failure(description=str(exc)) from None
        model = eval_config.model(model_key)
        ref = _resumed_ref(context, evaluation, model_key) if wants_resume(context, config.resume) else None
        resumed = ref is not None
        kept: list[Episode] = []
        if ref is None:
            ref = _fresh_ref(context, eval_config, evaluation, model_key)
        else:
            kept = [e for e in load_episodes(ref.episodes_dir) if not e.eval_error]
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
            write_episode(ref.episodes_dir, episode)
            done["n"] += 1
            done["completed"] += episode.final_status == "completed"
            done["errors"] += bool(episode.eval_error)
            context.log.info(f"{done['n']}/{total} episodes done ({done['completed']} completed, "
                             f"{done['errors']} eval errors) for {model.name}")

        extra_spans = [eval_config.resolve(p) for p in eval_config.evaluation.extra_spans]
        spans_name = f"agent-resume-{launch}.jsonl" if resumed else "agent.jsonl"
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
        episodes = load_episodes(ref.episodes_dir)
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
