"""What the agentic-v2-eval judge kinds (`choice`, `quality`, `standard`, `pattern`) share:
whether a kind is asked for an episode, and what the judge sees of it — or the row
standing in when it cannot be judged."""

from __future__ import annotations

from collections.abc import Callable

from bat_pipeline.engine.contracts import JudgeSettings, ScoreRow
from bat_pipeline.engine.llm_judges.plan import judge_plan
from bat_pipeline.engine.llm_judges.view import episode_view
from bat_pipeline.engine.scorers.judging import Judge, cannot_judge, null_row
from bat_pipeline.engine.scorers.registry import ScoringInput


def settings_of(item: ScoringInput) -> JudgeSettings | None:
    return item.options if isinstance(item.options, JudgeSettings) else None


def asks(kind: str) -> Callable[[ScoringInput], bool]:
    """`applies` for a kind: the task's `judge.kinds`, else eval.yaml's, lists it."""

    def applies(item: ScoringInput) -> bool:
        return kind in judge_plan(item.task, settings_of(item)).kinds

    return applies


def view_or_row(
    item: ScoringInput, judge: Judge, scorer: str, criterion: str, scale: str, *, steps: bool = True
) -> str | ScoreRow:
    """The episode as the judge sees it (engine.llm_judges.view), or, when it cannot be
    judged (engine.scorers.judging.cannot_judge), the null row saying why."""
    why = cannot_judge(item)
    if why:
        return null_row(scorer, criterion, judge.name, why, scale=scale)
    return episode_view(item.task, item.episode, settings_of(item), steps=steps)
