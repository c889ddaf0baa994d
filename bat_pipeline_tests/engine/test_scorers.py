"""The check scorers (engine/scorers/) and the engine around them: which scorers a task
selects, the rows they write, the `spans` and `attempt` rows, broken and project scorers,
the verdict from rows, a partition's scoring, and the statistics of rows."""

from __future__ import annotations

import uuid

import pytest

from bat_pipeline.engine.config import load_eval_config
from bat_pipeline.engine.contracts import (
    AgentStep,
    Episode,
    ModelStep,
    ScoreRow,
    Task,
    ToolStep,
    Totals,
    Trajectory,
    Turn,
)
from bat_pipeline.engine.contracts.episode import EpisodeTrace
from bat_pipeline.engine.errors import InputError
from bat_pipeline.engine.score_stats import criterion_stats, scorer_stats, scores_table
from bat_pipeline.engine.scorers import ScoringInput, check, registered
from bat_pipeline.engine.verdicts import NO_SPANS, check_partition, score_checks, verdict_from_rows

HERE = [__name__]
"""This module as a project's scorer module: its scorers apply only when it is named."""


def _marked(name: str):
    return lambda item: item.task.meta.get("use") == name


@check("test_needs_spans", applies=_marked("needs_spans"), order=5, needs_trajectory=True)
def _needs_spans(item: ScoringInput) -> list[ScoreRow]:
    return [ScoreRow(scorer="test_needs_spans", criterion="steps", value=1.0, passed=True, gating=True)]


@check("test_raises", applies=_marked("raises"))
def _raises(item: ScoringInput) -> list[ScoreRow]:
    raise RuntimeError("no luck")


@check("test_stray", applies=_marked("stray"))
def _stray(item: ScoringInput) -> list[ScoreRow]:
    return [ScoreRow(scorer="status", criterion="status", passed=True, gating=True)]


@check("test_bad_applies", applies=lambda item: _marked("bad_applies")(item) and item.task.meta["missing"])
def _bad_applies(item: ScoringInput) -> list[ScoreRow]:
    return []


def task(meta: dict | None = None, **expected) -> Task:
    return Task(id="t", turns=["hi"], expected=expected, meta=meta or {})


def episode(*steps, status="completed", output="", found=True, totals: Totals | None = None, **aux) -> Episode:
    trajectory = Trajectory(
        found=found, turns=[Turn(user="hi", steps=list(steps))] if found else [], totals=totals or Totals()
    )
    return Episode(
        model_name="p:m",
        task_id="t",
        final_status=status,
        final_output=output,
        aux=aux,
        trace=EpisodeTrace(trajectory=trajectory),
    )


def scorers_of(rows: list[ScoreRow]) -> list[str]:
    return [r.scorer for r in rows]


# --- selection and the rows of each scorer ---------------------------------------------


def test_builtin_check_scorers_in_order():
    builtin = [s.name for s in registered("check") if s.fn.__module__.startswith("bat_pipeline.engine.scorers.")]
    # bat-cli's checks in its order, then the others (AgentV graders, trajectory assertions:
    # they apply only to tasks that declare them).
    assert builtin[:6] == ["status", "output", "tool_calls", "agent_calls", "limits", "errors"]
    assert {"text", "script", "trajectory"} <= set(builtin[6:])


def test_the_tasks_expectations_select_the_scorers():
    assert scorers_of(score_checks(task(status=None), episode())) == []
    assert scorers_of(score_checks(task(output_must_contain=["a", "b"]), episode())) == ["status", "output", "output"]
    full = task(
        output_must_contain=["a"],
        tool_calls=[{"name": "x"}],
        agent_calls=[{"agent": "A"}],
        max_tokens=9,
        no_errors=True,
        trajectory={"max_steps": 3},
    )
    assert scorers_of(score_checks(full, episode())) == [
        "status",
        "output",
        "tool_calls",
        "agent_calls",
        "limits",
        "errors",
        "trajectory",
        "trajectory",
    ]


def test_a_check_row_is_pass_fail_and_gating():
    (ok,) = score_checks(task(), episode())
    (failed,) = score_checks(task(), episode(status="input-required"))
    assert (ok.value, ok.raw, ok.scale, ok.passed, ok.gating, ok.sample, ok.judge) == (
        1.0,
        1.0,
        "pass/fail",
        True,
        True,
        0,
        None,
    )
    assert (failed.value, failed.raw, failed.passed, failed.reason) == (
        0.0,
        0.0,
        False,
        "ended input-required, expected completed",
    )


def test_output_has_one_criterion_per_phrase():
    rows = score_checks(task(status=None, output_must_contain=["22", "Rome"]), episode(output="22°C"))
    assert [(r.criterion, r.passed, r.details["phrase"]) for r in rows] == [
        ("output[0]", True, "22"),
        ("output[1]", False, "Rome"),
    ]


