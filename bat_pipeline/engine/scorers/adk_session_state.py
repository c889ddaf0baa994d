"""`final_session_state`: an ADK case's expected session state at the end of the
conversation (google/adk-python src/google/adk/evaluation/eval_case.py). An A2A agent does
not expose its ADK session to the caller, so the check cannot run: a failed, gating row
saying so (never a pass), for every case that expects a state.
"""

from __future__ import annotations

from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.scorers.adk_support import case_of, error_row
from bat_pipeline.engine.scorers.registry import ScoringInput, check

NAME = "final_session_state"


def _applies(item: ScoringInput) -> bool:
    return item.task.adk is not None and bool(item.task.adk.final_session_state)


@check(NAME, applies=_applies, order=83)
def final_session_state(item: ScoringInput) -> list[ScoreRow]:
    expected = case_of(item).final_session_state
    return [
        error_row(
            NAME,
            "the agent's session state is not visible over A2A, so the expected state "
            f"({', '.join(sorted(expected))}) was not compared; remove final_session_state or check it in ADK",
            expected=expected,
        )
    ]
