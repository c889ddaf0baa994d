"""The verdict of the check scorers (engine.verdicts over engine/scorers/): each check kind,
argument matching, the reference fixtures."""

from __future__ import annotations

import json

import pytest

from bat_pipeline.engine.contracts import (
    AgentStep,
    Episode,
    ErrorStep,
    ModelStep,
    Task,
    ToolStep,
    Totals,
    Trajectory,
    Turn,
)
from bat_pipeline.engine.contracts.episode import EpisodeTrace
from bat_pipeline.engine.scorers.arguments import args_contain
from bat_pipeline.engine.verdicts import NO_SPANS, attempt_row, score_checks, verdict_from_rows
from bat_pipeline_tests.support.paths import REFERENCE


def task(**expected) -> Task:
    return Task(id="t", turns=["hi"], expected=expected)


def trajectory(*steps, totals: Totals | None = None) -> Trajectory:
    return Trajectory(found=True, turns=[Turn(user="hi", steps=list(steps))], totals=totals or Totals())


def decide(task: Task, status: str | None, output: str | None, trajectory: Trajectory):
    """The verdict of an episode that ended in `status` with `output` and `trajectory`."""
    episode = Episode(
        model_name="p:m",
        task_id=task.id,
        final_status=status,
        final_output=output or "",
        trace=EpisodeTrace(trajectory=trajectory),
    )
    return verdict_from_rows(score_checks(task, episode))


def check(verdict, name):
    matches = [c for c in verdict.checks if c.check == name]
    assert len(matches) == 1, verdict.checks
    return matches[0]


# --- status and output -------------------------------------------------------------


def test_status_pass_and_fail():
    assert decide(task(), "completed", "", Trajectory()).passed
    failed = decide(task(), "input-required", "", Trajectory())
    assert not failed.passed
    assert "input-required" in check(failed, "status").detail


def test_status_none_expected_skips_the_check():
    verdict = decide(task(status=None), "error", "", Trajectory())
    assert verdict.passed and verdict.checks == []


def test_missing_final_status_fails():
    verdict = decide(task(), None, "", Trajectory())
    assert not verdict.passed
    assert "no final status" in verdict.reason


def test_each_phrase_is_its_own_check():
    verdict = decide(task(output_must_contain=["22", "sunny", "Berlin"]), "completed", "sunny, 22°C", Trajectory())
    assert [c.passed for c in verdict.checks] == [True, True, True, False]
    assert [c.check for c in verdict.checks] == ["status", "output[0]", "output[1]", "output[2]"]
    assert not verdict.passed


def test_output_none_is_empty_text():
    assert not decide(task(output_must_contain=["x"]), "completed", None, Trajectory()).passed
    assert decide(task(output_must_contain=[""]), "completed", None, Trajectory()).passed


def test_reason_lists_every_check_pass_or_fail_in_order():
    verdict = decide(task(output_must_contain=["a", "b"]), "completed", "a", Trajectory())
    parts = verdict.reason.split("; ")
    assert len(parts) == 3
    assert parts[0].startswith("status ok")
    assert parts[1].startswith("output[0] ok")
    assert parts[2].startswith("output[1] FAIL")


# --- span checks -------------------------------------------------------------------


def test_no_spans_is_one_failed_check():
    verdict = decide(
        task(tool_calls=[{"name": "x"}], max_tokens=5, no_errors=True), "completed", "", Trajectory(found=False)
    )
    assert not verdict.passed
    assert [c.check for c in verdict.checks] == ["status", "spans"]
    assert check(verdict, "spans").detail == NO_SPANS


def test_span_checks_skipped_without_span_expectations():
    verdict = decide(task(), "completed", "", Trajectory(found=False))
    assert verdict.passed


def test_tool_call_counted_with_args_subset():
    traj = trajectory(
        ToolStep(name="get_weather", args={"city": "Paris", "unit": "C"}),
        ToolStep(name="get_weather", args={"city": "Berlin"}),
    )
    ok = decide(task(tool_calls=[{"name": "get_weather", "args_subset": {"city": "Paris"}}]), "completed", "", traj)
    assert ok.passed
    twice = decide(
        task(tool_calls=[{"name": "get_weather", "args_subset": {"city": "Paris"}, "times": 2}]), "completed", "", traj
    )
    assert not twice.passed
    assert "1 more with other arguments" in check(twice, "tool_call:get_weather").detail


def test_tool_call_without_args_subset_matches_any_arguments():
    traj = trajectory(ToolStep(name="ping", args=None), ToolStep(name="ping", args="raw"))
    assert decide(task(tool_calls=[{"name": "ping", "times": 2}]), "completed", "", traj).passed
    assert not decide(task(tool_calls=[{"name": "pong"}]), "completed", "", traj).passed


def test_nested_tool_calls_are_counted():
    inner = ToolStep(name="search", args={"q": "x"})
    traj = trajectory(
        ToolStep(name="delegate", steps=[AgentStep(agent="Helper", steps=[inner])]),
        AgentStep(agent="Helper", steps=[ToolStep(name="search", args={"q": "x"})]),
    )
    verdict = decide(
        task(
            tool_calls=[{"name": "search", "args_subset": {"q": "x"}, "times": 2}],
            agent_calls=[{"agent": "Helper", "times": 2}],
        ),
        "completed",
        "",
        traj,
    )
    assert verdict.passed, verdict.reason


def test_agent_call_pass_and_fail():
    traj = trajectory(AgentStep(agent="Planner"))
    assert decide(task(agent_calls=[{"agent": "Planner"}]), "completed", "", traj).passed
    failed = decide(task(agent_calls=[{"agent": "Planner", "times": 2}]), "completed", "", traj)
    assert not failed.passed and not check(failed, "agent_call:Planner").passed
    assert not decide(task(agent_calls=[{"agent": "Writer"}]), "completed", "", traj).passed


