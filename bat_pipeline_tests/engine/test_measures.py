"""Metrics without an LLM against hand-computed values: classification (accuracy,
precision/recall/F1 per label, the confusion matrix), performance (time decay, latency
percentiles, throughput), and reading code answers and the tools' reports."""

from __future__ import annotations

import math

import pytest

from bat_pipeline.engine.contracts import Expected, MetricsSettings, Task
from bat_pipeline.engine.measures.classification import classify, expected_label, predicted_label
from bat_pipeline.engine.measures.code_quality import code_blocks, complexity_score, lint_score, read_radon, read_ruff
from bat_pipeline.engine.measures.partition import partition_measures
from bat_pipeline.engine.measures.performance import percentile, performance, time_score
from bat_pipeline.engine.verdicts import check_partition
from bat_pipeline_tests.support.judge_server import weather_episode

# 10 answers: cat ×4 (3 right, 1 said dog), dog ×4 (2 right, 1 cat, 1 bird), bird ×2 (both right)
PAIRS = (
    [("cat", "cat")] * 3
    + [("cat", "dog")]
    + [("dog", "dog")] * 2
    + [("dog", "cat"), ("dog", "bird")]
    + [("bird", "bird")] * 2
)


def test_classification_by_hand() -> None:
    report = classify(PAIRS)
    assert report.count == 10 and report.accuracy == pytest.approx(0.7)
    assert report.labels == ["bird", "cat", "dog"]
    assert report.confusion == {
        "bird": {"bird": 2, "cat": 0, "dog": 0},
        "cat": {"bird": 0, "cat": 3, "dog": 1},
        "dog": {"bird": 1, "cat": 1, "dog": 2},
    }
    cat, dog, bird = report.per_label["cat"], report.per_label["dog"], report.per_label["bird"]
    # cat: predicted 4 times, 3 right; expected 4 times, 3 found
    assert (cat.precision, cat.recall, cat.f1, cat.support) == (0.75, 0.75, pytest.approx(0.75), 4)
    # dog: predicted 3 times, 2 right; expected 4, 2 found → F1 = 2·(2/3·1/2)/(2/3+1/2) = 4/7
    assert (dog.precision, dog.recall) == (pytest.approx(2 / 3), 0.5) and dog.f1 == pytest.approx(4 / 7)
    # bird: predicted 3 times, 2 right; expected 2, both found → F1 = 0.8
    assert (bird.precision, bird.recall, bird.f1) == (pytest.approx(2 / 3), 1.0, pytest.approx(0.8))
    assert report.macro_f1 == pytest.approx((0.75 + 4 / 7 + 0.8) / 3)


def test_a_label_never_expected_and_one_never_predicted() -> None:
    report = classify([("yes", "maybe"), ("yes", "yes"), ("no", "yes")])
    assert report.labels == ["no", "yes", "maybe"]
    assert report.per_label["maybe"].precision == 0.0 and report.per_label["maybe"].recall is None
    assert report.per_label["no"].precision is None and report.per_label["no"].f1 == 0.0
    # yes: predicted twice, right once; expected twice, found once → F1 0.5; macro (0 + 0.5 + 0) / 3
    assert report.per_label["yes"].f1 == 0.5 and report.macro_f1 == pytest.approx(0.5 / 3)
    assert classify([]).accuracy is None


def test_reading_expected_and_predicted_labels() -> None:
    plain = Task(id="a", turns=["?"], expected=Expected(expected_label="Positive"))
    structured = Task(id="b", turns=["?"], expected=Expected(expected_output={"decision": "reject", "why": "x"}))
    assert expected_label(plain, None) == "Positive"
    assert expected_label(structured, "decision") == "reject" and expected_label(structured, None) is None
    assert predicted_label("  positive.\n", None, ["Positive"]) == "Positive"
    assert predicted_label('{"decision": "Reject"}', "decision", ["reject"]) == "reject"
    assert predicted_label("not json", "decision", ["reject"]) == "not json"
    cities = ["Paris", "Rome", "Oslo"]
    assert predicted_label("It is sunny in rome; Paris is cloudy.", None, cities) == "Rome"  # named first
    assert predicted_label("Berlin", None, cities) == "Berlin"  # short: as written
    assert predicted_label("I cannot tell which city you mean, sorry about that.", None, cities) == "(other)"


