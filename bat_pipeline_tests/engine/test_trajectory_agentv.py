"""Trajectory assertions in AgentV 4.x files scored as the real AgentV 4.42.4 scores them.

bat_pipeline_tests/fixtures/agentv-trajectory/results.json holds hand-made cases and what
`agentv eval` gave for each (made by scripts/make-agentv-trajectory-fixture; no npm
needed here). With `agentv4` every score must be AgentV's; in this project's own meaning
only the cases in DIFFERENCES score otherwise, each for the reason given.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bat_pipeline.engine.contracts.trajectory_assertion import ObservedCall
from bat_pipeline.engine.scorers.trajectory import parse_assertion, trajectory_rows

FIXTURE = Path(__file__).parent.parent / "fixtures" / "agentv-trajectory" / "results.json"
CASES = json.loads(FIXTURE.read_text())["cases"]

DIFFERENCES = {
    "in-order-first-name-decides": (1.0, "ours looks past a call with the right name and other arguments"),
    "exact-extra-call": (2 / 3, "outside 4.x files exact is strict: an extra call is a miss"),
    "any-order-ignores-expected": (0.5, "outside 4.x files any_order is unordered over `expected`"),
    "superset-greedy": (1.0, "ours takes the largest pairing, AgentV the first free call"),
    "superset-no-duration-check": (0.5, "ours checks durations in every mode"),
    "args-superset-nested": (1.0, "ours compares nested objects by containment, AgentV top-level keys"),
}


def observed(case: dict[str, Any]) -> list[ObservedCall]:
    return [ObservedCall(name=c["tool"], args=c.get("input"), duration_ms=c.get("duration_ms")) for c in case["calls"]]


def summary(case: dict[str, Any], agentv4: bool) -> Any:
    assertion, warnings = parse_assertion(case["assertion"], "eval.yaml", entry=f"tests ({case['id']})")
    assert warnings == []
    return trajectory_rows(assertion, observed(case), agentv4=agentv4)[0]


def test_the_fixture_covers_every_mode_and_argument_mode():
    assert len(CASES) >= 30
    assert {c["assertion"]["mode"] for c in CASES} == {"in_order", "exact", "any_order", "superset", "subset"}
    arg_modes = {
        json.dumps(item.get("args_match", item.get("argsMatch")))
        for c in CASES
        for item in c["assertion"].get("expected", [])
    }
    assert {'"superset"', '"subset"', '"ignore"', "null", '["x", "loc.city"]'} <= arg_modes


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_agentv4_reading_scores_as_agentv(case):
    row = summary(case, agentv4=True)
    assert row.value == pytest.approx(case["agentv"]["score"])
    # AgentV passes a grader at 0.8; ours passes an assertion only when every check holds
    assert row.passed is (case["agentv"]["score"] == 1)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_our_reading_differs_only_where_documented(case):
    want = DIFFERENCES.get(case["id"], (case["agentv"]["score"], ""))[0]
    assert summary(case, agentv4=False).value == pytest.approx(want)
