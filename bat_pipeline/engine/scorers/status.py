"""`status`: the episode ends in the status the task expects (`expected.status`; null skips it)."""

from __future__ import annotations

from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.scorers.registry import ScoringInput, check
from bat_pipeline.engine.scorers.support import pass_fail


@check("status", applies=lambda item: item.task.expected.status is not None, order=10)
def status(item: ScoringInput) -> list[ScoreRow]:
    """A missing final status (nothing came back) fails."""
    expected, actual = item.task.expected.status, item.episode.final_status
    if actual == expected:
        return [pass_fail("status", "status", True, f"{actual}, as expected")]
    got = "no final status" if actual is None else f"ended {actual}"
    return [pass_fail("status", "status", False, f"{got}, expected {expected}")]
