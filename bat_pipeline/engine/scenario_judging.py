"""What EvalBench's LLM scorers (`goal_completion`, `behavioral_metrics`) show the judge of a
scenario, and how they read its answers. Pure: no network, no clock.

The judge sees the plan, the conversation as held (`User:` / `Agent:` lines, the simulated
user's turns marked), and the agent's recorded steps (engine.judge_view).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from bat_pipeline.engine.contracts.config import JudgeSettings
from bat_pipeline.engine.contracts.episode import Episode
from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.contracts.tasks import Task
from bat_pipeline.engine.judge_answers import after_thinking, json_objects
from bat_pipeline.engine.judge_view import render_episode_for_judge
from bat_pipeline.engine.scorers.judging import FAILED, Judge, JudgeQuestion, cannot_judge, null_row
from bat_pipeline.engine.scorers.registry import ScoringInput

T = TypeVar("T")

TURN_CHARS = 2000
"""Longest user or agent message shown; longer ones are cut."""


def _clip(text: str, limit: int = TURN_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def conversation_text(task: Task, episode: Episode) -> str:
    """The conversation as `User:` / `Agent:` lines: the turns held when recorded, else the
    task's turns with the final answer after the last."""
    log = episode.conversation
    if log is not None and log.turns:
        pairs = [(t.user + (" [simulated user]" if t.generated else ""), t.agent) for t in log.turns]
    else:
        pairs = [(turn, "") for turn in task.turns]
        pairs[-1] = (pairs[-1][0], episode.final_output)
    return "\n".join(f"User: {_clip(user)}\nAgent: {_clip(agent) or '(no answer)'}" for user, agent in pairs)


def scenario_case(task: Task, episode: Episode, max_chars: int) -> str:
    """The plan, the conversation and the agent's steps, as one prompt section."""
    plan = task.scenario.conversation_plan if task.scenario is not None else ""
    return "\n\n".join(
        [
            f"## Conversation Plan\n{plan.strip() or task.expected.expected_outcome or '(none)'}",
            f"## Conversation\n{conversation_text(task, episode)}",
            f"## Final Status\n{episode.final_status or 'none'}",
            "## Recorded steps of the agent\n" + render_episode_for_judge(episode, max_chars=max_chars),
        ]
    )


def answer_object(text: str, key: str) -> dict[str, Any]:
    """The last JSON object holding `key` in the answer (after any `</think>`); ValueError
    when there is none (the judge client asks again)."""
    found = [obj for obj in json_objects(after_thinking(text), nested=True) if key in obj]
    if not found:
        raise ValueError(f"no JSON object with '{key}' in the answer")
    return found[-1]


@dataclass(frozen=True)
class ScenarioQuestion(Generic[T]):
    """What one of these scorers asks the judge about a scenario, and how the answer
    becomes its rows."""

    scorer: str
    """The scorer's name: the question's purpose, and the criterion of a row without a
    value."""
    instructions: str
    """The system message; the scenario case is the user's."""
    parse: Callable[[str], T]
    """The answer text → its value; ValueError when unreadable (the judge asks again)."""
    schema: dict[str, Any]
    """The structured output asked for."""
    scale: str
    """The scale of the scorer's row, kept on a row without a value."""
    rows: Callable[[T, str], list[ScoreRow]]
    """(the parsed answer, the judge's `provider:model`) → the scorer's rows."""

    async def ask(self, item: ScoringInput, judge: Judge) -> list[ScoreRow]:
        """The scorer's rows from the judge's parsed answer on this scenario, or one null
        row saying why there is none: the episode cannot be judged (`cannot_judge`), or no
        usable answer came."""
        why = cannot_judge(item)
        if why:
            return [null_row(self.scorer, self.scorer, judge.name, why, scale=self.scale)]
        settings: JudgeSettings = item.options
        case = scenario_case(item.task, item.episode, settings.max_trajectory_chars)
        messages = [{"role": "system", "content": self.instructions}, {"role": "user", "content": case}]
        answer = await judge.ask(
            JudgeQuestion(purpose=self.scorer, messages=messages, parse=self.parse, schema=self.schema)
        )
        if answer.value is None:
            failed = FAILED + (answer.error or "no answer")
            return [null_row(self.scorer, self.scorer, judge.name, failed, scale=self.scale)]
        return self.rows(answer.value, judge.name)
