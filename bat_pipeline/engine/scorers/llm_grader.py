"""`llm_grader`: the LLM graders of AgentV tests (`llm-rubric`, 4.x `llm-grader`, `rubric`,
`rubrics`, plain strings; SPEC §12, §13), asked of the judge in the judge step.

One question per grader: the grading text (the rubric, the 4.x prompt or the rubric
items' outcomes; else the test's criteria), the test's input, its expected output and
the answer; the judge answers `{reasoning, score 0..1, passed}` (an unreadable answer is
asked again while the client's retries last). One row per grader, weighed by the pass
rule like any grader's (engine.scorers.assertions): value = the judge's score, reason =
its reasoning; a seed-format grader passes when the judge says so, a 4.x one at its mark
(as AgentV 4.42 decides). A 4.x rubric with `score_ranges` items asks instead for a 0-10
score per item (`{checks: [{id, score, reasoning}], overall_reasoning}`), scored as
engine.datasets.agentv_score_ranges says, one check per item. A question that fails
leaves a grader error. An episode whose attempt failed is not asked (its verdict is the
attempt's).
"""

from __future__ import annotations

import asyncio
from typing import Any

from bat_pipeline.engine.contracts.agentv import AgentvCase, Assertion
from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.datasets import agentv_score_ranges as score_ranges
from bat_pipeline.engine.datasets.agentv import content_text, messages_text
from bat_pipeline.engine.datasets.agentv_graders import GRADING_KEY
from bat_pipeline.engine.datasets.agentv_judge import LLM_TYPES
from bat_pipeline.engine.rubrics import (
    GRADE_SCHEMA as SCHEMA,
    JudgeAnswerError,
    answer_with,
    parse_grade,
)
from bat_pipeline.engine.scorers.assertions import assertion_row, grader_error_row, graders, has_graders
from bat_pipeline.engine.scorers.judging import Judge, JudgeQuestion, cannot_judge
from bat_pipeline.engine.scorers.registry import ScoringInput, llm

NAME = "llm_grader"
PURPOSE = "agentv_grader"
MAX_CHARS = 12000
"""Each of the input, the expected output and the answer is cut to this many characters."""

_SYSTEM = (
    "You are a grader. Someone wrote a test for an AI system and the GRADING CRITERIA that a good "
    "answer meets; you decide how well the system's answer meets them.\n\n"
    "Read the criteria first, then the input the system was given and, when there is one, the "
    "expected output the test's author had in mind: an answer that reaches the same result in other "
    "words or another layout meets the criteria as well. Judge only what the criteria ask; do not "
    "reward length or polish. An empty answer, a refusal or an error meets nothing.\n\n"
    "Answer with one JSON object and nothing else:\n"
    '{"reasoning": "<a few sentences>", "score": <a number from 0 to 1>, "passed": <true or false>}\n'
    "score 1 means every criterion is fully met, 0 that none is; passed is true when the answer "
    "meets the criteria as a whole."
)


RANGES_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "checks": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string", "description": "The item's id."},
                    "score": {"type": "integer", "description": "The item's score, a whole number from 0 to 10."},
                    "reasoning": {"type": "string", "description": "Why this band, in a sentence or two."},
                },
                "required": ["id", "score", "reasoning"],
                "additionalProperties": False,
            },
        },
        "overall_reasoning": {"type": "string", "description": "The answer as a whole, in a sentence or two."},
    },
    "required": ["checks", "overall_reasoning"],
    "additionalProperties": False,
}

_RANGES_SYSTEM = (
    "You are a grader. Someone wrote a test for an AI system with SCORED ITEMS: for each, bands of a "
    "score from 0 to 10 and what an answer in each band looks like. You score the system's answer on "
    "every item.\n\n"
    "For each item, find the band whose description fits the answer best and give a whole number "
    "within it. Read the input the system was given and, when there is one, the expected output the "
    "test's author had in mind: other words or another layout for the same result fit as well. Judge "
    "only what the items describe. An empty answer, a refusal or an error fits the lowest band.\n\n"
    "Answer with one JSON object and nothing else:\n"
    '{"checks": [{"id": "<item id>", "score": <0 to 10>, "reasoning": "<a sentence or two>"}, ...], '
    '"overall_reasoning": "<a sentence or two>"}'
)


