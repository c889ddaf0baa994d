"""`limits`: the conversation stayed within `expected.max_model_calls` (criterion
`model_calls`) and `expected.max_tokens`, tokens in + out (criterion `tokens`), counted
over every model call, nested agents included."""

from __future__ import annotations

from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.scorers.registry import ScoringInput, check
from bat_pipeline.engine.scorers.support import pass_fail


def _has_limit(item: ScoringInput) -> bool:
    expected = item.task.expected
    return expected.max_model_calls is not None or expected.max_tokens is not None


@check("limits", applies=_has_limit, order=50, needs_trajectory=True, criteria=("model_calls", "tokens"))
def limits(item: ScoringInput) -> list[ScoreRow]:
    """A use equal to the limit holds."""
    expected, totals = item.task.expected, item.trajectory.totals
    rows = []
    if expected.max_model_calls is not None:
        limit = expected.max_model_calls
        reason = f"{totals.model_calls} model calls, at most {limit} allowed"
        rows.append(
            pass_fail(
                "limits", "model_calls", totals.model_calls <= limit, reason, used=totals.model_calls, limit=limit
            )
        )
    if expected.max_tokens is not None:
        used, limit = totals.tokens_in + totals.tokens_out, expected.max_tokens
        reason = f"{used} tokens in + out, at most {limit} allowed"
        rows.append(pass_fail("limits", "tokens", used <= limit, reason, used=used, limit=limit))
    return rows
