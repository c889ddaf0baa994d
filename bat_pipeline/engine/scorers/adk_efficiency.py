"""ADK's informational efficiency metrics (google/adk-python
src/google/adk/evaluation/_efficiency_evaluators.py), reported for every ADK case as ADK
reports them without being asked: `tool_call_count_v1` (tool calls per turn),
`inference_call_count_v1` (model calls per turn), `token_usage_v1` (input plus output
tokens per turn). Each is the mean over the conversation's turns of the turn's own value,
from the trajectory rebuilt from spans; a turn without the figure is left out of the mean,
and a case with none gets null (n/a, never 0). They never pass or fail (not gating).
"""

from __future__ import annotations

from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.scorers.adk_support import SCALE, Actual, actual_invocations, is_adk
from bat_pipeline.engine.scorers.registry import ScoringInput, check

TOOL_CALLS, INFERENCE_CALLS, TOKENS = "tool_call_count_v1", "inference_call_count_v1", "token_usage_v1"


def _values(actual: list[Actual], metric: str) -> list[float | None]:
    if metric == TOOL_CALLS:
        return [None if a.calls is None else float(len(a.calls)) for a in actual]
    if metric == INFERENCE_CALLS:
        return [None if a.model_calls is None else float(a.model_calls) for a in actual]
    return [None if a.tokens is None else float(a.tokens) for a in actual]


@check("adk_efficiency", applies=is_adk, order=82, criteria=(TOOL_CALLS, INFERENCE_CALLS, TOKENS))
def adk_efficiency(item: ScoringInput) -> list[ScoreRow]:
    actual = actual_invocations(item)
    rows = []
    for metric in (TOOL_CALLS, INFERENCE_CALLS, TOKENS):
        values = _values(actual, metric)
        known = [v for v in values if v is not None]
        mean = sum(known) / len(known) if known else None
        rows.append(
            ScoreRow(
                scorer="adk_efficiency",
                criterion=metric,
                value=mean,
                raw=mean,
                scale=SCALE,
                reason="n/a: not reported for any turn" if mean is None else f"{mean:.4g} per turn (informational)",
                details={"per_invocation": values},
            )
        )
    return rows
