"""EvalBench's other LLM scorers of a scenario, where a run config names them:

- `parameter_analysis`: the judge's feedback on the arguments the agent passed to each tool.
  EvalBench scores it 100 always, "the value is in the textual explanation" (its
  docs/scorers.md); one row, raw 100, the feedback as reason and details.
- `binary_rubric_scorer`: each criterion of the scenario's `binary_rubric` judged pass/fail
  (evalbench/scorers/binaryrubricscorer.py): row `binary_rubric_scorer_<i>` per criterion, 100
  when it passed, else 0; a scenario without a rubric gets `binary_rubric_scorer_0` at 100
  ("Defaulting to PASS") without asking, as EvalBench does. Answers in EvalBench's own text
  form are read too: a first line with `N/1` (passed when N ≥ 1), else `PASS` in it.

Neither gates the verdict (LLM rows never do). An episode whose attempt failed is not judged.
"""

from __future__ import annotations

import re
from typing import Any

from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.scenario_judging import ScenarioQuestion, answer_object
from bat_pipeline.engine.scorers.harness_metrics import named
from bat_pipeline.engine.scorers.judging import Judge
from bat_pipeline.engine.scorers.registry import ScoringInput, llm

PARAMETERS = "parameter_analysis"
RUBRIC = "binary_rubric_scorer"
SCALE = "0..100"

_FEEDBACK = {
    "type": "object",
    "additionalProperties": False,
    "required": ["tool", "feedback"],
    "properties": {"tool": {"type": "string"}, "feedback": {"type": "string"}},
}
PARAMETER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["parameter_feedback", "summary"],
    "properties": {"parameter_feedback": {"type": "array", "items": _FEEDBACK}, "summary": {"type": "string"}},
}
PARAMETER_INSTRUCTIONS = (
    "You review the arguments an AI assistant passed to the tools it called in a conversation. "
    "For each tool call in its recorded steps, say whether its arguments were right for what the "
    "user wanted (missing, wrong, made-up or superfluous values), citing them. Answer with one "
    "JSON object and nothing else:\n"
    '{"parameter_feedback": [{"tool": "<tool name>", "feedback": "<what was right or wrong>"}], '
    '"summary": "<one or two sentences>"}'
)
RUBRIC_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["rubric_passed", "reasoning"],
    "properties": {"rubric_passed": {"type": "boolean"}, "reasoning": {"type": "string"}},
}
RUBRIC_INSTRUCTIONS = (
    "You decide whether an AI assistant's conversation satisfies one rubric criterion, strictly "
    "pass or fail, citing the conversation. Answer with one JSON object and nothing else:\n"
    '{"rubric_passed": true|false, "reasoning": "<evidence>"}\n\nThe criterion: '
)
_FRACTION = re.compile(r"(\d+)/1")


def parse_feedback(text: str) -> tuple[list[dict[str, Any]], str]:
    found = answer_object(text, "parameter_feedback")
    feedback = found["parameter_feedback"]
    if not isinstance(feedback, list):
        raise ValueError("'parameter_feedback' is not a list")
    return feedback, str(found.get("summary") or "")


def feedback_rows(answer: tuple[list[dict[str, Any]], str], judge: str) -> list[ScoreRow]:
    feedback, summary = answer
    lines = [f"{f.get('tool')}: {f.get('feedback')}" for f in feedback if isinstance(f, dict)]
    return [
        ScoreRow(
            scorer=PARAMETERS,
            criterion=PARAMETERS,
            value=1.0,
            raw=100.0,
            scale=SCALE,
            judge=judge,
            reason=" ".join([summary, *lines]).strip() or "no tool calls to review",
            details={"parameter_feedback": feedback},
        )
    ]


PARAMETER_QUESTION = ScenarioQuestion(
    scorer=PARAMETERS,
    instructions=PARAMETER_INSTRUCTIONS,
    parse=parse_feedback,
    schema=PARAMETER_SCHEMA,
    scale=SCALE,
    rows=feedback_rows,
)


@llm(PARAMETERS, order=530, applies=named(PARAMETERS))
async def parameter_analysis(item: ScoringInput, judge: Judge) -> list[ScoreRow]:
    return await PARAMETER_QUESTION.ask(item, judge)


def parse_verdict(text: str) -> tuple[bool, str]:
    """(passed, reasoning) from our JSON or EvalBench's text form (its first line)."""
    try:
        found = answer_object(text, "rubric_passed")
        if isinstance(found["rubric_passed"], bool):
            return found["rubric_passed"], str(found.get("reasoning") or "")
    except ValueError:
        pass
    first = text.strip().split("\n")[0] if text.strip() else ""
    if not first:
        raise ValueError("an empty answer")
    match = _FRACTION.search(first)
    return (int(match.group(1)) >= 1 if match else "PASS" in first.upper()), text.strip()


def _criteria(item: ScoringInput) -> list[str]:
    scenario = item.task.scenario
    rubric = scenario.binary_rubric if scenario is not None else None
    if isinstance(rubric, str):
        return [rubric] if rubric else []
    return [str(c) for c in rubric] if isinstance(rubric, list) else []


def _rubric_question(index: int, criterion: str) -> ScenarioQuestion[tuple[bool, str]]:
    name = f"{RUBRIC}_{index}"

    def rows(answer: tuple[bool, str], judge: str) -> list[ScoreRow]:
        passed, reasoning = answer
        return [
            ScoreRow(
                scorer=RUBRIC,
                criterion=name,
                value=1.0 if passed else 0.0,
                raw=100.0 if passed else 0.0,
                scale=SCALE,
                passed=passed,
                judge=judge,
                reason=reasoning or ("PASS" if passed else "FAIL"),
                details={"criterion": criterion},
            )
        ]

    return ScenarioQuestion(
        scorer=RUBRIC,
        instructions=RUBRIC_INSTRUCTIONS + criterion,
        parse=parse_verdict,
        schema=RUBRIC_SCHEMA,
        scale=SCALE,
        rows=rows,
    )


@llm(RUBRIC, order=540, applies=named(RUBRIC))
async def binary_rubric_scorer(item: ScoringInput, judge: Judge) -> list[ScoreRow]:
    criteria = _criteria(item)
    if not criteria:
        return [
            ScoreRow(
                scorer=RUBRIC,
                criterion=f"{RUBRIC}_0",
                value=1.0,
                raw=100.0,
                scale=SCALE,
                passed=True,
                reason="No rubric defined for this scenario. Defaulting to PASS.",
            )
        ]
    out: list[ScoreRow] = []
    for index, criterion in enumerate(criteria):
        rows = await _rubric_question(index, criterion).ask(item, judge)
        out.extend(
            r if r.criterion.startswith(f"{RUBRIC}_") else r.model_copy(update={"criterion": f"{RUBRIC}_{index}"})
            for r in rows
        )
    return out
