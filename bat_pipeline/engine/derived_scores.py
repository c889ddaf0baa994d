"""An episode's score rows, also for an episode written without them.

Episode files of earlier releases (and of `bat eval`) carry a `verdict` and
`qualitative_scores` but no `scores`; the rows they stand for are derived here, the same
way every time, so such episodes load into the warehouse (and `bat-pipeline import`)
and read like new ones.
"""

from __future__ import annotations

from bat_pipeline.engine.contracts.episode import Episode
from bat_pipeline.engine.contracts.scores import SCORE_FIELDS, ScoreRow
from bat_pipeline.engine.scorers.judge_rubrics import SCALE as RUBRIC_SCALE
from bat_pipeline.engine.scorers.judging import FAILED
from bat_pipeline.engine.scorers.registry import registered
from bat_pipeline.engine.scorers.support import pass_fail


def check_prefixes() -> dict[str, str]:
    """How a verdict check's name begins → the built-in scorer that writes it (each
    scorer's `criteria`, else its name), in scorer order."""
    return {prefix: scorer.name for scorer in registered("check", ()) for prefix in scorer.criteria or (scorer.name,)}


def check_scorer(check: str) -> str:
    """The built-in scorer that writes the verdict check named `check`; any other check
    (`spans`, `attempt`) is written by the scorer of its own name."""
    return next((scorer for prefix, scorer in check_prefixes().items() if check.startswith(prefix)), check)


def score_rows(episode: Episode) -> list[ScoreRow]:
    """The episode's rows: `episode.scores`, completed by what its verdict and judge scores
    stand for when the rows lack it (an older file has no rows; a step that does not write
    rows yet leaves its part out):

    - no gating row: one gating pass/fail row per verdict check, in order, first;
    - no row of bat-cli's rubrics, and the episode was judged on them: one row per rubric (all
      four, as the judge left them: a null score keeps its reason, "" when the judge said
      nothing; a judge error also in `details.error`), last.
    """
    rows = list(episode.scores)
    if not any(row.gating for row in rows):
        rows[:0] = [
            pass_fail(check_scorer(c.check), c.check, c.passed, c.detail)
            for c in (episode.verdict.checks if episode.verdict else [])
        ]
    judged = episode.qualitative_scores
    # A record without any rubric in it (an EvalBench scenario whose run config asked none) stands for no row.
    asked = judged is not None and (judged.judge_reasoning or any(judged.score(r) is not None for r in SCORE_FIELDS))
    if judged is not None and asked and not any(row.scorer in SCORE_FIELDS for row in rows):
        for rubric, field in SCORE_FIELDS.items():
            value = judged.score(rubric)
            error = judged.judge_errors.get(rubric)
            rows.append(
                ScoreRow(
                    scorer=rubric,
                    criterion=field,
                    value=value,
                    raw=value,
                    scale=RUBRIC_SCALE,
                    reason=judged.judge_reasoning.get(rubric) or (f"{FAILED}{error}" if error else ""),
                    details={"error": error} if error else {},
                )
            )
    return rows
