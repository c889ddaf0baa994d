"""The agentic-v2-eval judge kinds as LLM scorers — weighted rubrics (`rubric`), `choice`,
`quality`, `standard`, `pattern` — asked through the real judge client against the scripted
model server, with `runs: N` (rows per sample, their median and spread) and a panel of
judge models (each reported, their median and agreement)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from bat_pipeline.engine.contracts import JudgeSettings, PanelMember, ScoreRow, Task, TaskJudge
from bat_pipeline.engine.judge import JudgeRunResult
from bat_pipeline.engine.judge_samples import MEDIAN, PANEL
from bat_pipeline.resources.judge import JudgeClient, judge_episodes
from bat_pipeline.resources.judge_cache import JudgeCache
from bat_pipeline_tests.support import judge_server
from bat_pipeline_tests.support.judge_server import Reply, error, serve_judge, weather_episode

ENV = {"OPENAI_API_KEY": "sk-kinds-test-key-9f8e"}


@pytest.fixture(scope="module")
def llm(scripted_llm):
    """The session's scripted server, its knobs as they were after the module."""
    with scripted_llm.restoring():
        yield scripted_llm


def run(
    llm,
    task: Task,
    model: str = "judge",
    panel: list[str] = (),
    cache: JudgeCache | None = None,
    answer: str = "Paris: sunny, 21 C.",
    **over,
) -> JudgeRunResult:
    settings = JudgeSettings(
        provider="openai",
        model=model,
        base_url=llm.url + "/v1",
        max_retries=0,
        panel=[PanelMember.model_validate(m) for m in panel],
        **over,
    )
    clients = [JudgeClient(settings.member(m), environ=ENV, cache=cache) for m in settings.panel]
    return asyncio.run(
        judge_episodes(
            JudgeClient(settings, environ=ENV, cache=cache),
            [weather_episode(answer_text=answer)],
            [task],
            panel=clients,
        )
    )


def weather_task() -> Task:
    """The scripted judge grades by the expected outcome's key terms found in the answer:
    here `Paris` and `21`."""
    task = judge_server.weather_task()
    return task.model_copy(
        update={"expected": task.expected.model_copy(update={"expected_outcome": "it is sunny in Paris at 21 C"})}
    )


def rows_of(result: JudgeRunResult, scorer: str) -> list[ScoreRow]:
    return [r for r in result.rows[0] if r.scorer == scorer]


def test_judge_rubrics_unset_means_bats_four_and_a_list_replaces_them(llm):
    assert {r.scorer for r in run(llm, weather_task()).rows[0]} == {
        "relevance",
        "task_completion",
        "hallucination",
        "tool_call",
    }
    result = run(llm, weather_task(), rubrics=["default"])
    assert {r.scorer for r in result.rows[0]} == {"rubric"}
    both = run(llm, weather_task(), rubrics=["bat", "default"])
    assert {r.scorer for r in both.rows[0]} == {"relevance", "task_completion", "hallucination", "tool_call", "rubric"}


def test_a_weighted_rubric_one_choice_question_per_criterion(llm):
    rows = rows_of(run(llm, weather_task(), rubrics=["default"]), "rubric")
    assert [r.criterion for r in rows] == [
        "default:Accuracy",
        "default:Completeness",
        "default:Efficiency",
        "default:weighted_score",
    ]
    # Every expected term is in the answer: the scripted judge chooses 5 → 1.0 on each criterion.
    for r in rows[:3]:
        assert (r.value, r.raw, r.scale, r.passed, r.details["choice"]) == (1.0, 1.0, "0..1", True, "5")
        assert r.details["raw_answer"].endswith("\n5") and r.judge == "openai:judge"
    summary = rows[3]
    assert summary.value == 1.0 and summary.passed is True and summary.details["band"] == "excellent"
    assert summary.details["missing_criteria"] == [] and summary.gating is False


def test_a_task_with_its_own_yaml_rubric_on_levels(llm, tmp_path: Path):
    path = tmp_path / "weather.yaml"
    path.write_text(
        "criteria:\n  - {name: facts, weight: 3, levels: {0: wrong, 5: right}}\n"
        "  - {name: tone, hard_gate: true, minimum: 0.9}\n"
    )
    task = weather_task().model_copy(update={"judge": TaskJudge(rubrics=[str(path)])})
    rows = rows_of(run(llm, task, model="judge-harsh"), "rubric")
    # harsh: one step down → choice 4 → 0.75; facts on 0–5 → raw 3.75; the tone gate 0.75 < 0.9 fails.
    facts, _tone, summary = rows
    assert (facts.criterion, facts.raw, facts.value, facts.scale) == ("weather:facts", 3.75, 0.75, "0..5")
    assert summary.value == 0.75 and summary.passed is False
    assert summary.details["failed_gates"] == [{"criterion": "tone", "minimum": 0.9, "value": 0.75}]


def test_no_choice_in_the_answer_scores_zero_and_keeps_it(llm):
    llm.set_model("judge-garbled", malformed="content")
    try:
        rows = rows_of(run(llm, weather_task(), model="judge-garbled", kinds=["choice"]), "choice")
    finally:
        llm.reset()
    assert len(rows) == 1 and (rows[0].value, rows[0].passed, rows[0].details["read_from"]) == (0.0, False, "none")
    assert rows[0].details["raw_answer"] == "}{ not json ]["


