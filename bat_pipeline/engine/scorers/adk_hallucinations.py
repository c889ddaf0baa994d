"""`hallucinations_v1`: ADK's check that the agent's answer claims nothing its context does
not back (google/adk-python src/google/adk/evaluation/hallucinations_v1.py), asked of the
run's judge (eval.yaml `judge:`; the criterion's `judge_model` is not used).

Per invocation (each turn of the conversation) the final answer is cut into sentences (at
`.`, `!`, `?` and their CJK forms, and at line breaks; ADK asks its judge to segment) and
each sentence is asked once whether the turn's context backs it: the user's message and
the tools the agent called, with their arguments and results. Supported or needing no
support (ADK's `supported` / `not_applicable`) is 1, else (`unsupported`, `contradictory`,
`disputed`) 0; the turn's score is the mean, the case's the mean over the turns that have
one, passing at or above the threshold; no score at all is a failed row.
"""

from __future__ import annotations

import asyncio
import json
import re

from bat_pipeline.engine.contracts.adk import HALLUCINATIONS
from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.contracts.trajectory import ToolStep
from bat_pipeline.engine.rubrics import GRADE_SCHEMA as SCHEMA, parse_grade
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

PURPOSE = "adk_hallucinations_v1"
MAX_CHARS = 12000
_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])\s*|\n+")

_SYSTEM = (
    "You check one sentence an AI agent wrote against what the agent had to go on. The grading "
    "criteria give the sentence; the answer to grade is the agent's context: the user's message, "
    "the tools it called, their arguments and what they returned. passed is true when the context "
    "backs every claim of the sentence, or when the sentence needs no backing (a greeting, a "
    "question, an opinion, a plan, a calculation); false when the context does not back it, "
    "contradicts it or both backs and contradicts it. Use no world knowledge beyond the trivial.\n\n"
    "Answer with one JSON object and nothing else:\n"
    '{"reasoning": "<a few sentences>", "score": <1 when backed or not needing it, 0 when not>, '
    '"passed": <true or false>}'
)


def sentences(text: str) -> list[str]:
    """The answer's sentences (those with a letter or a digit)."""
    return [s.strip() for s in _END.split(text) if s and re.search(r"\w", s)]


def context(user: str, actual: Actual) -> str:
    """The turn's context as one JSON object: the user's message, the tool calls with their
    arguments and results."""
    calls = [
        {"name": s.name, "args": s.args, "result": s.error or s.result} for s in actual.steps if isinstance(s, ToolStep)
    ]
    text = json.dumps({"user": user, "tool_calls": calls}, ensure_ascii=False, default=str)
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS] + " […]"


def question(sentence: str, where: str) -> JudgeQuestion[tuple[float, bool | None, str]]:
    text = f"Grading criteria: the context backs this sentence: {sentence}\nAnswer to grade: {where}"
    return JudgeQuestion(
        purpose=PURPOSE,
        messages=[{"role": "system", "content": _SYSTEM}, {"role": "user", "content": text}],
        parse=parse_grade,
        schema=SCHEMA,
    )


async def _turn(user: str, actual: Actual, judge: Judge) -> float | None:
    found = sentences(actual.text)
    if not found:
        return None
    where = context(user, actual)
    replies = await asyncio.gather(*(judge.ask(question(s, where)) for s in found))
    labels = [r.value[1] for r in replies if r.value is not None and r.value[1] is not None]
    return sum(1.0 for label in labels if label) / len(labels) if labels else None


@llm(HALLUCINATIONS, applies=configured(HALLUCINATIONS), order=423)
async def hallucinations_v1(item: ScoringInput, judge: Judge) -> list[ScoreRow]:
    _, criterion = criterion_of(item, HALLUCINATIONS)
    unjudged = not_judged(item, HALLUCINATIONS, judge.name)
    if unjudged:
        return unjudged
    actual = actual_invocations(item)
    users = user_turns(item)
    if any(a.calls is None for a in actual):
        return [error_row(HALLUCINATIONS, "no trajectory: the context (tool calls and results) is unknown")]
    scores = list(
        await asyncio.gather(*(_turn(users[i] if i < len(users) else "", a, judge) for i, a in enumerate(actual)))
    )
    known = [s for s in scores if s is not None]
    if not known:
        return [
            error_row(HALLUCINATIONS, "no sentence of any answer got a verdict").model_copy(
                update={"judge": judge.name}
            )
        ]
    value = sum(known) / len(known)
    row = threshold_row(criterion, value, scores, "share of backed sentences, mean over the turns")
    return [row.model_copy(update={"judge": judge.name})]
