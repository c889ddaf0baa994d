"""`agent_episodes`: k attempts of every task against the agent, one partition per model."""

import dagster as dg

from bat_pipeline.assets.common import (
    evaluation_run_id,
    metadata,
    redact_log,
    run_started,
    stage_asset,
    table,
    wants_resume,
)
from bat_pipeline.engine.contracts import Task
from bat_pipeline.engine.errors import InputError
from bat_pipeline.engine.figures import EPISODE_COLUMNS, episode_preview
from bat_pipeline.resources.agent_process import AgentStartError
from bat_pipeline.resources.episodes import collect_episodes
from bat_pipeline.resources.evaluation import EvaluationResource
from bat_pipeline.resources.targets import TargetHealthError
from bat_pipeline.storage import PartitionRef


class EpisodesConfig(dg.Config):
    resume: bool = False
    """Re-run only the episodes of this model's last run that are missing or ended in an
    eval error; keep the others (also set by the run tag `bat_pipeline/resume=true`)."""


def agent_episodes(
    context: dg.AssetExecutionContext, config: EpisodesConfig, evaluation: EvaluationResource, task_specs: list[Task]
) -> PartitionRef:
    """Conversations with the agent over A2A (SPEC §4): k attempts per task, the agent
    started for this model only. Each episode is stored as it ends."""
    redactor = evaluation.redactor()
    redact_log(context, redactor)
    try:
        collected = collect_episodes(
            evaluation.config(),
            evaluation.root,
            context.partition_key,
            task_specs,
            run_id=evaluation_run_id(context),
            dagster_run_id=context.run.run_id,
            resume=wants_resume(context, config.resume),
            redactor=redactor,
            log=context.log.info,
            run_started=run_started(context),
        )
    except InputError as exc:  # a full disk or a read-only folder, found before the agent starts
        raise dg.Failure(description=str(exc)) from None
    except TargetHealthError as exc:  # every test is stored as an error episode with its output
        raise dg.Failure(description=str(exc)) from None
    except AgentStartError as exc:
        raise dg.Failure(description=str(exc), metadata=metadata({"agent_log": exc.log_file})) from None
    context.add_output_metadata(
        {**metadata(collected.figures()), "preview": table(episode_preview(collected.episodes), EPISODE_COLUMNS)}
    )
    return collected.ref


def build(partitions: dg.PartitionsDefinition, prefix: str) -> dg.AssetsDefinition:
    return stage_asset(agent_episodes, prefix, partitions_def=partitions)
