"""`choice`: one choice-anchored question (engine.llm_judges.choice) — how well the final
answer achieves the task's expected outcome, 1–5 → 0..1. One row, criterion `outcome`,
passed when the choice is above 1; an answer without a choice scores 0, its text kept."""

from __future__ import annotations

from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.llm_judges.rubric_rows import ask_by_choice
from bat_pipeline.engine.scorers.judging import Judge
from bat_pipeline.engine.scorers.kinds_support import asks, view_or_row
from bat_pipeline.engine.scorers.registry import ScoringInput, llm
from bat_pipeline.engine.yaml_rubrics import Rubric

OUTCOME = Rubric.model_validate(
    {
        "name": "choice",
        "source": "builtin:choice",
        "criteria": [
            {
                "name": "outcome",
                "description": "How well does the final answer achieve the expected outcome of the request?",
                "levels": {
                    1: "misses the expected outcome entirely",
                    2: "touches it but mostly misses",
                    3: "achieves part of it",
                    4: "achieves it with small gaps",
                    5: "achieves it fully",
                },
            }
        ],
    }
)


@llm("choice", applies=asks("choice"), order=530)
async def choice(item: ScoringInput, judge: Judge) -> list[ScoreRow]:
    view = view_or_row(item, judge, "choice", "outcome", "1..5")
    if isinstance(view, ScoreRow):
        return [view]
    return await ask_by_choice("choice", OUTCOME, view, judge, prefix="", summary=None)
