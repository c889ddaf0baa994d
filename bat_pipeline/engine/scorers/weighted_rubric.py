"""Weighted YAML rubrics as an LLM scorer (`rubric`): for each rubric the episode gets
(`judge.rubrics` in eval.yaml or the task's own, built-in names or files; `bat` is not one
of them: those are the four bat-cli scorers), one choice-anchored question per criterion
(engine.llm_judges.choice) and a summary row with the weighted score.

Rows: criterion `<rubric>:<criterion>` (raw on the criterion's scale, value 0..1, passed
when the choice is above the lowest) and `<rubric>:weighted_score` (passed by the
rubric's hard gates and pass threshold, null when it sets neither; details hold the total
score, missing criteria, failed gates and band). Informative: never gating."""

from __future__ import annotations

from bat_pipeline.engine.contracts import JudgeSettings
from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.llm_judges.plan import weighted_rubrics
from bat_pipeline.engine.llm_judges.rubric_rows import ask_by_choice, rubric_reduce
from bat_pipeline.engine.llm_judges.view import episode_view
from bat_pipeline.engine.scorers.judging import Judge, cannot_judge, null_row
from bat_pipeline.engine.scorers.registry import ScoringInput, llm
from bat_pipeline.engine.yaml_rubrics import Rubric, load_rubric

NAME = "rubric"
SUMMARY = "weighted_score"


def _settings(item: ScoringInput) -> JudgeSettings | None:
    return item.options if isinstance(item.options, JudgeSettings) else None


def _applies(item: ScoringInput) -> bool:
    return bool(weighted_rubrics(item.task, _settings(item)))


def _lookup(row: ScoreRow) -> tuple[Rubric, str, str, float] | None:
    source = str(row.details.get("source", ""))
    rubric = load_rubric(source.removeprefix("builtin:")) if source else None
    return None if rubric is None else (rubric, f"{rubric.name}:", SUMMARY, 1.0)


@llm(NAME, applies=_applies, order=520, reduce=rubric_reduce(_lookup))
async def rubric(item: ScoringInput, judge: Judge) -> list[ScoreRow]:
    rows: list[ScoreRow] = []
    why = cannot_judge(item)
    view = None if why else episode_view(item.task, item.episode, _settings(item))
    for spec in weighted_rubrics(item.task, _settings(item)):
        loaded = load_rubric(spec)
        if view is None:
            rows.append(null_row(NAME, f"{loaded.name}:{SUMMARY}", judge.name, why or "", scale="0..1"))
            continue
        rows += await ask_by_choice(NAME, loaded, view, judge, prefix=f"{loaded.name}:", summary=SUMMARY)
    return rows