def test_quality_asks_five_choice_questions(llm):
    before = llm.count(model="judge")
    rows = rows_of(run(llm, weather_task(), kinds=["quality"], rubrics=[], answer="It is sunny."), "quality")
    assert [r.criterion for r in rows] == [
        "coherence",
        "fluency",
        "relevance",
        "groundedness",
        "helpfulness",
        "overall",
    ]
    assert llm.count(model="judge") - before == 5
    # "It is sunny." holds none of Paris/21/C… of the expected outcome's terms: choice 1 → 0.
    assert all(r.value == 0.0 and r.passed is False for r in rows[:5])


def test_standard_grades_five_dimensions_out_of_ten(llm):
    rows = rows_of(run(llm, weather_task(), kinds=["standard"]), "standard")
    assert [r.criterion for r in rows][-1] == "overall" and len(rows) == 6
    dims = {r.criterion: r.raw for r in rows[:5]}
    assert dims == {"clarity": 10, "effectiveness": 9, "structure": 10, "specificity": 9, "completeness": 10}
    overall = rows[5]
    assert overall.raw == pytest.approx(9.6) and overall.scale == "0..10" and overall.passed is True
    assert overall.details["grade"] == "A" and overall.details["improvements"] and overall.details["confidence"] == 0.8


def test_pattern_conformance_with_gates(llm):
    skipped = rows_of(run(llm, weather_task(), kinds=["pattern"]), "pattern")
    assert skipped[0].reason.startswith("skipped: no pattern named")
    rows = rows_of(
        run(llm, weather_task(), kinds=["pattern"], pattern="react", model="judge-harsh", answer="It is sunny."),
        "pattern",
    )
    conformance = rows[-1]
    assert conformance.criterion == "conformance" and conformance.passed is False
    assert {g["criterion"] for g in conformance.details["failed_gates"]} == {
        "step_order",
        "termination",
        "thought_action_pairing",
    }


def test_runs_give_rows_per_sample_then_median_and_spread(llm, tmp_path: Path):
    cache = JudgeCache(tmp_path)
    result = run(llm, weather_task(), model="judge-noisy", kinds=["choice"], rubrics=[], runs=3, cache=cache)
    rows = rows_of(result, "choice")
    assert [r.sample for r in rows] == [0, 1, 2, MEDIAN]
    # noisy: the same question asked three times is shifted 0, +1, −1 from choice 5 → 5, 5, 4.
    assert sorted(r.details["choice"] for r in rows[:3]) == ["4", "5", "5"]
    assert rows[3].value == 1.0 and rows[3].details["spread"] == 0.25 and rows[3].details["count"] == 3
    # The cache keeps each sample apart: asking again serves all three from it.
    again = run(llm, weather_task(), model="judge-noisy", kinds=["choice"], rubrics=[], runs=3, cache=cache)
    assert again.stats.cache_hits == 3 and rows_of(again, "choice") == rows


def test_runs_on_a_rubric_recompute_the_weighted_score_from_medians(llm):
    rows = rows_of(
        run(llm, weather_task(), model="judge-noisy", rubrics=["default"], runs=3, answer="Paris is sunny."), "rubric"
    )
    summary = next(r for r in rows if r.criterion == "default:weighted_score" and r.sample == MEDIAN)
    medians = {r.criterion: r.value for r in rows if r.sample == MEDIAN and r.criterion != summary.criterion}
    expected = (
        0.5 * medians["default:Accuracy"] + 0.3 * medians["default:Completeness"] + 0.2 * medians["default:Efficiency"]
    )
    assert summary.value == pytest.approx(expected) and summary.details["count"] == 3


def test_a_panel_reports_each_judge_their_median_and_agreement(llm):
    result = run(
        llm,
        weather_task(),
        kinds=["choice"],
        panel=["openai:judge-harsh", "openai:judge-lenient"],
        answer="Paris is sunny.",
    )
    rows = rows_of(result, "choice")
    by_judge = {r.judge: r for r in rows}
    assert set(by_judge) == {"openai:judge", "openai:judge-harsh", "openai:judge-lenient", PANEL}
    values = [by_judge[j].value for j in ("openai:judge-harsh", "openai:judge", "openai:judge-lenient")]
    assert values == sorted(values) and values[0] < values[2]
    panel = by_judge[PANEL]
    assert panel.value == values[1] and panel.details["agreement"] == pytest.approx(1 - (values[2] - values[0]))
    assert panel.details["judges"] == {
        "openai:judge": values[1],
        "openai:judge-harsh": values[0],
        "openai:judge-lenient": values[2],
    }


def test_a_criterion_the_judge_fails_is_left_out_not_counted_zero():
    """`default` is agentic-v2-eval's rubric (a missing value in a results file counts 0), but in
    a run a criterion the judge could not answer is a judge error: the weighted score is that
    of the criteria answered."""

    def reply(record):
        asked = json.dumps(record["body"])
        return error(500, "judge down") if "Efficiency" in asked else Reply(content="Checked the answer.\n4")

    with serve_judge() as server:
        server.script(default=reply)
        settings = JudgeSettings(provider="openai", model="judge", base_url=server.base_url + "/v1", max_retries=0)
        result = asyncio.run(
            judge_episodes(
                JudgeClient(settings.model_copy(update={"rubrics": ["default"]}), environ=ENV),
                [weather_episode(answer_text="Paris: sunny, 21 C.")],
                [weather_task()],
            )
        )
    rows = {r.criterion: r for r in rows_of(result, "rubric")}
    assert rows["default:Efficiency"].value is None
    summary = rows["default:weighted_score"]
    assert summary.details["missing_criteria"] == ["Efficiency"]
    assert summary.value == pytest.approx(0.75)  # (0.75·0.5 + 0.75·0.3) / 0.8, not / 1.0
