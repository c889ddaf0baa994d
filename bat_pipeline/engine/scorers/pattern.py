"""`pattern`: conformance to the reasoning pattern the task (or eval.yaml's `judge.pattern`)
names — ReAct, CoVe, Reflexion, RAG — in one JSON answer (engine.llm_judges.graded): seven
universal and three pattern-specific dimensions, 0–5 each, then `conformance` (the mean,
passed when every hard gate holds — on the medians when the judge runs N times)."""

from __future__ import annotations

from typing import Any

from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.llm_judges.graded import parse_graded, pattern_messages, pattern_rubric, pattern_schema
from bat_pipeline.engine.llm_judges.plan import judge_plan
from bat_pipeline.engine.llm_judges.rubric_rows import graded_rows, rubric_reduce
from bat_pipeline.engine.scorers.judging import FAILED, SKIPPED, Judge, JudgeQuestion, null_row
from bat_pipeline.engine.scorers.kinds_support import asks, settings_of, view_or_row
from bat_pipeline.engine.scorers.registry import ScoringInput, llm
from bat_pipeline.engine.yaml_rubrics import Rubric


def _lookup(row: ScoreRow) -> tuple[Rubric, str, str, float] | None:
    pattern = row.details.get("pattern")
    return None if not isinstance(pattern, str) else (pattern_rubric(pattern), "", "conformance", 5.0)


@llm("pattern", applies=asks("pattern"), order=533, reduce=rubric_reduce(_lookup))
async def pattern(item: ScoringInput, judge: Judge) -> list[ScoreRow]:
    chosen = judge_plan(item.task, settings_of(item)).pattern
    if chosen is None:
        return [
            null_row(
                "pattern",
                "conformance",
                judge.name,
                f"{SKIPPED}no pattern named (judge.pattern: react, cove, reflexion or rag)",
                scale="0..5",
            )
        ]
    view = view_or_row(item, judge, "pattern", "conformance", "0..5")
    if isinstance(view, ScoreRow):
        return [view]
    rubric = pattern_rubric(chosen)

    def parse(text: str) -> dict[str, Any]:
        return parse_graded(rubric, text)

    answer = await judge.ask(
        JudgeQuestion(
            purpose=f"pattern_{chosen}",
            messages=pattern_messages(chosen, view),
            parse=parse,
            schema=pattern_schema(chosen),
        )
    )
    if answer.value is None:
        return [null_row("pattern", "conformance", judge.name, FAILED + (answer.error or "no answer"), scale="0..5")]
    found = answer.value
    reason = str(found.get("reasoning") or "")[:600]
    return graded_rows(
        "pattern",
        rubric,
        found["scores"],
        summary="conformance",
        raw_max=5.0,
        judge=judge.name,
        details={"pattern": chosen},
        extra={"pattern": chosen, "reasoning": reason},
    )
