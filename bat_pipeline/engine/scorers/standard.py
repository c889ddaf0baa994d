"""`standard`: the answer graded 0–10 on five dimensions in one JSON answer, with
improvements and a confidence (engine.llm_judges.graded). Rows: one per dimension (raw
0–10), then `overall` (raw = the mean on 0–10, value = mean / 10, passed at ≥ 7, a letter
grade A–F, the improvements and confidence in details). The answer is cut when long."""

from __future__ import annotations

from typing import Any

from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.llm_judges.graded import STANDARD_SCHEMA, parse_graded, standard_messages, standard_rubric
from bat_pipeline.engine.llm_judges.rubric_rows import graded_rows, rubric_reduce
from bat_pipeline.engine.scorers.judging import FAILED, Judge, JudgeQuestion, null_row
from bat_pipeline.engine.scorers.kinds_support import asks, view_or_row
from bat_pipeline.engine.scorers.registry import ScoringInput, llm
from bat_pipeline.engine.yaml_rubrics import Rubric

RUBRIC = standard_rubric()


def _lookup(row: ScoreRow) -> tuple[Rubric, str, str, float]:
    return RUBRIC, "", "overall", 10.0


def _parse(text: str) -> dict[str, Any]:
    return parse_graded(RUBRIC, text)


@llm("standard", applies=asks("standard"), order=532, reduce=rubric_reduce(_lookup))
async def standard(item: ScoringInput, judge: Judge) -> list[ScoreRow]:
    view = view_or_row(item, judge, "standard", "overall", "0..10", steps=False)
    if isinstance(view, ScoreRow):
        return [view]
    answer = await judge.ask(
        JudgeQuestion(purpose="standard", messages=standard_messages(view), parse=_parse, schema=STANDARD_SCHEMA)
    )
    if answer.value is None:
        return [null_row("standard", "overall", judge.name, FAILED + (answer.error or "no answer"), scale="0..10")]
    found = answer.value
    extra = {"improvements": found.get("improvements") or [], "confidence": found.get("confidence")}
    return graded_rows(
        "standard", RUBRIC, found["scores"], summary="overall", raw_max=10.0, judge=judge.name, extra=extra
    )
