"""`rubric_based_final_response_quality_v1`, `rubric_based_tool_use_quality_v1` and
`rubric_based_multi_turn_trajectory_quality_v1`: ADK's rubric metrics (google/adk-python
src/google/adk/evaluation/rubric_based_evaluator.py, rubric_based_final_response_quality_v1.py,
rubric_based_tool_use_quality_v1.py, rubric_based_multi_turn_trajectory_evaluator.py), asked
of the run's judge (eval.yaml `judge:`; the criterion's `judge_model` is not used).

Each invocation (each turn of the conversation) is judged on its rubrics: the criterion's,
then the case's and the invocation's of the metric's type (FINAL_RESPONSE_QUALITY /
TOOL_USE_QUALITY). Per rubric the judge is asked `num_samples` times whether the turn meets
it (the answer for the first metric; the tool calls with their arguments, and the answer,
for the second); the rubric's score is ADK's vote (more yes than no: 1, else 0; no verdict:
none). The invocation's score is the mean of its rubrics' scores, the case's the mean of
every rubric score of every invocation (ADK's `summarize`), passing at or above the
threshold; no score at all is a failed row.

The multi-turn trajectory metric judges the conversation once, as of its last turn: the
whole dialogue (each turn's user message, tool calls with arguments and results, answer)
against the criterion's rubrics and those of type TRAJECTORY_QUALITY of the case and its
last invocation; the value is the mean of those rubrics' votes.
"""

from __future__ import annotations

import asyncio
import json

from bat_pipeline.engine.contracts.adk import (
    RUBRIC_RESPONSE,
    RUBRIC_TOOL_USE,
    RUBRIC_TRAJECTORY,
    AdkRubric,
    effective_rubrics,
)
from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.contracts.trajectory import ToolStep
from bat_pipeline.engine.rubrics import GRADE_SCHEMA as SCHEMA, parse_grade
from bat_pipeline.engine.scorers.adk_response_v2 import majority
from bat_pipeline.engine.scorers.adk_support import (
    Actual,
    actual_invocations,
    configured,
    criterion_of,
    error_row,
    not_judged,
    threshold_row,
    user_turns,
)
from bat_pipeline.engine.scorers.judging import Judge, JudgeQuestion
from bat_pipeline.engine.scorers.registry import ScoringInput, llm

MAX_CHARS = 12000

_SYSTEM = (
    "You grade one turn of an AI agent by the grading criteria given: a single property the turn "
    "must have. Decide only whether the property holds for what is shown, nothing else; an empty "
    "answer or a refusal meets no property unless the property asks for it.\n\n"
    "Answer with one JSON object and nothing else:\n"
    '{"reasoning": "<a few sentences>", "score": <1 when the property holds, 0 when not>, '
    '"passed": <true when it holds>}'
)


def _cut(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS] + " […]"


def shown(metric: str, actual: Actual) -> str:
    """What the judge reads of the turn: the answer; for tool use, the calls first."""
    if metric != RUBRIC_TOOL_USE:
        return actual.text
    calls = [{"name": c.name, "args": c.args} for c in actual.calls or []]
    return f"Tool calls: {json.dumps(calls, ensure_ascii=False, default=str)}\nFinal answer: {actual.text}"


def question(
    metric: str, rubric: AdkRubric, user: str, answer: str, sample: int
) -> JudgeQuestion[tuple[float, bool | None, str]]:
    text = "\n".join(
        [
            f"Grading criteria: {rubric.text}",
            f"Input: {_cut(user)}",
            f"Answer to grade: {_cut(answer) if answer.strip() else '(empty)'}",
        ]
    )
    return JudgeQuestion(
        purpose=f"adk_{metric}",
        messages=[{"role": "system", "content": _SYSTEM}, {"role": "user", "content": text}],
        parse=parse_grade,
        schema=SCHEMA,
        sample=sample,
    )


async def _rubric(metric: str, rubric: AdkRubric, user: str, answer: str, samples: int, judge: Judge) -> float | None:
    replies = await asyncio.gather(*(judge.ask(question(metric, rubric, user, answer, k)) for k in range(samples)))
    return majority([None if r.value is None else r.value[1] for r in replies])