@pytest.mark.parametrize(
    ("seconds", "threshold", "penalty", "score"),
    [
        (5, 10, 1, 1.0),
        (10, 10, 1, 1.0),
        (20, 10, 1, math.exp(-1)),
        (15, 10, 2, math.exp(-1)),
        (40, 10, 0.5, math.exp(-1.5)),
    ],
)
def test_time_decays_exponentially_past_the_threshold(seconds, threshold, penalty, score) -> None:
    assert time_score(seconds, threshold, penalty) == pytest.approx(score)


def test_latency_percentiles_and_throughput() -> None:
    values = [float(v) for v in range(1, 11)]  # 1..10
    assert percentile(values, 50) == 5.5 and percentile(values, 90) == pytest.approx(9.1)
    assert percentile(values, 99) == pytest.approx(9.91) and percentile([], 50) is None
    perf = performance(values, threshold_s=5, penalty=1, elapsed_s=4.0, target_per_s=5.0)
    assert perf.throughput_per_s == 2.5 and perf.throughput_score == 0.5 and perf.p95_s == pytest.approx(9.55)
    expected_mean = (5 + sum(math.exp(-(v - 5) / 5) for v in range(6, 11))) / 10
    assert perf.mean_time_score == pytest.approx(expected_mean)
    assert performance(values, threshold_s=5, penalty=1, elapsed_s=None, target_per_s=5).throughput_score is None


def test_code_blocks_and_tool_reports() -> None:
    answer = "Here:\n```python\ndef f():\n    return 1\n```\nand\n```py\nx = 2\n```\n```bash\nls\n```"
    assert code_blocks(answer) == "def f():\n    return 1\n\nx = 2\n"
    assert code_blocks("```\nplain\n```") is None and code_blocks("no code") is None
    findings, parses = read_ruff(
        [
            {"code": "F401", "message": "unused", "location": {"row": 1}},
            {"code": None, "message": "SyntaxError: bad", "location": {"row": 2}},
        ]
    )
    assert [f.code for f in findings] == ["F401", "syntax"] and parses is False
    assert read_radon(
        {"a.py": [{"name": "f", "complexity": 4, "classname": None}, {"name": "m", "complexity": 12, "classname": "C"}]}
    ) == {"f": 4, "C.m": 12}
    assert (lint_score(0), lint_score(3), lint_score(12)) == (1.0, pytest.approx(0.7), 0.0)
    assert (complexity_score(10), complexity_score(15), complexity_score(25)) == (1.0, 0.5, 0.0)


class Options:
    metrics = MetricsSettings(label_field="decision", time_threshold_s=0.5)
    label_field = "decision"


def test_label_and_time_rows_and_the_partition_measures() -> None:
    tasks = [
        Task(id=f"t{i}", turns=["?"], expected=Expected(status=None, expected_output={"decision": want}))
        for i, want in enumerate(["accept", "reject", "reject"])
    ]
    episodes = [
        weather_episode(task_id=f"t{i}", answer_text=said)
        for i, said in enumerate(['{"decision": "accept"}', "Accept.", '{"decision": "reject"}'])
    ]
    episodes = check_partition(episodes, tasks, options=Options())
    label_rows = [r for e in episodes for r in e.scores if r.scorer == "label"]
    assert [(r.passed, r.details["predicted"]) for r in label_rows] == [
        (True, "accept"),
        (False, "Accept"),
        (True, "reject"),
    ]
    assert all(not r.gating for r in label_rows)
    time_rows = [r for e in episodes for r in e.scores if r.scorer == "time"]
    assert [(r.raw, r.passed) for r in time_rows] == [(0.9, False)] * 3
    assert time_rows[0].value == pytest.approx(math.exp(-0.8))
    found = partition_measures(episodes, Options.metrics, {"conversations": 1.5})
    assert found["classification"]["accuracy"] == pytest.approx(2 / 3)
    assert found["classification"]["confusion"]["reject"] == {"accept": 0, "reject": 1, "Accept": 1}
    assert found["performance"]["throughput_per_s"] == 2.0 and found["performance"]["p50_s"] == 0.9
