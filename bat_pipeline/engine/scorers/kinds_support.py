"""What the agentic-v2-eval judge kinds (`choice`, `quality`, `standard`, `pattern`) share:
whether a kind is asked for an episode, and the row standing in when it cannot be judged."""

from __future__ import annotations

from collections.abc import Callable

from bat_pipeline.engine.contracts import JudgeSettings
from bat_pipeline.engine.llm_judges.plan import judge_plan
from bat_pipeline.engine.scorers.registry import ScoringInput


def settings_of(item: ScoringInput) -> JudgeSettings | None:
    return item.options if isinstance(item.options, JudgeSettings) else None


def asks(kind: str) -> Callable[[ScoringInput], bool]:
    """`applies` for a kind: the task's `judge.kinds`, else eval.yaml's, lists it."""
    def applies(item: ScoringInput) -> bool:
        return kind in judge_plan(item.task, settings_of(item)).kinds
    return applies
