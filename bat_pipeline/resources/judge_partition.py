"""The judge step of one partition (SPEC §7): the LLM scorers of each stored episode, asked
through the judge, their rows written back into the episodes and judge.json."""

import asyncio
import concurrent.futures
from collections.abc import Coroutine
from datetime import UTC, datetime
from typing import Any, TypeVar

from pydantic import BaseModel

from bat_pipeline import storage
from bat_pipeline.engine.contracts import EvalConfig, Task
from bat_pipeline.engine.judge import JudgeStats, report
from bat_pipeline.engine.redaction import Redactor
from bat_pipeline.engine.scorers.project import load_project_scorers
from bat_pipeline.resources.judge import JudgeClient, JudgeResource, judge_episodes
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
            "judge": self.judge,
            "mode": self.mode,
            "episodes": self.episodes,
            "calls": stats.calls,
            "requests": stats.requests,
            "cache_hits": stats.cache_hits,
            "failures": stats.failures,
            "skipped": stats.skipped,
        }
        meta.update({f"mean_{name}": value for name, value in self.mean_scores.items() if value is not None})
        return meta


def judge_partition(
    ref: PartitionRef,
    config: EvalConfig,
    tasks: list[Task],
    judge: JudgeClient | JudgeResource,
    redactor: Redactor | None = None,
) -> JudgeOutcome:
    """Run the LLM scorers on the stored episodes of one partition and record their rows.

    When `config.evaluation.qualitative` is on: loads the episodes `ref` records
    and the project's scorer modules (`evaluation.scorers`), runs every LLM scorer that
    applies (engine.judge), writes each episode back with its rows and derived
    `qualitative_scores`, and writes `ref.file("judge.json")` (judge, stats, means, scores
    per episode). When it is off, episodes are left untouched and judge.json says so.
    A JudgeResource reads the key from the agent project's `.env` overlaid by the shell;
    a missing key raises JudgeConfigError before anything is asked; a failing judge never
    raises (its rows stay null with the reason). An episode with an eval error is not sent
    (`not judged: …`). `redactor` (for a JudgeResource): the evaluation's secrets, kept
    out of answers and errors besides the judge's own key.

    As an asset (`judge_scores`): publish the episodes to the reference folder when the
    judge ran, return `ref` and attach `outcome.metadata()`.
    """
    episodes = storage.load_episodes(ref)
    settings = config.judge
    if not config.evaluation.qualitative or settings is None:
        reason = (
            "evaluation.qualitative is false in eval.yaml"
            if not config.evaluation.qualitative
            else "eval.yaml has no judge block"
        )
        storage.write_json(ref.file("judge.json"), {"enabled": False, "reason": reason, "judged_at": _now()})
        return JudgeOutcome(enabled=False, reason=reason, episodes=len(episodes))

    panel: list[JudgeClient] = []
    if isinstance(judge, JudgeResource):
        client = judge.client(settings, redactor, config)
        panel = [judge.client(settings.member(m), redactor, config) for m in settings.panel]
    else:
        client = judge
    load_project_scorers(config)
    result = _run(judge_episodes(client, episodes, tasks, config.evaluation.scorers, panel))
    storage.store_episodes(ref, episodes)
    storage.write_json(ref.file("judge.json"), report(client.settings, _now(), result.stats, episodes))
    return JudgeOutcome(
        enabled=True,
        judge=client.name,
        mode=client.settings.mode,
        episodes=len(episodes),
        stats=result.stats,
        mean_scores=result.mean_scores(),
    )


def _run(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion, also from code already inside an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
