"""The `trajectory` scorer on episodes (rows, verdict, nested calls, no spans) and the
`expected.trajectory` key of tasks.json (spellings, warnings, refusals)."""

from __future__ import annotations

import json

import pytest

from bat_pipeline.engine.config import load_tasks
from bat_pipeline.engine.contracts import AgentStep, Episode, ModelStep, Task, ToolStep, Trajectory, Turn
from bat_pipeline.engine.contracts.episode import EpisodeTrace
from bat_pipeline.engine.errors import InputError
from bat_pipeline.engine.scorers.trajectory import calls_of, parse_assertion
from bat_pipeline.engine.verdicts import NO_SPANS, score_checks, verdict_from_rows

WEATHER = [
    ModelStep(called=["get_weather", "get_weather"]),
    ToolStep(name="get_weather", args={"city": "Paris"}),
    ToolStep(name="get_weather", args={"city": "Rome"}),
    AgentStep(agent="Adder", steps=[ToolStep(name="add", args={"a": 1, "b": 2})]),
]


def task(trajectory: dict, **expected) -> Task:
    return Task(id="t", turns=["hi"], expected={"status": None, "trajectory": trajectory, **expected})


def episode(*steps, found: bool = True) -> Episode:
    turns = [Turn(user="hi", steps=list(steps))] if found else []
    return Episode(model_name="p:m", task_id="t", trace=EpisodeTrace(trajectory=Trajectory(found=found, turns=turns)))


def test_calls_are_the_tool_steps_nested_ones_included_in_order():
    trajectory = episode(*WEATHER).trace.trajectory
    assert [(c.name, c.args) for c in calls_of(trajectory)] == [
        ("get_weather", {"city": "Paris"}),
        ("get_weather", {"city": "Rome"}),
        ("add", {"a": 1, "b": 2}),
    ]


def test_rows_summary_gating_then_one_row_per_check():
    assertion = {
        "mode": "in_order",
        "expected": [{"tool": "get_weather", "args": {"city": "Rome"}}, {"tool": "add"}],
        "forbidden": ["delete"],
        "max_steps": 5,
    }
    rows = score_checks(task(assertion), episode(*WEATHER))
    assert [(r.scorer, r.criterion, r.gating, r.passed, r.value) for r in rows] == [
        ("trajectory", "trajectory", True, True, 1.0),
        ("trajectory", "trajectory:in_order", False, True, 1.0),
        ("trajectory", "trajectory:forbidden:delete", False, True, 1.0),
        ("trajectory", "trajectory:max_steps", False, True, 1.0),
    ]
    summary = rows[0]
    assert summary.details == {
        "mode": "in_order",
        "hits": 4,
        "aspects": 4,
        "agentv4": False,
        "calls": ["get_weather", "get_weather", "add"],
    }
    assert summary.reason == ("in_order: 2 of 2 expected calls in order; delete: not called; 3 calls in all, at most 5")
    assert rows[1].details["matched"] == [[0, 1], [1, 2]]
    assert verdict_from_rows(rows).passed


def test_a_failed_check_fails_the_verdict_and_the_reason_says_why():
    assertion = {
        "mode": "strict",
        "expected": [{"tool": "get_weather", "args": {"city": "Paris"}}],
        "counts": {"get_weather": {"exact": 1}},
    }
    rows = score_checks(task(assertion), episode(*WEATHER))
    summary, strict, count = rows
    assert (summary.passed, summary.value) == (False, pytest.approx(1 / 4))
    assert strict.reason == ("strict: 1 of 3 positions match; extra call 2 (get_weather); extra call 3 (add)")
    assert (strict.value, strict.raw, strict.details["hits"], strict.details["aspects"]) == (
        pytest.approx(1 / 3),
        1.0,
        1,
        3,
    )
    assert count.reason == "get_weather: 2 calls, exactly 1 expected"
    verdict = verdict_from_rows(rows)
    assert not verdict.passed
    assert verdict.reason == (
        "trajectory FAIL: 0.25 of 1: strict: 1 of 3 positions match; extra call 2 (get_weather); "
        "extra call 3 (add); get_weather: 2 calls, exactly 1 expected"
    )


def test_no_trajectory_gives_the_spans_row():
    (row,) = score_checks(task({"max_steps": 1}), episode(found=False))
    assert (row.scorer, row.passed, row.reason) == ("spans", False, NO_SPANS)


def test_not_selected_without_the_key():
    assert score_checks(Task(id="t", turns=["hi"], expected={"status": None}), episode(*WEATHER)) == []


def test_bat_cli_checks_and_trajectory_together():
    rows = score_checks(
        task({"forbidden": ["add"]}, tool_calls=[{"name": "get_weather", "times": 2}]), episode(*WEATHER)
    )
    assert [(r.criterion, r.passed) for r in rows if r.gating] == [
        ("tool_call:get_weather", True),
        ("trajectory", False),
    ]


# --- tasks.json ---------------------------------------------------------------------------


def write(tmp_path, tasks: list) -> str:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(tasks))
    return str(path)


