"""A second LLM scorer family, for the tests: one plain-text yes/no question with its own
parse, asked `meta.yes_no` times (one sample each) of tasks that set it. Registered the
documented way; the judge client knows nothing of it. Beside it, a scorer with a bug, for
tasks with `meta.broken`."""

from __future__ import annotations

import asyncio

from bat_pipeline.engine.scorers import ScoreRow, ScoringInput, llm
from bat_pipeline.engine.scorers.judging import FAILED, Judge, JudgeQuestion, cannot_judge, null_row

NAME = "answers_question"
CRITERION = "answers the question"


def parse_yes_no(text: str) -> bool:
    """True for an answer starting with yes, False for no; ValueError otherwise."""
    words = text.strip().split()
    word = words[0].strip(".,!:").lower() if words else ""
    if word not in ("yes", "no"):
        raise ValueError(f"neither yes nor no: {text.strip()[:60]!r}")
    return word == "yes"


@llm(NAME, applies=lambda item: bool(item.task.meta.get("yes_no")), order=900)
async def answers_question(item: ScoringInput, judge: Judge) -> list[ScoreRow]:
    why = cannot_judge(item)
    if why:
        return [null_row(NAME, CRITERION, judge.name, why)]
    messages = [
        {"role": "system", "content": "Answer yes or no, then one sentence why."},
        {
            "role": "user",
            "content": f"Question: {item.task.turns[0]}\nAnswer: {item.episode.final_output}\n"
            "Does the answer answer the question?",
        },
    ]
    samples = int(item.task.meta["yes_no"])
    answers = await asyncio.gather(
        *(
            judge.ask(
                JudgeQuestion(purpose="yes_no", messages=messages, parse=parse_yes_no, sample=i, temperature=None)
            )
            for i in range(samples)
        )
    )
    rows = []
    for sample, answer in enumerate(answers):
        if answer.value is None:
            rows.append(null_row(NAME, CRITERION, judge.name, FAILED + (answer.error or ""), sample=sample))
        else:
            rows.append(
                ScoreRow(
                    scorer=NAME,
                    criterion=CRITERION,
                    value=float(answer.value),
                    raw=float(answer.value),
                    scale="yes/no",
                    passed=answer.value,
                    sample=sample,
                    judge=judge.name,
                    reason=answer.text or "",
                    details={"cached": answer.cached},
                )
            )
    return rows


@llm("broken", applies=lambda item: bool(item.task.meta.get("broken")), order=901)
async def broken(item: ScoringInput, judge: Judge) -> list[ScoreRow]:
    raise RuntimeError("a bug in the scorer")
