"""The agentic-v2-eval judge kinds, pure parts: reading a choice (last line, last three
lines, none), the standard judge's cut and grades, the pattern rubric's gates, and the
median and spread of N runs, against hand-computed values."""

from __future__ import annotations

import pytest

from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.judge_samples import MEDIAN, PANEL, last_word, median_rows, panel_rows, sampled
from bat_pipeline.engine.llm_judges.choice import parse_choice
from bat_pipeline.engine.llm_judges.graded import parse_graded, pattern_rubric, standard_rubric
from bat_pipeline.engine.llm_judges.rubric_rows import letter_grade
from bat_pipeline.engine.llm_judges.view import cut_long
from bat_pipeline.engine.yaml_rubrics import score


@pytest.mark.parametrize(
    ("text", "label", "how", "value", "passed"),
    [
        ("Clear and correct.\n4", "4", "last line", 0.75, True),
        ("reasoning\n  5  \n\n", "5", "last line", 1.0, True),
        ("The grade is 1", "1", "last three lines", 0.0, False),  # contained, not exact: lowest label
        ("a\nb\nI hesitate between 4 and 2.\nFinal: three", "2", "last three lines", 0.25, True),
        ("Grade 3\nline two\nline three\nline four", None, "none", 0.0, False),  # only the last three lines count
        ("no digits at all", None, "none", 0.0, False),
        ("", None, "none", 0.0, False),
        ("<think>5\n5</think>I'd say\n2", "2", "last line", 0.25, True),
    ],
)
def test_choice_parsing(text: str, label: str | None, how: str, value: float, passed: bool) -> None:
    found = parse_choice(text)
    assert (found.label, found.how, found.score, found.passed) == (label, how, value, passed)


def test_long_input_keeps_the_first_16000_and_last_1000_characters() -> None:
    assert cut_long("x" * 18_000) == "x" * 18_000
    text = "a" * 16_000 + "b" * 3_000 + "c" * 1_000
    cut = cut_long(text)
    assert cut.startswith("a" * 16_000) and cut.endswith("c" * 1_000)
    assert "[… 3000 characters cut …]" in cut and "b" not in cut


@pytest.mark.parametrize(
    ("unit", "grade"), [(0.95, "A"), (0.9, "A"), (0.85, "B"), (0.7, "C"), (0.65, "D"), (0.59, "F")]
)
def test_letter_grades(unit: float, grade: str) -> None:
    assert letter_grade(unit) == grade


def test_standard_passes_at_seven() -> None:
    rubric = standard_rubric()
    dims = [c.name for c in rubric.criteria]
    assert score(rubric, dict.fromkeys(dims, 7)).passed is True
    assert score(rubric, {**dict.fromkeys(dims, 7), "clarity": 6.9}).passed is False
    found = parse_graded(rubric, 'ok {"scores": {"clarity": 8, "structure": "9", "x": 1}, "confidence": 0.5}')
    assert found["scores"] == {"clarity": 8.0} and found["confidence"] == 0.5
    with pytest.raises(ValueError, match="no JSON object"):
        parse_graded(rubric, "8/10")


def test_pattern_rubrics_have_universal_and_own_dimensions_and_gates() -> None:
    react = pattern_rubric("react")
    assert len(react.criteria) == 10 and react.criteria[7].name == "thought_action_pairing"
    assert [(g.criterion, g.minimum) for g in react.gates()] == [
        ("step_order", 3),
        ("termination", 2),
        ("thought_action_pairing", 3),
    ]
    for name in ("cove", "reflexion", "rag"):
        assert len(pattern_rubric(name).criteria) == 10


def row(value: float | None, sample: int = 0, judge: str = "j1", criterion: str = "c", **over: object) -> ScoreRow:
    fields: dict[str, object] = {"reason": f"run {sample}", **over}
    return ScoreRow(
        scorer="s", criterion=criterion, value=value, raw=value, scale="0..1", sample=sample, judge=judge, **fields
    )


def test_median_and_spread_of_runs() -> None:
    runs = [[row(0.25)], [row(1.0)], [row(0.5)], [row(0.75)]]
    rows = sampled(runs, None)
    assert [r.sample for r in rows] == [0, 1, 2, 3, MEDIAN]
    median = rows[-1]
    assert median.value == pytest.approx(0.625) and median.details["spread"] == 0.75
    assert median.details["values"] == [0.25, 1.0, 0.5, 0.75] and median.details["count"] == 4
    assert median.details["stdev"] == pytest.approx(0.279508, abs=1e-6)
    assert last_word(rows) == [median]


def test_only_the_summing_row_gates_and_passed_is_the_majority() -> None:
    runs = [
        [row(1.0, passed=True, gating=True)],
        [row(0.0, passed=False, gating=True)],
        [row(1.0, passed=True, gating=True)],
    ]
    rows = sampled(runs, None)
    assert [r.gating for r in rows] == [False, False, False, True]
    assert rows[-1].passed is True and rows[-1].value == 1.0


def test_rows_without_values_and_skips() -> None:
    skipped = ScoreRow(scorer="s", criterion="c", judge="j1", reason="skipped: nothing to judge")
    assert sampled([[skipped], [skipped], [skipped]], None) == [skipped]
    failed = [row(None, reason="judge failed: HTTP 500"), row(None, 1, reason="judge failed: HTTP 500")]
    median = median_rows(failed)[0]
    assert median.value is None and median.reason == "judge failed: HTTP 500" and median.details["count"] == 2


def test_a_panel_reports_each_judge_their_median_and_agreement() -> None:
    per_judge = [[row(1.0, judge="a")], [row(0.5, judge="b")], [row(0.75, judge="c")]]
    rows = panel_rows(per_judge)
    panel = rows[-1]
    assert panel.judge == PANEL and panel.value == 0.75
    assert panel.details["judges"] == {"a": 1.0, "b": 0.5, "c": 0.75} and panel.details["agreement"] == 0.5
    assert last_word(rows) == [panel]


def test_one_parser_reads_every_judges_answer():
    """engine.judge_answers: top-level objects in order, broken braces skipped, nested ones
    only when asked, the reasoning before `</think>` left out."""
    from bat_pipeline.engine.judge_answers import after_thinking, json_objects

    text = 'x {"a": {"b": 1}} {broken {"c": 2} y {"d": [3]}'
    assert json_objects(text) == [{"a": {"b": 1}}, {"c": 2}, {"d": [3]}]
    assert json_objects(text, nested=True) == [{"a": {"b": 1}}, {"b": 1}, {"c": 2}, {"d": [3]}]
    assert after_thinking('<think>{"score": 0}</think> {"score": 1}') == ' {"score": 1}'
    assert after_thinking("no reasoning") == "no reasoning"
