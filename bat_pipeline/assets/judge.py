"""Judge scores of one model's episodes (SPEC §7): the body of the `judge_scores` asset."""

import asyncio
import concurrent.futures
from collections.abc import Coroutine
from datetime import datetime, timezone
from typing import Any, TypeVar

import dagster as dg
from pydantic import BaseModel

from bat_pipeline import storage
from bat_pipeline.assets.common import GROUP
from bat_pipeline.engine.contracts import RUBRICS, Episode, EvalConfig, JudgeScores, Task
from bat_pipeline.engine.environment import judge_key_sources, project_environ
from bat_pipeline.engine.redaction import Redactor
from bat_pipeline.resources.evaluation import EvaluationResource
from bat_pipeline.resources.judge import (
    JudgeClient,
    JudgeConfigError,
    JudgeResource,
    JudgeRunResult,
    JudgeStats,
)
from bat_pipeline.storage import PartitionRef

T = TypeVar("T")


class JudgeOutcome(BaseModel):
    """What judging one partition did, for the asset's metadata."""

    enabled: bool
    """False when the judge is off (`evaluation.qualitative: false`)."""
    reason: str | None = None
    """Why the judge did not run, when it did not."""
    judge: str | None = None
    """`provider:model` of the judge."""
    mode: str | None = None
    episodes: int = 0
    stats: JudgeStats | None = None
    mean_scores: dict[str, float | None] = {}
    """Score field (response_relevance, …) → mean over the episodes' non-null scores."""

    def metadata(self) -> dict[str, Any]:
        """Flat values for Dagster metadata: judge, episodes, calls, cache hits, failures and
        `mean_<score field>` (absent means: no score for that field)."""
        if not self.enabled:
            return {"judge": "off", "reason": self.reason or "", "episodes": self.episodes}
        stats = self.stats or JudgeStats()
        meta: dict[str, Any] = {
            "judge": self.judge, "mode": self.mode, "episodes": self.episodes,
            "calls": stats.calls, "requests": stats.requests, "cache_hits": stats.cache_hits,
            "failures": stats.failures, "skipped": stats.skipped,
        }
        meta.update({f"mean_{name}": value for name, value in self.mean_scores.items() if value is not None})
        return meta


def judge_partition(ref: PartitionRef, config: EvalConfig, tasks: list[Task],
                    judge: JudgeClient | JudgeResource, redactor: Redactor | None = None) -> JudgeOutcome:
    """Judge the stored episodes of one partition and record the scores.

    Loads the episodes of `ref.episodes_dir`; when `config.evaluation.qualitative` is on,
    judges them, writes each episode's `qualitative_scores` back into its file, and writes
    `ref.file("judge.json")` (judge, stats, means, scores per episode). When it is off,
    episodes are left untouched and judge.json records that the judge is off. A
    JudgeResource reads the key from the agent project's `.env` overlaid by the shell; a
    missing key raises JudgeConfigError before anything is asked; a failing judge never
    raises (its scores stay null with the reason). An episode with an eval error (the
    attempt failed, e.g. a turn timed out) is not sent: its scores are null and each
    rubric's reasoning says why. `redactor` (for a JudgeResource): the evaluation's
    secrets, kept out of reasoning and errors besides the judge's own key.

    As an asset (`judge_scores`, partitioned by model, upstream `episode_verdicts`): return
    `ref` and attach `outcome.metadata()`: the mean per rubric (`mean_<score field>`), calls
    made, cache hits and failures, plus judge, mode, episodes, requests and skipped.
    """
    episodes = storage.load_episodes(ref.episodes_dir)
    settings = config.judge
    if not config.evaluation.qualitative or settings is None:
        reason = ("evaluation.qualitative is false in eval.yaml" if not config.evaluation.qualitative
                  else "eval.yaml has no judge block")
        outcome = JudgeOutcome(enabled=False, reason=reason, episodes=len(episodes))
        storage.write_json(ref.file("judge.json"), {"enabled": False, "reason": reason,
                                                    "judged_at": _now()})
        return outcome

    if isinstance(judge, JudgeResource):
        # The key comes from the project's .env overlaid by the shell, as under `bat eval`.
        client = judge.client(settings, redactor, environ=project_environ(config.agent_dir),
                              looked_in=judge_key_sources(config.agent_dir))
    else:
        client = judge
    judged = [e for e in episodes if not e.eval_error]
    result: JudgeRunResult = _run(client.judge_episodes(judged, tasks))
    for episode, scores in zip(judged, result.scores):
        episode.qualitative_scores = scores
    for episode in episodes:
        if episode.eval_error:
            episode.qualitative_scores = not_judged(episode, client.settings.mode)
        storage.write_episode(ref.episodes_dir, episode)
    outcome = JudgeOutcome(enabled=True, judge=client.name, mode=client.settings.mode,
                           episodes=len(episodes), stats=result.stats, mean_scores=result.mean_scores())
    storage.write_json(ref.file("judge.json"), {
        "enabled": True,
        "judge": {"provider": client.settings.provider, "model": client.settings.model,
                  "mode": client.settings.mode},
        "judged_at": _now(),
        "stats": result.stats.model_dump(mode="json"),
        "mean_scores": outcome.mean_scores,
        "episodes": [
            {"task_id": ep.task_id, "attempt_index": ep.attempt_index,
             "qualitative_scores": ep.qualitative_scores.model_dump(mode="json")}
            for ep in episodes
        ],
    })
    return outcome


def not_judged(episode: Episode, mode: str) -> JudgeScores:
    """Null scores for an episode whose attempt failed (eval error, turn timeout): its
    conversation is incomplete, so the judge is not asked; each rubric says why."""
    why = f"not judged: the attempt failed ({episode.eval_error})"
    return JudgeScores(judge_reasoning={r: why for r in (("task_completion",) if mode == "outcome" else RUBRICS)})


def _run(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion, also from code already inside an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def build(partitions: dg.PartitionsDefinition, prefix: str) -> dg.AssetsDefinition:
    """The `judge_scores` asset over `judge_partition`."""

    @dg.asset(
        key_prefix=prefix, group_name=GROUP, partitions_def=partitions,
        description="LLM judge scores per rubric (SPEC §7), added to the stored episodes and the "
                    "reference files. Answers are cached by content: re-judging unchanged episodes "
                    "asks nothing. Off unless evaluation.qualitative is true.",
    )
    def judge_scores(context: dg.AssetExecutionContext, evaluation: EvaluationResource,
                     judge: JudgeResource, episode_verdicts: PartitionRef,
                     task_specs: list[Task]) -> PartitionRef:
        ref = episode_verdicts
        try:
            outcome = judge_partition(ref, evaluation.config(), task_specs, judge, evaluation.redactor())
        except JudgeConfigError as exc:
            raise dg.Failure(description=f"the judge cannot run: {exc}") from None
        if outcome.enabled:
            storage.publish_reference(ref, storage.load_episodes(ref.episodes_dir))
        context.add_output_metadata(outcome.metadata())
        return ref

    return judge_scores