def test_model_calls_at_most():
    traj = trajectory(totals=Totals(model_calls=3))
    assert decide(task(max_model_calls=3), "completed", "", traj).passed
    failed = decide(task(max_model_calls=2), "completed", "", traj)
    assert not check(failed, "model_calls").passed


def test_tokens_in_plus_out_at_most():
    traj = trajectory(totals=Totals(tokens_in=400, tokens_out=100, tokens_cached=10_000))
    assert decide(task(max_tokens=500), "completed", "", traj).passed
    failed = decide(task(max_tokens=499), "completed", "", traj)
    assert not failed.passed and "500" in check(failed, "tokens").detail


def test_no_errors_pass_and_fail_names_up_to_three():
    assert decide(task(no_errors=True), "completed", "", trajectory(ModelStep(model="m"))).passed
    traj = trajectory(
        ModelStep(model="m", error="HTTP 400"),
        ToolStep(name="t1", error="boom", steps=[ErrorStep(span="db", error="timeout")]),
        AgentStep(agent="A", error="refused"),
        ToolStep(name="t2", error="never named"),
    )
    failed = check(decide(task(no_errors=True), "completed", "", traj), "no_errors")
    assert not failed.passed
    assert failed.detail.startswith("5 failed steps")
    for named in ("model m", "HTTP 400", "tool t1", "boom", "span db", "timeout"):
        assert named in failed.detail
    assert "agent A" not in failed.detail and "and 2 more" in failed.detail


def test_no_errors_false_does_not_check_errors():
    traj = trajectory(ModelStep(model="m", error="HTTP 400"))
    assert decide(task(max_model_calls=5), "completed", "", traj).passed


def test_check_order():
    verdict = decide(
        task(
            output_must_contain=["a"],
            tool_calls=[{"name": "x"}],
            agent_calls=[{"agent": "A"}],
            max_model_calls=1,
            max_tokens=1,
            no_errors=True,
        ),
        "completed",
        "a",
        trajectory(),
    )
    assert [c.check for c in verdict.checks] == [
        "status",
        "output[0]",
        "tool_call:x",
        "agent_call:A",
        "model_calls",
        "tokens",
        "no_errors",
    ]


def test_error_verdict():
    verdict = verdict_from_rows([attempt_row("agent did not start within 45 s")])
    assert not verdict.passed
    assert "agent did not start within 45 s" in verdict.reason
    assert len(verdict.checks) == 1 and not verdict.checks[0].passed


# --- args_contain ------------------------------------------------------------------


@pytest.mark.parametrize(
    "actual, expected, result",
    [
        ({"a": 1, "b": 2}, {"a": 1}, True),
        ({"a": 1}, {"a": 1, "b": 2}, False),
        ({"a": {"b": {"c": 1, "d": 2}}}, {"a": {"b": {"c": 1}}}, True),
        ({"a": {"b": {"c": 2}}}, {"a": {"b": {"c": 1}}}, False),
        ({"a": "x"}, {"a": {}}, False),
        ({"a": {}}, {"a": {}}, True),
        (17, 17.0, True),
        (17.5, 17, False),
        ("17", 17, False),
        (17, "17", False),
        (True, 1, False),
        (1, True, False),
        (False, 0, False),
        (True, True, True),
        (None, None, True),
        (None, "", False),
        (0, None, False),
        ("Paris", "Paris", True),
        ("paris", "Paris", False),
        ("x", {"a": 1}, False),
        ({"a": [1, 2, 3]}, {"a": [3, 1]}, True),
        ({"a": [1, 2]}, {"a": [1, 1]}, False),
        ({"a": [1, 1, 2]}, {"a": [1, 1]}, True),
        ([], [], True),
        ([1], [], True),
        ("abc", ["a"], False),
        ({"a": 1}, [1], False),
    ],
)
def test_args_contain(actual, expected, result):
    assert args_contain(actual, expected) is result


def test_list_items_need_different_actual_items():
    # Greedy left-to-right pairing would give the first expected item {"k": 1} to the
    # first actual item (which also fits the second) and fail; a proper matching passes.
    actual = [{"k": 1, "v": 2}, {"k": 1}]
    assert args_contain(actual, [{"k": 1}, {"k": 1, "v": 2}])
    assert not args_contain([{"k": 1, "v": 2}], [{"k": 1}, {"v": 2}])
    assert args_contain([{"k": 1, "v": 2}, {"v": 2}], [{"k": 1}, {"v": 2}])


def test_nested_lists_of_dicts():
    actual = {"items": [{"sku": "a", "qty": 2, "tags": ["x", "y"]}, {"sku": "b", "qty": 1}]}
    assert args_contain(actual, {"items": [{"sku": "b"}, {"tags": ["y"]}]})
    assert not args_contain(actual, {"items": [{"sku": "a", "tags": ["z"]}]})


# --- the reference evaluator's verdicts ---------------------------------------------


def reference_cases():
    if not REFERENCE.is_dir():
        return []
    tasks = {t["id"]: t for t in json.loads((REFERENCE / "tasks.json").read_text())}
    return [
        pytest.param(tasks[json.loads(p.read_text())["task_id"]], p, id=f"{p.parent.parent.name}/{p.stem}")
        for p in sorted(REFERENCE.glob("*/episodes/*.json"))
    ]


@pytest.mark.parametrize("raw_task, path", reference_cases())
def test_reference_fixture_verdicts(raw_task, path):
    episode = Episode.model_validate_json(path.read_text())
    verdict = verdict_from_rows(score_checks(Task.model_validate(raw_task), episode))
    assert verdict.passed == episode.verdict.passed, verdict.reason
    assert len(verdict.reason.split("; ")) == len(verdict.checks)
