"""An episode's score rows, also for an episode written without them.

Episode files of earlier releases (and of `bat eval`) carry a `verdict` and
`qualitative_scores` but no `scores`; the rows they stand for are derived here, the same
way every time, so such episodes load into the warehouse (and `bat-pipeline import`)
and read like new ones.
"""

from __future__ import annotations

from bat_pipeline.engine.contracts.episode import SCORE_FIELDS, Episode, VerdictCheck
from bat_pipeline.engine.contracts.scores import ScoreRow

CHECK_SCORERS: dict[str, str] = {
    "output[": "output",
    "tool_call:": "tool_calls",
    "agent_call:": "agent_calls",
    "model_calls": "limits",
    "tokens": "limits",
    "no_errors": "errors",
}
"""Start of a verdict check's name → the scorer (engine.scorers) that writes it. Any other
check (`status`, `spans`, `attempt`) is written by the scorer of its own name."""

JUDGE_SCALE = "0..1"
"""bat-cli's rubrics score from 0 to 1."""


def check_scorer(check: str) -> str:
    """The scorer that writes the verdict check named `check`."""
    for prefix, scorer in CHECK_SCORERS.items():
        if check.startswith(prefix):
            return scorer
    return check


def score_rows(episode: Episode) -> list[ScoreRow]:
    """The episode's rows: `episode.scores`, completed by what its verdict and judge scores
    stand for when the rows lack it (an older file has no rows; a step that does not write
    rows yet leaves its part out):

    - no gating row: one gating pass/fail row per verdict check, in order, first;
    - no row of bat-cli's rubrics, and the episode was judged: one row per rubric (all
      four, as the judge left them: a null score keeps its reason, "" when the judge said
      nothing; a judge error also in `details.error`), last.
    """
    rows = list(episode.scores)
    if not any(row.gating for row in rows):
        rows[:0] = [_check_row(check) for check in (episode.verdict.checks if episode.verdict else [])]
    judged = episode.qualitative_scores
    if judged is not None and not any(row.scorer in SCORE_FIELDS for row in rows):
        for rubric, field in SCORE_FIELDS.items():
            value = judged.score(rubric)
            error = judged.judge_errors.get(rubric)
            rows.append(ScoreRow(
                scorer=rubric, criterion=field, value=value, raw=value, scale=JUDGE_SCALE,
                reason=judged.judge_reasoning.get(rubric) or (f"judge failed: {error}" if error else ""),
                details={"error": error} if error else {},
            ))
    return rows


def _check_row(check: VerdictCheck) -> ScoreRow:
    value = 1.0 if check.passed else 0.0
    return ScoreRow(scorer=check_scorer(check.check), criterion=check.check, value=value, raw=value,
                    scale="pass/fail", passed=check.passed, gating=True, reason=check.detail)
