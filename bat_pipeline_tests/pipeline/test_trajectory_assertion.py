"""A `trajectory` assertion in the example agent's tasks.json, end to end (issue 15): the
agent runs under `bat-pipeline run` (one Dagster run), its spans become the trajectory,
and the assertion's rows reach the episode files and the warehouse's `episode_scores`,
where the verdict follows them — one task passes with it, the other fails only by it."""

from __future__ import annotations

import json

import pytest

from bat_pipeline_tests.support.processes import leftover_agents

pytestmark = pytest.mark.slow(seconds=7)

MODEL = "openai-competent"
COMPARE = {
    "mode": "in_order",
    "forbidden": ["add"],
    "max_steps": 2,
    "expected": [
        {"tool": "get_weather", "args": {"city": "Paris"}},
        {"tool": "get_weather", "args": {"city": "Berlin"}, "args_mode": "superset"},
    ],
}
WITHOUT_TOOLS = {"forbidden": ["get_weather"]}


@pytest.fixture(scope="module")
def evaluated(workspace_factory):
    ws = workspace_factory("trajectory", tasks=("compare_two_cities", "weather_paris"), models=(MODEL,))
    dataset = ws.agent / "eval" / "input" / "tasks.json"
    tasks = {t["id"]: t for t in json.loads(dataset.read_text())}
    tasks["compare_two_cities"]["expected"]["trajectory"] = COMPARE
    # The competent model looks the weather up, as the bat-cli checks below want; only the
    # trajectory assertion forbids it.
    paris = tasks.pop("weather_paris")
    paris["id"] = "paris_without_tools"
    paris["expected"]["trajectory"] = WITHOUT_TOOLS
    dataset.write_text(json.dumps([tasks["compare_two_cities"], paris], indent=1))
    result = ws.bat_pipeline_run()
    (run_dir,) = (ws.root / "runs").iterdir()
    return ws, result, run_dir.name


def test_the_assertion_rows_are_in_episode_scores_and_decide_the_verdict(evaluated):
    ws, result, run_id = evaluated
    assert result.returncode == 0, result.stdout[-4000:]
    rows = ws.warehouse.query(
        "SELECT task_id, criterion, value, passed, gating, reason FROM episode_scores "
        "WHERE run_id = ? AND model_key = ? AND scorer = 'trajectory' ORDER BY task_id, position",
        [run_id, MODEL],
    )
    by_task: dict[str, list[dict]] = {}
    for row in rows:
        by_task.setdefault(row["task_id"], []).append(row)
    assert [(r["criterion"], r["passed"], r["gating"]) for r in by_task["compare_two_cities"]] == [
        ("trajectory", True, True),
        ("trajectory:in_order", True, False),
        ("trajectory:forbidden:add", True, False),
        ("trajectory:max_steps", True, False),
    ]
    assert [(r["criterion"], r["passed"], r["gating"]) for r in by_task["paris_without_tools"]] == [
        ("trajectory", False, True),
        ("trajectory:forbidden:get_weather", False, False),
    ]
    assert by_task["paris_without_tools"][0]["value"] == 0.0
    assert by_task["paris_without_tools"][1]["reason"] == "get_weather: 1 call, forbidden"

    passed = {
        r["task_id"]: r["passed"]
        for r in ws.warehouse.query(
            "SELECT task_id, passed FROM episodes WHERE run_id = ? AND model_key = ?", [run_id, MODEL]
        )
    }
    assert passed == {"compare_two_cities": True, "paris_without_tools": False}


def test_only_the_trajectory_row_fails_the_episode(evaluated):
    ws, _, run_id = evaluated
    episode = json.loads(
        (ws.root / "runs" / run_id / MODEL / "episodes" / "paris_without_tools__try0.json").read_text()
    )
    failed = [c["check"] for c in episode["verdict"]["checks"] if not c["passed"]]
    assert failed == ["trajectory"]
    assert "trajectory FAIL: 0.00 of 1: get_weather: 1 call, forbidden" in episode["verdict"]["reason"]
    assert [c["name"] for c in episode["trace"]["tool_calls"]] == ["get_weather"]
    assert leftover_agents(ws.agent, str(ws.root)) == []