def parse_checks(text: str) -> tuple[list[dict[str, Any]], str]:
    """(checks, overall reasoning) from a score-range answer; JudgeAnswerError (asked
    again) when `checks` is not a list of `{id, score}` with whole scores from 0 to 10."""
    found = answer_with(text, "checks")
    checks = found.get("checks")
    if not isinstance(checks, list):
        raise JudgeAnswerError("`checks` is not a list")
    for check in checks:
        if not isinstance(check, dict) or not isinstance(check.get("id"), str):
            raise JudgeAnswerError(f"a check without an `id`: {check!r}")
        value = check.get("score")
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or value != int(value)
            or not 0 <= value <= 10
        ):
            raise JudgeAnswerError(f"check '{check['id']}': `score` is not a whole number from 0 to 10: {value!r}")
    overall = found.get("overall_reasoning")
    return checks, overall.strip() if isinstance(overall, str) else ""


def grading_messages(grader: Assertion, case: AgentvCase, answer: str) -> list[dict[str, str]]:
    """The question for one grader (module docstring)."""
    ranged = score_ranges.KEY in grader.options
    criteria = str(grader.options.get(GRADING_KEY) or "") or case.criteria
    expected = messages_text(case.expected_output) if case.expected_output else "(none given)"
    user = "\n".join(
        [
            *([f"Test criteria: {case.criteria}", f"Scored items:\n{criteria}"] if ranged else []),
            *([] if ranged else [f"Grading criteria: {criteria}"]),
            f"Input: {_cut(case.prompt)}",
            f"Expected output: {_cut(expected)}",
            f"Answer to grade: {_cut(answer) if answer.strip() else '(empty)'}",
        ]
    )
    return [{"role": "system", "content": _RANGES_SYSTEM if ranged else _SYSTEM}, {"role": "user", "content": user}]


@llm(NAME, applies=has_graders(LLM_TYPES), order=400)
async def llm_grader(item: ScoringInput, judge: Judge) -> list[ScoreRow]:
    case = item.task.agentv
    if case is None or cannot_judge(item):
        return []
    answer = content_text(item.episode.final_output)
    found = await asyncio.gather(*(grade(grader, case, answer, judge) for grader in graders(item, LLM_TYPES)))
    return list(found)


async def grade(grader: Assertion, case: AgentvCase, answer: str, judge: Judge) -> ScoreRow:
    """One LLM grader's row (module docstring)."""
    try:
        messages = grading_messages(grader, case, answer)
    except Exception as exc:  # noqa: BLE001 - odd data in one test must not stop the others
        return grader_error_row(NAME, grader, f"could not build the question: {type(exc).__name__}: {exc}")
    if score_ranges.KEY in grader.options:
        return await _grade_ranges(grader, case, messages, judge)
    reply = await judge.ask(JudgeQuestion(purpose=PURPOSE, messages=messages, parse=parse_grade, schema=SCHEMA))
    if reply.value is None:
        return _judged(grader_error_row(NAME, grader, f"the judge gave no grade: {reply.error or 'no answer'}"), judge)
    score, passed, reasoning = reply.value
    row = assertion_row(
        NAME,
        grader,
        case,
        score,
        reasoning or f"score {score:g}",
        passed=passed if case.format == "seed" else None,
        judge_passed=passed,
    )
    return _judged(row, judge)


async def _grade_ranges(grader: Assertion, case: AgentvCase, messages: list[dict[str, str]], judge: Judge) -> ScoreRow:
    """A score-range rubric's row: the items' weighted score; failed when an item is below
    its minimum, else at the grader's mark."""
    question = JudgeQuestion(purpose=PURPOSE, messages=messages, parse=parse_checks, schema=RANGES_SCHEMA)
    reply = await judge.ask(question)
    if reply.value is None:
        return _judged(grader_error_row(NAME, grader, f"the judge gave no grade: {reply.error or 'no answer'}"), judge)
    checks, overall = reply.value
    score, below, rows = score_ranges.score_checks(grader.options[score_ranges.KEY], checks)
    reason = overall or "; ".join(c["text"] for c in rows) or "the judge scored no item"
    row = assertion_row(NAME, grader, case, score, reason, passed=False if below else None, checks=rows)
    return _judged(row, judge)


def _judged(row: ScoreRow, judge: Judge) -> ScoreRow:
    return row.model_copy(update={"judge": judge.name})


def _cut(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS] + f" […{len(text) - MAX_CHARS} characters cut]"
