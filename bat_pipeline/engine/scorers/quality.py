"""`quality`: five dimensions of the output's quality, one choice-anchored question each
(engine.llm_judges.choice), then `overall` (their mean). Rows: criterion = the dimension."""

from __future__ import annotations

from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.llm_judges.rubric_rows import ask_by_choice, rubric_reduce
from bat_pipeline.engine.scorers.judging import Judge
from bat_pipeline.engine.scorers.kinds_support import asks, view_or_row
from bat_pipeline.engine.scorers.registry import ScoringInput, llm
from bat_pipeline.engine.yaml_rubrics import Rubric

QUALITY = Rubric.model_validate(
    {
        "name": "quality",
        "source": "builtin:quality",
        "criteria": [
            {
                "name": "coherence",
                "description": "Do the answer's sentences follow from one another and form one line of thought?",
            },
            {"name": "fluency", "description": "Is the answer written in correct, natural language?"},
            {"name": "relevance", "description": "Does every part of the answer bear on what the user asked?"},
            {
                "name": "groundedness",
                "description": "Is every claim backed by the conversation or the agent's steps, with nothing made up?",
            },
            {"name": "helpfulness", "description": "Would the user be able to act on the answer without asking again?"},
        ],
    }
)


def _lookup(row: ScoreRow) -> tuple[Rubric, str, str, float]:
    return QUALITY, "", "overall", 1.0


@llm("quality", applies=asks("quality"), order=531, reduce=rubric_reduce(_lookup))
async def quality(item: ScoringInput, judge: Judge) -> list[ScoreRow]:
    view = view_or_row(item, judge, "quality", "overall", "0..1", steps=False)
    if isinstance(view, ScoreRow):
        return [view]
    return await ask_by_choice("quality", QUALITY, view, judge, prefix="", summary="overall")
