"""`goal_completion` (LLM): the scenario's plan split into sub-goals by the judge, each
judged met or not with a reason; score = the share met (EvalBench's `{sub_goals: [{goal,
met, reasoning}], summary}`, 0–100 there; SPEC §12).

One row, not gating (LLM rows never change the verdict): value = met / sub-goals, raw
the same × 100 to one decimal (scale `0..100`), reason = the judge's summary, details the
sub-goals. An episode whose attempt failed is not judged (`not judged: …`).
"""

from __future__ import annotations

from typing import Any

from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.scenario_judging import ScenarioQuestion, answer_object
from bat_pipeline.engine.scorers.judging import Judge
from bat_pipeline.engine.scorers.registry import ScoringInput, llm

NAME = "goal_completion"
SCALE = "0..100"
_GOAL = {
    "type": "object",
    "additionalProperties": False,
    "required": ["goal", "met", "reasoning"],
    "properties": {"goal": {"type": "string"}, "met": {"type": "boolean"}, "reasoning": {"type": "string"}},
}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["sub_goals", "summary"],
    "properties": {"sub_goals": {"type": "array", "items": _GOAL}, "summary": {"type": "string"}},
}
INSTRUCTIONS = (
    "You judge whether an AI assistant achieved what a user set out to do. Split the "
    "conversation plan into its sub-goals (each thing the user wants done or checked), then "
    "decide for each whether the conversation achieved it, citing what the assistant said or "
    "did. Answer with one JSON object and nothing else:\n"
    '{"sub_goals": [{"goal": "<sub-goal>", "met": true|false, "reasoning": "<evidence>"}], '
    '"summary": "<one or two sentences>"}'
)


def _applies(item: ScoringInput) -> bool:
    scenario = item.task.scenario
    return scenario is not None and scenario.selects(NAME) and bool(scenario.conversation_plan.strip())


def parse_goals(text: str) -> tuple[list[dict[str, Any]], str]:
    """(sub-goals, summary); ValueError without sub-goals or with one missing `met`."""
    found = answer_object(text, "sub_goals")
    goals = found["sub_goals"]
    if not isinstance(goals, list) or not goals:
        raise ValueError("the judge listed no sub-goals")
    for goal in goals:
        if not isinstance(goal, dict) or not isinstance(goal.get("met"), bool):
            raise ValueError(f"a sub-goal without a true/false 'met': {goal!r}"[:300])
    return goals, str(found.get("summary") or "")


def goal_rows(answer: tuple[list[dict[str, Any]], str], judge: str) -> list[ScoreRow]:
    """The row of a judge's sub-goals: the share met."""
    goals, summary = answer
    met = sum(1 for g in goals if g["met"])
    share = met / len(goals)
    return [
        ScoreRow(
            scorer=NAME,
            criterion=NAME,
            value=share,
            raw=round(100 * share, 1),
            scale=SCALE,
            judge=judge,
            reason=f"{met} of {len(goals)} sub-goals met. {summary}".strip(),
            details={"sub_goals": goals},
        )
    ]


QUESTION = ScenarioQuestion(
    scorer=NAME, instructions=INSTRUCTIONS, parse=parse_goals, schema=SCHEMA, scale=SCALE, rows=goal_rows
)


@llm(NAME, order=520, applies=_applies)
async def goal_completion(item: ScoringInput, judge: Judge) -> list[ScoreRow]:
    return await QUESTION.ask(item, judge)