async def rubric_rows(item: ScoringInput, judge: Judge, metric: str) -> list[ScoreRow]:
    case, criterion = criterion_of(item, metric)
    unjudged = not_judged(item, metric, judge.name)
    if unjudged:
        return unjudged
    actual = actual_invocations(item)
    users = user_turns(item)
    expected = case.conversation or []
    if metric == RUBRIC_TOOL_USE and any(a.calls is None for a in actual):
        return [error_row(metric, "no trajectory: no spans were found for this conversation's tool calls")]
    per_turn: list[dict[str, float | None]] = []
    for index, turn in enumerate(actual):
        invocation = expected[index] if index < len(expected) else None
        rubrics = effective_rubrics(case, criterion, invocation)
        user = users[index] if index < len(users) else ""
        scores = await asyncio.gather(
            *(_rubric(metric, r, user, shown(metric, turn), criterion.num_samples, judge) for r in rubrics)
        )
        per_turn.append({r.rubric_id: s for r, s in zip(rubrics, scores, strict=True)})
    every = [s for turn_scores in per_turn for s in turn_scores.values() if s is not None]
    if not every:
        return [error_row(metric, "the judge gave no verdict on any rubric").model_copy(update={"judge": judge.name})]
    value = sum(every) / len(every)
    means = [
        (sum(v for v in t.values() if v is not None) / len([v for v in t.values() if v is not None]))
        if any(v is not None for v in t.values())
        else None
        for t in per_turn
    ]
    reason = f"{int(sum(every))} of {len(every)} rubric verdict(s) met, majority of {criterion.num_samples} sample(s)"
    row = threshold_row(criterion, value, means, reason, rubric_scores=per_turn, samples=criterion.num_samples)
    return [row.model_copy(update={"judge": judge.name})]


@llm(RUBRIC_RESPONSE, applies=configured(RUBRIC_RESPONSE), order=421)
async def rubric_based_final_response_quality_v1(item: ScoringInput, judge: Judge) -> list[ScoreRow]:
    return await rubric_rows(item, judge, RUBRIC_RESPONSE)


@llm(RUBRIC_TOOL_USE, applies=configured(RUBRIC_TOOL_USE), order=422)
async def rubric_based_tool_use_quality_v1(item: ScoringInput, judge: Judge) -> list[ScoreRow]:
    return await rubric_rows(item, judge, RUBRIC_TOOL_USE)


def dialogue(users: list[str], actual: list[Actual]) -> str:
    """The whole conversation as the multi-turn judge reads it: one JSON array of turns
    (user message, tool calls with arguments and results, answer)."""
    turns = []
    for index, turn in enumerate(actual):
        calls = [
            {"name": s.name, "args": s.args, "result": s.error or s.result}
            for s in turn.steps
            if isinstance(s, ToolStep)
        ]
        turns.append({"user": users[index] if index < len(users) else "", "tool_calls": calls, "agent": turn.text})
    return json.dumps(turns, ensure_ascii=False, default=str)


@llm(RUBRIC_TRAJECTORY, applies=configured(RUBRIC_TRAJECTORY), order=424)
async def rubric_based_multi_turn_trajectory_quality_v1(item: ScoringInput, judge: Judge) -> list[ScoreRow]:
    metric = RUBRIC_TRAJECTORY
    case, criterion = criterion_of(item, metric)
    unjudged = not_judged(item, metric, judge.name)
    if unjudged:
        return unjudged
    actual = actual_invocations(item)
    if any(a.calls is None for a in actual):
        return [error_row(metric, "no trajectory: no spans were found for this conversation's tool calls")]
    users = user_turns(item)
    last = case.conversation[-1] if case.conversation else None
    rubrics = effective_rubrics(case, criterion, last)
    text = dialogue(users, actual)
    votes = await asyncio.gather(
        *(_rubric(metric, r, users[0] if users else "", text, criterion.num_samples, judge) for r in rubrics)
    )
    per_rubric = {r.rubric_id: v for r, v in zip(rubrics, votes, strict=True)}
    known = [v for v in votes if v is not None]
    if not known:
        return [error_row(metric, "the judge gave no verdict on any rubric").model_copy(update={"judge": judge.name})]
    value = sum(known) / len(known)
    per_turn: list[float | None] = [None] * (len(actual) - 1) + [value]
    reason = f"{int(sum(known))} of {len(known)} rubric(s) met by the conversation, majority of {criterion.num_samples}"
    row = threshold_row(
        criterion,
        value,
        per_turn,
        reason,
        rubric_scores=[{}] * (len(actual) - 1) + [per_rubric],
        samples=criterion.num_samples,
    )
    return [row.model_copy(update={"judge": judge.name})]
