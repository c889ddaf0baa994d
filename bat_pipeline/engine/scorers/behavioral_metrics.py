"""`behavioral_metrics` (LLM): how the agent behaved in a scenario, as EvalBench scores it
(SPEC §12): H hallucinated facts and C unnecessary clarification questions, each listed
with evidence by the judge; score = max(0, 100 − 50·H − 20·C) on EvalBench's 0–100.

Rows, not gating: `behavioral_metrics` (value = score / 100, raw = score, scale
`0..100`, reason = the judge's summary), then the counts (raw, scale `count`, no value):
`behavioral_metrics:hallucinations`, `:unnecessary_clarifications`, and
`:ignored_instructions` — an extension of ours, listed by the judge too but not in the
score. Plain-text answers in EvalBench's own form (`Hallucination Count: N`,
`Clarification Count: N`) are read as well.
"""

from __future__ import annotations

import re
from typing import Any

from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.scenario_judging import ScenarioQuestion, answer_object
from bat_pipeline.engine.scorers.judging import Judge
from bat_pipeline.engine.scorers.registry import ScoringInput, llm

NAME = "behavioral_metrics"
SCALE = "0..100"
KINDS = ("hallucinations", "unnecessary_clarifications", "ignored_instructions")
_ITEMS = {
    "type": "array",
    "items": {
        "type": "object",
        "additionalProperties": False,
        "required": ["evidence"],
        "properties": {"evidence": {"type": "string"}},
    },
}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": [*KINDS, "summary"],
    "properties": {**dict.fromkeys(KINDS, _ITEMS), "summary": {"type": "string"}},
}
INSTRUCTIONS = (
    "You review how an AI assistant behaved in a conversation. List, each with its evidence "
    "(a quote and why): hallucinations — facts the assistant stated that neither the user "
    "nor its tools gave it; unnecessary clarifications — questions it asked although the "
    "answer was already in the conversation or not needed; ignored instructions — what the "
    "user asked that it disregarded. Empty lists when there are none. Answer with one JSON "
    "object and nothing else:\n"
    '{"hallucinations": [{"evidence": "..."}], "unnecessary_clarifications": [{"evidence": "..."}], '
    '"ignored_instructions": [{"evidence": "..."}], "summary": "<one or two sentences>"}'
)
_COUNT = {
    "hallucinations": r"hallucination count\s*:\s*(\d+)",
    "unnecessary_clarifications": r"clarification count\s*:\s*(\d+)",
}


def _applies(item: ScoringInput) -> bool:
    return item.task.scenario is not None and item.task.scenario.selects(NAME)


def score(hallucinations: int, clarifications: int) -> float:
    """EvalBench's formula: max(0, 100 − 50·H − 20·C)."""
    return float(max(0, 100 - 50 * hallucinations - 20 * clarifications))


def parse_behaviour(text: str) -> tuple[dict[str, list[str]], str]:
    """(kind → evidence list, summary); EvalBench's `Hallucination Count: N` lines when no
    JSON answer is found. ValueError when neither is there."""
    try:
        found = answer_object(text, "hallucinations")
    except ValueError:
        counts = {kind: re.search(pattern, text, re.IGNORECASE) for kind, pattern in _COUNT.items()}
        if not all(counts.values()):
            raise
        listed = {kind: ["(counted, no evidence given)"] * int(m.group(1)) for kind, m in counts.items() if m}
        return {**listed, "ignored_instructions": []}, text.strip()[:500]
    listed = {}
    for kind in KINDS:
        items = found.get(kind) or []
        if not isinstance(items, list):
            raise ValueError(f"'{kind}' is not a list")
        listed[kind] = [str(i.get("evidence", i)) if isinstance(i, dict) else str(i) for i in items]
    return listed, str(found.get("summary") or "")


def behaviour_rows(answer: tuple[dict[str, list[str]], str], judge: str) -> list[ScoreRow]:
    """EvalBench's score from the counts, then one row per count."""
    listed, summary = answer
    h, c = len(listed["hallucinations"]), len(listed["unnecessary_clarifications"])
    value = score(h, c)
    rows = [
        ScoreRow(
            scorer=NAME,
            criterion=NAME,
            value=value / 100,
            raw=value,
            scale=SCALE,
            judge=judge,
            reason=f"{h} hallucination(s), {c} unnecessary clarification(s). {summary}".strip(),
            details={"hallucinations": h, "clarifications": c},
        )
    ]
    rows += [
        ScoreRow(
            scorer=NAME,
            criterion=f"{NAME}:{kind}",
            raw=float(len(found)),
            scale="count",
            judge=judge,
            reason="; ".join(found)[:1000] or "none",
            details={"evidence": found},
        )
        for kind, found in listed.items()
    ]
    return rows


QUESTION = ScenarioQuestion(
    scorer=NAME, instructions=INSTRUCTIONS, parse=parse_behaviour, schema=SCHEMA, scale=SCALE, rows=behaviour_rows
)


@llm(NAME, order=521, applies=_applies)
async def behavioral_metrics(item: ScoringInput, judge: Judge) -> list[ScoreRow]:
    return await QUESTION.ask(item, judge)
