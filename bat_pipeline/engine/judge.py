"""The judge step (SPEC §7): every LLM scorer that applies to an episode, asked through
one judge, and bat-cli's `qualitative_scores` derived from the rows they write.

The scorers are the registry's `@llm` ones (engine.scorers), chosen per episode by their
`applies`; each gets `ScoringInput(task, episode, options=JudgeSettings)` and the judge
(engine.scorers.judging.Judge). An episode whose task left the dataset gets a stand-in
task (`judging.cannot_judge` holds for it). No clock and no I/O but the judge's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from bat_pipeline.engine.contracts import RUBRICS, SCORE_FIELDS, Episode, JudgeScores, JudgeSettings, ScoreRow, Task
from bat_pipeline.engine.judge_samples import SampleJudge, last_word, panel_rows, sampled
from bat_pipeline.engine.redaction import Redactor
from bat_pipeline.engine.scorers.judging import FAILED, SKIPPED, Judge, null_row, stand_in_task
from bat_pipeline.engine.scorers.registry import Scorer, ScoringInput, scorers_for
from bat_pipeline.engine.verdicts import agentv_verdict_rows, verdict_from_rows


class JudgeStats(BaseModel):
    """What one judging run did."""

    episodes: int = 0
    """Episodes that could be judged (their attempt did not fail)."""
    questions: int = 0
    """Questions the scorers asked (skipped ones not counted)."""
    calls: int = 0
    """Questions sent to the judge, i.e. not served from the cache."""
    requests: int = 0
    """HTTP requests made, retries and structured-output fallbacks included."""
    text_fallbacks: list[str] = Field(default_factory=list)
    """Purposes switched to plain-text answers because structured output was refused
    (each cost one more request)."""
    retries: int = 0
    """Requests sent again after a timeout, a connection error or an unreadable answer."""
    tokens_in: int = 0
    """Prompt tokens the answered requests cost, as the server reported them."""
    tokens_out: int = 0
    cache_hits: int = 0
    """Questions answered from the judge cache (no request made)."""
    failures: int = 0
    """Rows left without a value because the judge, the prompt or the scorer failed."""
    skipped: int = 0
    """Rows with nothing to judge (tool_call for a task without expected tool calls, the
    rubrics outcome mode does not ask)."""


class JudgeRunResult(BaseModel):
    """One judging run: per episode (in the order given) its LLM rows and the scores
    derived from them, and the run's stats."""

    rows: list[list[ScoreRow]]
    scores: list[JudgeScores]
    stats: JudgeStats

    def mean_scores(self) -> dict[str, float | None]:
        """Score field → mean over the non-null scores (None when there is none)."""
        return mean_scores(self.scores)


async def run_llm_scorers(
    episodes: Sequence[Episode],
    tasks: Mapping[str, Task] | Iterable[Task],
    judge: Judge,
    settings: JudgeSettings,
    *,
    stats: JudgeStats | None = None,
    redactor: Redactor | None = None,
    project: Collection[str] = (),
    panel: Sequence[Judge] = (),
    runner: Any = None,
) -> JudgeRunResult:
    """Run the LLM scorers of every episode with `judge`, all at once (the judge bounds
    its calls in flight). Each episode's LLM rows replace its earlier ones in `scores`
    (deterministic rows kept, first) and give its `qualitative_scores`. Never raises for an
    episode: a scorer that raises leaves one `judge failed: …` row. `stats`: filled in
    (episodes, skipped, failures) beside what the judge counts into it; `redactor`: every
    row passes through it; `project`: the modules of the project's own scorers (only they,
    and the built-in ones, apply); `runner`: runs graders' processes for the scorers that
    need one (ScoringInput.runner). An AgentV test's verdict is computed again from its
    pass rule, the LLM graders' rows included."""
    task_by_id = dict(tasks) if isinstance(tasks, Mapping) else {t.id: t for t in tasks}
    stats = stats if stats is not None else JudgeStats()
    redactor = redactor or Redactor()
    found = await asyncio.gather(
        *(_episode_rows(e, task_by_id.get(e.task_id), [judge, *panel], settings, project, runner) for e in episodes)
    )
    rows = [[redactor.record(row) for row in own] for own in found]
    for episode, own in zip(episodes, rows, strict=True):
        record(episode, own)
        _settle_agentv(task_by_id.get(episode.task_id), episode)
    flat = [row for own in rows for row in own]
    stats.episodes += sum(1 for e in episodes if not e.eval_error)
    stats.skipped += sum(1 for row in flat if row.value is None and row.reason.startswith(SKIPPED))
    # A failed rubric row starts with FAILED; an AgentV LLM grader's is a grader error (details.error).
    stats.failures += sum(
        1 for row in flat if row.value is None and (row.reason.startswith(FAILED) or bool(row.details.get("error")))
    )
    return JudgeRunResult(rows=rows, scores=[e.qualitative_scores or JudgeScores() for e in episodes], stats=stats)