def test_tool_calls_row_counts_matching_and_other_calls():
    rows = score_checks(
        task(status=None, tool_calls=[{"name": "w", "args_subset": {"c": 1}, "times": 2}]),
        episode(ToolStep(name="w", args={"c": 1}), ToolStep(name="w", args={"c": 2})),
    )
    (row,) = rows
    assert (row.scorer, row.criterion, row.passed) == ("tool_calls", "tool_call:w", False)
    assert row.details == {"calls": 1, "other_arguments": 1, "times": 2}


def test_agent_calls_row_per_agent():
    rows = score_checks(task(status=None, agent_calls=[{"agent": "A"}, {"agent": "B"}]), episode(AgentStep(agent="A")))
    assert [(r.criterion, r.passed) for r in rows] == [("agent_call:A", True), ("agent_call:B", False)]


def test_limits_rows_only_for_the_limits_set():
    totals = Totals(model_calls=3, tokens_in=10, tokens_out=5)
    (calls,) = score_checks(task(status=None, max_model_calls=2), episode(totals=totals))
    assert (calls.scorer, calls.criterion, calls.passed, calls.details) == (
        "limits",
        "model_calls",
        False,
        {"used": 3, "limit": 2},
    )
    both = score_checks(task(status=None, max_model_calls=3, max_tokens=15), episode(totals=totals))
    assert [(r.criterion, r.passed) for r in both] == [("model_calls", True), ("tokens", True)]


def test_errors_row_counts_failed_steps():
    (row,) = score_checks(task(status=None, no_errors=True), episode(ModelStep(model="m", error="HTTP 500")))
    assert (row.scorer, row.criterion, row.passed, row.details) == ("errors", "no_errors", False, {"failed_steps": 1})


# --- the rows that stand for others ------------------------------------------------------


def test_no_trajectory_one_spans_row_where_the_first_trajectory_scorer_would_be():
    rows = score_checks(
        task(meta={"use": "needs_spans"}, output_must_contain=["x"], tool_calls=[{"name": "t"}], no_errors=True),
        episode(output="x", found=False),
        HERE,
    )
    assert scorers_of(rows) == ["spans", "status", "output"]
    assert (rows[0].criterion, rows[0].passed, rows[0].gating, rows[0].reason) == ("spans", False, True, NO_SPANS)


def test_an_attempt_that_raised_is_one_failed_attempt_row():
    (row,) = score_checks(task(output_must_contain=["x"]), episode(eval_error="agent died"))
    assert (row.scorer, row.criterion, row.passed, row.gating) == ("attempt", "attempt", False, True)
    assert row.reason == "the attempt did not complete: agent died"


def test_a_task_gone_from_the_dataset_is_one_failed_attempt_row():
    (row,) = score_checks(None, episode())
    assert row.reason == "the attempt did not complete: task 't' is no longer in the dataset"


# --- project scorers -----------------------------------------------------------------------


def test_a_project_scorer_applies_only_when_its_module_is_named():
    marked = task(meta={"use": "needs_spans"})
    assert scorers_of(score_checks(marked, episode())) == ["status"]
    assert scorers_of(score_checks(marked, episode(), HERE)) == ["test_needs_spans", "status"]


@pytest.mark.parametrize(
    "use, why",
    [
        ("raises", "scorer failed: raised RuntimeError: no luck"),
        (
            "stray",
            "scorer failed: returned a row of scorer 'status'; a scorer returns ScoreRow objects named 'test_stray'",
        ),
    ],
)
def test_a_broken_scorer_leaves_a_null_row_that_does_not_gate(use, why):
    rows = score_checks(task(meta={"use": use}), episode(), HERE)
    broken = rows[-1]
    assert (broken.scorer, broken.value, broken.passed, broken.gating, broken.reason) == (
        f"test_{use}",
        None,
        None,
        False,
        why,
    )
    assert verdict_from_rows(rows).passed


def test_a_scorer_whose_applies_raises_leaves_a_null_row():
    rows = score_checks(task(meta={"use": "bad_applies"}), episode(), HERE)
    (broken,) = [r for r in rows if r.scorer == "test_bad_applies"]
    assert broken.reason.startswith("scorer failed: its `applies` raised KeyError") and broken.passed is None


def test_a_project_module_in_the_agent_folder_is_imported_when_eval_yaml_is_read(tmp_path):
    name = f"project_checks_{uuid.uuid4().hex[:8]}"
    (tmp_path / "eval").mkdir()
    (tmp_path / "eval" / "eval.yaml").write_text(f"evaluation: {{scorers: [{name}]}}\nmodels: [openai:gpt]\n")
    (tmp_path / f"{name}.py").write_text(
        "from bat_pipeline.engine.scorers import ScoreRow, check\n"
        f"@check('{name}')\n"
        f"def scorer(item):\n    return [ScoreRow(scorer='{name}', criterion='c', value=0.5)]\n"
    )
    config = load_eval_config(tmp_path, environ={})
    (checked,) = check_partition([episode()], [task()], config)
    assert scorers_of(checked.scores) == ["status", name]