def load(tmp_path, trajectory: dict, **expected) -> tuple[Task, list[str]]:
    warnings: list[str] = []
    (loaded,) = load_tasks(
        write(tmp_path, [{"id": "w", "turns": ["hi"], "expected": {"trajectory": trajectory, **expected}}]), warnings
    )
    return loaded, warnings


def test_tasks_json_takes_a_trajectory_with_agentv_spellings(tmp_path):
    loaded, warnings = load(
        tmp_path,
        {
            "mode": "superset",
            "argsMatch": "superset",
            "forbidden": ["rm"],
            "max_steps": "4",
            "expected": [
                {"tool": "a", "args": {"x": 1}, "args_match": ["x"], "maxDurationMs": 10},
                {"tool": "b", "args": "any"},
            ],
            "counts": {"a": {"min": 1, "max": 2}},
            "minimums": {"b": 1},
        },
    )
    assert warnings == []
    assertion = loaded.expected.trajectory
    assert assertion is not None and loaded.expected.needs_spans
    assert (
        assertion.args_mode,
        assertion.max_steps,
        assertion.expected[0].args_mode,
        assertion.expected[0].max_duration_ms,
        assertion.expected[1].args,
    ) == ("superset", 4, ["x"], 10, "any")


def test_unknown_key_in_a_trajectory_is_a_warning(tmp_path):
    loaded, warnings = load(tmp_path, {"mode": "strict", "expected": [{"tool": "a", "note": "x"}], "label": "y"})
    assert loaded.expected.trajectory is not None
    assert [w.split(": ")[0] for w in warnings] == [
        f"{tmp_path / 'tasks.json'}, tasks[0] (id 'w'), field 'expected.trajectory.expected[0].note'",
        f"{tmp_path / 'tasks.json'}, tasks[0] (id 'w'), field 'expected.trajectory.label'",
    ]


REFUSED = [
    ({"mode": "strikt", "expected": []}, "expected.trajectory.mode", "expected one of 'strict', 'in_order'"),
    (
        {"mode": "strict", "expected": [{"tool": "a", "args_mode": "partial"}]},
        "expected.trajectory.expected[0].args_mode",
        "expected one of exact, ignore, subset, superset",
    ),
    ({"mode": "strict", "expected": [{"tool": ""}]}, "expected.trajectory.expected[0].tool", "at least 1 character"),
    ({"expected": [{"tool": "a"}]}, "expected.trajectory", "`expected` needs a `mode`"),
    ({"mode": "in_order"}, "expected.trajectory", "mode 'in_order' needs an `expected` list"),
    ({}, "expected.trajectory", "the assertion checks nothing"),
    ({"counts": {"a": {"min": 1, "exact": 1}}}, "expected.trajectory.counts.a", "either exact, or min and/or max"),
    ({"counts": {"a": {"mni": 1}}}, "expected.trajectory.counts.a.mni", "did you mean 'min'"),
    ({"forbiden": ["a"]}, "expected.trajectory.forbiden", "did you mean 'forbidden'"),
    ({"max_steps": -1}, "expected.trajectory.max_steps", "must be at least 0"),
    ({"minimums": {"a": 1}, "counts": {"a": {"max": 2}}}, "expected.trajectory", "in both `minimums` and `counts`"),
    (
        {"mode": "strict", "expected": [{"tool": "a", "args": [1]}]},
        "expected.trajectory.expected[0].args",
        "expected a mapping of arguments or 'any', got [1]",
    ),
]


@pytest.mark.parametrize(("trajectory", "field", "message"), REFUSED, ids=[r[1] + ":" + r[2][:20] for r in REFUSED])
def test_a_bad_trajectory_is_refused_naming_the_field(tmp_path, trajectory, field, message):
    with pytest.raises(InputError) as caught:
        load(tmp_path, trajectory)
    error = caught.value
    assert (error.file, error.entry, error.field) == (str(tmp_path / "tasks.json"), "tasks[0] (id 'w')", field)
    assert message in error.detail


def test_args_subset_and_trajectory_subset_together_warn(tmp_path):
    both = {"mode": "in_order", "expected": [{"tool": "a", "args": {"x": 1}, "args_mode": "subset"}]}
    _, warnings = load(tmp_path, both, tool_calls=[{"name": "a", "args_subset": {"x": 1}}])
    (warning,) = warnings
    assert "field 'expected.trajectory'" in warning and "the other way round from tool_calls' args_subset" in warning
    assert load(tmp_path, both)[1] == []
    same_way = {"mode": "in_order", "args_mode": "superset", "expected": [{"tool": "a", "args": {"x": 1}}]}
    assert load(tmp_path, same_way, tool_calls=[{"name": "a", "args_subset": {"x": 1}}])[1] == []


def test_parse_assertion_names_the_callers_entry_and_field():
    with pytest.raises(InputError) as caught:
        parse_assertion(
            {"type": "tool-trajectory", "name": "t", "mode": "in_order", "expected": [{"tol": "a"}]},
            "eval.yaml",
            entry="tests[2] (id 'c')",
            field="assertions[0]",
            ignore=("type", "name"),
        )
    assert str(caught.value) == (
        "eval.yaml, tests[2] (id 'c'), field 'assertions[0].expected[0].tol': unknown field 'tol'; did you mean 'tool'?"
    )