async def _episode_rows(
    episode: Episode,
    task: Task | None,
    judges: Sequence[Judge],
    settings: JudgeSettings,
    project: Collection[str],
    runner: Any = None,
) -> list[ScoreRow]:
    item = ScoringInput(task=task or stand_in_task(episode.task_id), episode=episode, options=settings, runner=runner)
    found = await asyncio.gather(
        *(_panel_rows(s, item, judges, settings.runs) for s in scorers_for(item, "llm", project))
    )
    return [row for rows in found for row in rows]


async def _panel_rows(scorer: Scorer, item: ScoringInput, judges: Sequence[Judge], runs: int) -> list[ScoreRow]:
    """The scorer's rows from every judge, each asked `runs` times (engine.judge_samples)."""

    async def one_judge(judge: Judge) -> list[ScoreRow]:
        asked = [judge] if runs == 1 else [SampleJudge(judge, k) for k in range(runs)]
        per_run = await asyncio.gather(*(_scorer_rows(scorer, item, j) for j in asked))
        return sampled(per_run, scorer.reduce)

    per_judge = await asyncio.gather(*(one_judge(j) for j in judges))
    return per_judge[0] if len(per_judge) == 1 else panel_rows(per_judge)


async def _scorer_rows(scorer: Scorer, item: ScoringInput, judge: Judge) -> list[ScoreRow]:
    try:
        rows = list(await scorer.fn(item, judge))
    except Exception as exc:  # noqa: BLE001 - one scorer's bug must not cost the other rows
        why = f"{FAILED}the scorer raised {type(exc).__name__}: {exc}"
        return [null_row(scorer.name, scorer.name, judge.name, why)]
    return [row if row.judge else row.model_copy(update={"judge": judge.name}) for row in rows]


def record(episode: Episode, rows: list[ScoreRow]) -> None:
    """Put the LLM rows on the episode: rows with a `judge` are replaced, the others kept
    before them; `qualitative_scores` derived from the rows."""
    episode.scores = [row for row in episode.scores if row.judge is None] + rows
    episode.qualitative_scores = qualitative_scores(rows)


def _settle_agentv(task: Task | None, episode: Episode) -> None:
    """An AgentV test's final verdict, from its pass rule over every grader's row, the
    judge's included (SPEC §13); a bat-cli task's verdict is left as it is. An AgentV test
    has no bat-cli judge scores (its rows say what the judge gave); nor has an ADK case,
    whose verdict is computed again from its rows, the judged metrics' included."""
    if task is not None and task.agentv is not None:
        episode.scores = agentv_verdict_rows(task, episode, episode.scores)
        episode.verdict = verdict_from_rows(episode.scores)
        if not any(row.scorer in SCORE_FIELDS for row in episode.scores):
            episode.qualitative_scores = None
    elif task is not None and task.adk is not None:
        # A Google ADK case: its judged metrics gate like the others (every one at or above
        # its threshold, engine/scorers/adk_*.py).
        episode.verdict = verdict_from_rows(episode.scores)
        episode.qualitative_scores = None


def qualitative_scores(rows: Iterable[ScoreRow]) -> JudgeScores:
    """bat-cli's record from the rows of the four rubric scorers (the row with the last
    word per rubric: a panel's, else the median of N runs, else the single run): the score
    fields, `judge_reasoning` (rubric → the row's reason) and `judge_errors` (rubric →
    `details.error` of a failed row), in rubric order. Other scorers' rows are not in it."""
    by_rubric: dict[str, ScoreRow] = {}
    for row in last_word(list(rows)):
        if row.scorer in SCORE_FIELDS:
            by_rubric.setdefault(row.scorer, row)
    values: dict[str, Any] = {}
    reasoning: dict[str, str] = {}
    errors: dict[str, str] = {}
    for rubric in (r for r in RUBRICS if r in by_rubric):
        found = by_rubric[rubric]
        if found.value is not None:
            values[SCORE_FIELDS[rubric]] = found.value
        reasoning[rubric] = found.reason
        if found.value is None and isinstance(found.details.get("error"), str):
            errors[rubric] = found.details["error"]
    return JudgeScores(**values, judge_reasoning=reasoning, judge_errors=errors)


def mean_scores(scores: Iterable[JudgeScores]) -> dict[str, float | None]:
    """Score field → mean over the non-null scores (None when there is none)."""
    scores = list(scores)
    means: dict[str, float | None] = {}
    for rubric in RUBRICS:
        values = [v for v in (s.score(rubric) for s in scores) if v is not None]
        means[SCORE_FIELDS[rubric]] = sum(values) / len(values) if values else None
    return means


def report(settings: JudgeSettings, judged_at: str, stats: JudgeStats, episodes: Sequence[Episode]) -> dict[str, Any]:
    """judge.json of a partition the judge ran on: the judge, when, the stats, the mean
    scores and each episode's `qualitative_scores`."""
    return {
        "enabled": True,
        "judge": {"provider": settings.provider, "model": settings.model, "mode": settings.mode},
        "judged_at": judged_at,
        "stats": stats.model_dump(mode="json"),
        "mean_scores": mean_scores(e.qualitative_scores for e in episodes if e.qualitative_scores),
        "episodes": [
            {
                "task_id": e.task_id,
                "attempt_index": e.attempt_index,
                "qualitative_scores": e.qualitative_scores.model_dump(mode="json") if e.qualitative_scores else None,
            }
            for e in episodes
        ],
    }