def test_a_project_module_that_raises_is_refused_naming_the_entry(tmp_path):
    name = f"project_broken_{uuid.uuid4().hex[:8]}"
    (tmp_path / "eval").mkdir()
    (tmp_path / "eval" / "eval.yaml").write_text(f"evaluation: {{scorers: [{name}]}}\nmodels: [openai:gpt]\n")
    (tmp_path / f"{name}.py").write_text("raise ValueError('half written')\n")
    with pytest.raises(InputError) as caught:
        load_eval_config(tmp_path, environ={})
    assert (caught.value.entry, caught.value.field) == ("evaluation", "scorers[0]")
    assert f"cannot import scorer module '{name}': ValueError: half written" in str(caught.value)
    assert str(tmp_path / "eval" / "eval.yaml") in str(caught.value)


# --- the verdict and a partition -------------------------------------------------------------


def test_the_verdict_counts_only_gating_rows():
    rows = [
        ScoreRow(scorer="s", criterion="a", passed=True, gating=True, reason="fine"),
        ScoreRow(scorer="j", criterion="b", value=0.1, passed=False, gating=False),
    ]
    verdict = verdict_from_rows(rows)
    assert (verdict.passed, verdict.reason, [c.check for c in verdict.checks]) == (True, "a ok: fine", ["a"])


def test_a_gating_row_without_a_decision_fails_the_verdict():
    assert not verdict_from_rows([ScoreRow(scorer="s", criterion="a", gating=True)]).passed


def test_no_gating_rows_pass_with_an_empty_reason():
    verdict = verdict_from_rows([])
    assert (verdict.passed, verdict.reason, verdict.checks) == (True, "", [])


def test_a_partition_keeps_other_scorers_rows_and_replaces_its_own():
    judged = episode(output="x").model_copy(
        update={
            "scores": [
                ScoreRow(scorer="status", criterion="status", passed=False, gating=True, reason="stale"),
                ScoreRow(scorer="relevance", criterion="response_relevance", value=0.8, judge="openai:judge"),
            ]
        }
    )
    (checked,) = check_partition([judged], [task(output_must_contain=["x"])])
    assert [(r.scorer, r.criterion) for r in checked.scores] == [
        ("status", "status"),
        ("output", "output[0]"),
        ("relevance", "response_relevance"),
    ]
    assert checked.verdict.passed and "stale" not in checked.verdict.reason


# --- statistics of rows ------------------------------------------------------------------------


def test_criterion_stats_over_values_and_decisions():
    rows = [
        ScoreRow(scorer="s", criterion="c", value=v, passed=p) for v, p in ((0.2, True), (0.6, False), (None, None))
    ]
    stats = criterion_stats(rows)
    assert (stats.min, stats.max, stats.count, stats.passed, stats.failed) == (0.2, 0.6, 2, 1, 1)
    assert stats.avg == pytest.approx(0.4)
    assert criterion_stats(rows[2:]).model_dump() == {
        "avg": None,
        "min": None,
        "max": None,
        "count": 0,
        "passed": 0,
        "failed": 0,
        "ci": None,
        "judge_spread": None,
    }


def test_scorer_stats_in_order_of_first_appearance_and_the_table():
    first = episode().model_copy(update={"scores": [ScoreRow(scorer="b", criterion="y", value=1 / 3)]})
    second = episode().model_copy(
        update={
            "scores": [ScoreRow(scorer="a", criterion="x", value=1.0, passed=True), ScoreRow(scorer="b", criterion="x")]
        }
    )
    stats = scorer_stats([first, second])
    assert [(s, list(c)) for s, c in stats.items()] == [("b", ["y", "x"]), ("a", ["x"])]
    assert scores_table(stats) == [
        {"scorer": "b", "criterion": "y", "mean": 0.3333, "passed": 0, "failed": 0, "count": 1, **NO_SPREAD},
        {"scorer": "b", "criterion": "x", "mean": None, "passed": 0, "failed": 0, "count": 0, **NO_SPREAD},
        {"scorer": "a", "criterion": "x", "mean": 1.0, "passed": 1, "failed": 0, "count": 1, **NO_SPREAD},
    ]


NO_SPREAD = {"ci_low": None, "ci_high": None, "judge_spread": None}
"""One task, each criterion asked once: no interval, no judge spread."""


def test_the_table_carries_each_criterions_interval_and_judge_spread():
    # Two tasks (values 1.0 and 0.0): the clustered interval of their mean, 0.5, is clamped to
    # [0, 1] (t(95 %, 1 df) = 12.7: half-width 6.35); the row shows it rounded.
    rows = [
        episode().model_copy(update={"task_id": t, "scores": [ScoreRow(scorer="s", criterion="c", value=v)]})
        for t, v in (("t1", 1.0), ("t2", 0.0))
    ]
    (row,) = scores_table(scorer_stats(rows))
    assert (row["mean"], row["ci_low"], row["ci_high"], row["judge_spread"]) == (0.5, 0.0, 1.0, None)
