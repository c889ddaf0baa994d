"""`output`: each phrase of `expected.output_must_contain` is a substring of the final output,
one row per phrase (`output[0]`, `output[1]`, ...)."""

from __future__ import annotations

from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.scorers.registry import ScoringInput, check
from bat_pipeline.engine.scorers.support import pass_fail, quote

CRITERION = "output["
"""Then the phrase's index and `]`."""


@check("output", applies=lambda item: bool(item.task.expected.output_must_contain), order=20, criteria=(CRITERION,))
def output(item: ScoringInput) -> list[ScoreRow]:
    """Case-sensitive; the empty phrase is always found."""
    text = item.episode.final_output or ""
    rows = []
    for index, phrase in enumerate(item.task.expected.output_must_contain):
        found = phrase in text
        reason = f"contains {quote(phrase)}" if found else f"{quote(phrase)} not in the final output"
        rows.append(pass_fail("output", f"{CRITERION}{index}]", found, reason, phrase=phrase))
    return rows
