"""`final_session_state`: an ADK case's expected session state at the end of the
conversation (google/adk-python src/google/adk/evaluation/eval_case.py; ADK 2.13 declares
it and compares it nowhere).

Compared with the state the agent exposed over A2A (`aux.session_state`: an artifact named
`session_state` holding it as a data part, or a data part `{"session_state": {...}}`; the
last one of the conversation): every expected key must be there with an equal value (other
keys, such as the framework's own, are allowed). An agent that exposed none gets a failed
row saying the check could not run (never a pass). Gating.
"""

from __future__ import annotations

import json
from typing import Any

from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.scorers.adk_support import case_of, error_row
from bat_pipeline.engine.scorers.registry import ScoringInput, check
from bat_pipeline.engine.scorers.support import pass_fail

NAME = "final_session_state"


def _applies(item: ScoringInput) -> bool:
    return item.task.adk is not None and bool(item.task.adk.final_session_state)


def differences(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    """The expected keys missing from the state or holding another value, each said."""
    found = []
    for key, want in expected.items():
        if key not in actual:
            found.append(f"'{key}' is missing")
        elif actual[key] != want:
            found.append(f"'{key}' is {json.dumps(actual[key], default=str)}, expected {json.dumps(want, default=str)}")
    return found


@check(NAME, applies=_applies, order=83)
def final_session_state(item: ScoringInput) -> list[ScoreRow]:
    expected = case_of(item).final_session_state
    actual = item.episode.aux.get("session_state")
    if not isinstance(actual, dict):
        return [
            error_row(
                NAME,
                "the agent exposed no session state over A2A (an artifact named session_state, or a data "
                'part {"session_state": ...}), so the expected state '
                f"({', '.join(sorted(expected))}) was not compared",
                expected=expected,
            )
        ]
    wrong = differences(expected, actual)
    reason = "; ".join(wrong) if wrong else f"the {len(expected)} expected key(s) hold their values"
    return [pass_fail(NAME, NAME, not wrong, reason, expected=expected, actual=actual)]
