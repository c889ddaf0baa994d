"""Which rubrics and judge kinds an episode gets: the task's own `judge` choices, else
eval.yaml's `judge:` block; `judge.rubrics` unset means `bat` (bat-cli's four rubrics)."""

from __future__ import annotations

from dataclasses import dataclass

from bat_pipeline.engine.contracts import JudgeSettings, Task
from bat_pipeline.engine.yaml_rubrics.load import BAT


@dataclass(frozen=True)
class JudgePlan:
    rubrics: tuple[str, ...]
    kinds: tuple[str, ...]
    pattern: str | None


def judge_plan(task: Task, settings: JudgeSettings | None) -> JudgePlan:
    own = task.judge
    rubrics = (
        own.rubrics
        if own is not None and own.rubrics is not None
        else (settings.rubrics if settings is not None else None)
    )
    kinds = own.kinds if own is not None and own.kinds is not None else (settings.kinds if settings is not None else [])
    pattern = (own.pattern if own is not None else None) or (settings.pattern if settings is not None else None)
    return JudgePlan(tuple(rubrics if rubrics is not None else [BAT]), tuple(kinds), pattern)


def weighted_rubrics(task: Task, settings: JudgeSettings | None) -> list[str]:
    """The weighted rubrics (built-in names or absolute files) the episode is scored with."""
    return [r for r in judge_plan(task, settings).rubrics if r != BAT]
