"""`judge_scores`: the LLM scorers of each episode, asked through the judge (SPEC §7)."""

import dagster as dg

from bat_pipeline.assets.common import stage_asset
from bat_pipeline.engine.contracts import Task
from bat_pipeline.resources.evaluation import EvaluationResource
from bat_pipeline.resources.judge import JudgeConfigError, JudgeResource
from bat_pipeline.resources.judge_partition import judge_partition
from bat_pipeline.storage import PartitionRef, load_episodes, publish_reference


def judge_scores(
    context: dg.AssetExecutionContext,
    evaluation: EvaluationResource,
    judge: JudgeResource,
    episode_verdicts: PartitionRef,
    task_specs: list[Task],
) -> PartitionRef:
    """The LLM scorers of each episode (bat-cli's four judge rubrics, SPEC §7), their rows
    added to the stored episodes and the reference files. Answers are cached by content:
    re-judging unchanged episodes asks nothing. Off unless evaluation.qualitative is true."""
    ref = episode_verdicts
    try:
        outcome = judge_partition(ref, evaluation.config(), task_specs, judge, evaluation.redactor())
    except JudgeConfigError as exc:
        raise dg.Failure(description=f"the judge cannot run: {exc}") from None
    if outcome.enabled:
        publish_reference(ref, load_episodes(ref))
    context.add_output_metadata(outcome.metadata())
    return ref


def build(partitions: dg.PartitionsDefinition, prefix: str) -> dg.AssetsDefinition:
    """The `judge_scores` asset over `judge_partition`."""
    return stage_asset(judge_scores, prefix, phase="judge", partitions_def=partitions)
