"""`final_response_match_v2`: ADK's judged match of the answer with the expected one
(google/adk-python src/google/adk/evaluation/final_response_match_v2.py), asked of the
run's judge (eval.yaml `judge:`; the criterion's `judge_model` is not used).

Per invocation the judge is asked `num_samples` times (ADK's default 5) whether the agent's
answer gives what the reference answer gives, for the user's message, in any wording or
layout; each answer is valid (1) or invalid (0), one without a verdict counts for neither.
The invocation is valid when more samples say valid than invalid (a tie is invalid, as in
ADK), without a verdict when none gave one. The case's value is the share of valid
invocations among those with a verdict, passing at or above the threshold; none with a
verdict is a failed row (never ADK's NOT_EVALUATED).
"""

from __future__ import annotations

import asyncio

from bat_pipeline.engine.contracts.adk import RESPONSE_MATCH_V2, AdkInvocation
from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.rubrics import GRADE_SCHEMA as SCHEMA, parse_grade
from bat_pipeline.engine.scorers.adk_support import (
    actual_invocations,
    configured,
    criterion_of,
    error_row,
    invocation_count_mismatch,
    not_judged,
    threshold_row,
)
from bat_pipeline.engine.scorers.judging import Judge, JudgeQuestion
from bat_pipeline.engine.scorers.registry import ScoringInput, llm

PURPOSE = "adk_final_response_match_v2"
MAX_CHARS = 12000

_SYSTEM = (
    "You grade an AI agent's answer by the grading criteria given: whether it gives the result of a "
    "reference answer a person wrote for the same user message. The answer is valid when it has "
    "the reference's result: the same key facts, "
    "figures (with their units) and conclusions, in any wording, order, format or length; more "
    "detail is fine, a missing or contradicting key fact is not. Asking the user to clarify is "
    "valid only when the reference does so too. Do not recompute figures: trust the reference.\n\n"
    "Answer with one JSON object and nothing else:\n"
    '{"reasoning": "<a few sentences>", "score": <1 when valid, 0 when not>, "passed": <true when valid>}'
)


def _cut(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS] + " […]"


def question(invocation: AdkInvocation, answer: str, sample: int) -> JudgeQuestion[tuple[float, bool | None, str]]:
    user = "\n".join(
        [
            "Grading criteria: the answer gives the result of the reference answer: "
            + _cut(invocation.final_response or ""),
            f"Input: {_cut(invocation.user)}",
            f"Expected output: {_cut(invocation.final_response or '')}",
            f"Answer to grade: {_cut(answer) if answer.strip() else '(empty)'}",
        ]
    )
    return JudgeQuestion(
        purpose=PURPOSE,
        messages=[{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}],
        parse=parse_grade,
        schema=SCHEMA,
        sample=sample,
    )


def majority(labels: list[bool | None]) -> float | None:
    """ADK's vote: 1 when valid outnumbers invalid, 0 otherwise (ties too); None without a label."""
    valid, invalid = labels.count(True), labels.count(False)
    if not valid and not invalid:
        return None
    return 1.0 if valid > invalid else 0.0


async def _invocation(
    invocation: AdkInvocation, answer: str, samples: int, judge: Judge
) -> tuple[float | None, list[str]]:
    replies = await asyncio.gather(*(judge.ask(question(invocation, answer, k)) for k in range(samples)))
    labels: list[bool | None] = [None if r.value is None else r.value[1] for r in replies]
    return majority(labels), [r.error or (r.value[2] if r.value else "") for r in replies]


@llm(RESPONSE_MATCH_V2, applies=configured(RESPONSE_MATCH_V2), order=420)
async def final_response_match_v2(item: ScoringInput, judge: Judge) -> list[ScoreRow]:
    case, criterion = criterion_of(item, RESPONSE_MATCH_V2)
    unjudged = not_judged(item, RESPONSE_MATCH_V2, judge.name)
    if unjudged:
        return unjudged
    actual = actual_invocations(item)
    mismatch = invocation_count_mismatch(case, actual)
    if mismatch:
        return [error_row(RESPONSE_MATCH_V2, mismatch).model_copy(update={"judge": judge.name})]
    found = await asyncio.gather(
        *(
            _invocation(inv, a.text, criterion.num_samples, judge)
            for inv, a in zip(case.conversation or [], actual, strict=True)
        )
    )
    scores = [score for score, _ in found]
    known = [s for s in scores if s is not None]
    if not known:
        reasons = "; ".join(r for _, rs in found for r in rs if r)
        return [
            error_row(RESPONSE_MATCH_V2, f"the judge gave no verdict ({reasons or 'no answer'})").model_copy(
                update={"judge": judge.name}
            )
        ]
    value = sum(known) / len(known)
    reason = (
        f"valid in {int(sum(known))} of {len(known)} invocation(s), majority of {criterion.num_samples} sample(s) each"
    )
    row = threshold_row(criterion, value, scores, reason, samples=criterion.num_samples)
    return [row.model_copy(update={"judge": judge.name})]
