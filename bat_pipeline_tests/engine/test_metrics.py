"""engine.metrics: pass@k, pass^k, percentiles, and the two files against golden copies.

`UPDATE_GOLDEN=1 pytest ...` rewrites the golden files from the current code.
"""

from __future__ import annotations

import json
import os
from datetime import UTC
from pathlib import Path

import pytest

from bat_pipeline.engine.contracts import Episode, JudgeScores, Task, Totals, Trajectory, Verdict
from bat_pipeline.engine.contracts.episode import EpisodeTrace
from bat_pipeline.engine.metrics import (
    build_metrics,
    build_summary,
    in_dataset_order,
    pass_at_k,
    pass_hat_k,
    percentile,
    summary_timestamp,
)
from bat_pipeline.engine.verdicts import check_partition
from bat_pipeline_tests.support.paths import REFERENCE

GOLDEN = Path(__file__).parent / "golden"

TIMESTAMP = "20260102_030405"
K = {"good": 1, "bad": 2}
"""Attempts per task of each reference run (bad ran capital_flaky twice)."""


def episode(
    task_id="t", passed=True, wall_ms=100.0, tokens=(10, 5, 0), scores=None, status="completed", aux=None
) -> Episode:
    tokens_in, tokens_out, cached = tokens
    return Episode(
        model_name="p:m",
        task_id=task_id,
        final_status=status,
        verdict=Verdict(passed=passed, reason="r"),
        qualitative_scores=scores,
        aux=aux or {},
        trace=EpisodeTrace(
            wall_ms=wall_ms,
            trajectory=Trajectory(
                found=True, totals=Totals(tokens_in=tokens_in, tokens_out=tokens_out, tokens_cached=cached)
            ),
        ),
    )


def reference_episodes(run: str) -> list[Episode]:
    """The reference run's episodes in dataset order, with rows and verdicts redone by
    engine.verdicts so the golden files hold what bat_pipeline writes."""
    tasks = [Task.model_validate(t) for t in json.loads((REFERENCE / "tasks.json").read_text())]
    recorded = [
        Episode.model_validate_json(p.read_text()) for p in sorted((REFERENCE / run / "episodes").glob("*.json"))
    ]
    episodes = check_partition(recorded, tasks)
    assert [e.verdict.passed for e in episodes] == [e.verdict.passed for e in recorded]
    return in_dataset_order(episodes, [t.id for t in tasks])


def assert_golden(name: str, data: dict) -> None:
    path = GOLDEN / name
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"{path} missing: run with UPDATE_GOLDEN=1"
    assert json.loads(path.read_text(encoding="utf-8")) == json.loads(text)


# --- estimators ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "n, c, k, expected",
    [
        (5, 2, 1, 0.4),
        (3, 3, 2, 1.0),
        (5, 0, 3, 0.0),
        (4, 1, 2, 0.5),  # 1 - C(3,2)/C(4,2) = 1 - 3/6
        (5, 2, 4, 1.0),  # fewer failures than draws: some draw passes
        (2, 1, 5, 1.0),  # k > n: k = n
        (10, 3, 1, 0.3),
    ],
)
def test_pass_at_k(n, c, k, expected):
    assert pass_at_k(n, c, k) == pytest.approx(expected)


@pytest.mark.parametrize(
    "n, c, k, expected",
    [
        (5, 2, 1, 0.4),
        (3, 3, 2, 1.0),
        (5, 0, 1, 0.0),
        (4, 2, 2, 1 / 6),  # C(2,2)/C(4,2)
        (5, 2, 3, 0.0),  # fewer passes than draws
        (2, 1, 5, 0.0),  # k > n: k = n, not all of the 2 passed
        (2, 2, 5, 1.0),
    ],
)
def test_pass_hat_k(n, c, k, expected):
    assert pass_hat_k(n, c, k) == pytest.approx(expected)


@pytest.mark.parametrize("args", [(0, 0, 1), (3, 4, 1), (3, -1, 1), (3, 1, 0)])
def test_estimators_refuse_impossible_counts(args):
    with pytest.raises(ValueError):
        pass_at_k(*args)
    with pytest.raises(ValueError):
        pass_hat_k(*args)


def test_percentiles_interpolate_between_closest_ranks():
    values = [40.0, 10.0, 30.0, 20.0]  # sorted: 10 20 30 40
    assert percentile(values, 50) == pytest.approx(25.0)  # rank 1.5
    assert percentile(values, 90) == pytest.approx(37.0)  # rank 2.7
    assert percentile(values, 0) == 10.0
    assert percentile(values, 100) == 40.0
    assert percentile([7.0], 99) == 7.0
    assert percentile([], 50) is None
    assert percentile(list(range(1, 102)), 95) == pytest.approx(96.0)
    with pytest.raises(ValueError):
        percentile(values, 101)


# --- files ---------------------------------------------------------------------------


def test_summary_counts_attempts_per_task_and_means_scores():
    episodes = [
        episode("a", True, scores=JudgeScores(response_relevance=1.0)),
        episode("a", False, scores=JudgeScores(response_relevance=0.5, hallucination_score=0.2)),
        episode("b", True),
    ]
    summary = build_summary(episodes, run_name="r", k=2, model_name="p:m", timestamp_utc=TIMESTAMP)
    data = summary.model_dump()
    assert list(data) == ["run_name", "timestamp_utc", "k", "model_name", "attempts", "qualitative_scores", "passed"]
    assert data["attempts"] == [
        {"task_id": "a", "attempts": 2, "passed": 1, "failed": 1, "success_percentage": 50.0},
        {"task_id": "b", "attempts": 1, "passed": 1, "failed": 0, "success_percentage": 100.0},
    ]
    # As bat-cli: a judge field no episode has is left out, not null.
    assert data["qualitative_scores"] == {"response_relevance": 0.75, "hallucination_score": 0.2}


def test_summary_passed_is_the_count_of_passed_episodes():
    no_verdict = episode().model_copy(update={"verdict": None})
    summary = build_summary(
        [episode(), episode(passed=False), episode(), no_verdict],
        run_name="r",
        k=2,
        model_name="m",
        timestamp_utc=TIMESTAMP,
    )
    assert summary.passed == 2 and type(summary.model_dump()["passed"]) is int
    assert build_summary([], run_name="r", k=1, model_name="m", timestamp_utc=TIMESTAMP).passed == 0


def test_summary_names_the_model_without_its_provider():
    def name(model: str) -> str:
        return build_summary([], run_name="r", k=1, model_name=model, timestamp_utc=TIMESTAMP).model_name

    assert name("openai:gpt-4o-mini") == "gpt-4o-mini"
    assert name("ollama:llama3:8b") == "llama3:8b"
    assert name("plain") == "plain"


def test_summary_timestamp_is_bat_clis_utc_stamp():
    from datetime import datetime, timedelta, timezone

    assert summary_timestamp(datetime(2026, 1, 2, 3, 4, 5, 999, tzinfo=UTC)) == "20260102_030405"
    paris = timezone(timedelta(hours=1))
    assert summary_timestamp(datetime(2026, 1, 2, 4, 4, 5, tzinfo=paris)) == "20260102_030405"
    assert summary_timestamp(datetime(2026, 1, 2, 3, 4, 5)) == "20260102_030405"


def test_dataset_order_then_attempt():
    episodes = [
        episode("a", aux={"attempt_index": 1}),
        episode("z", aux={"attempt_index": 0}),
        episode("a", aux={"attempt_index": 0}),
        episode("gone", aux={"attempt_index": 0}),
    ]
    ordered = in_dataset_order(episodes, ["z", "a"])
    assert [(e.task_id, e.attempt_index) for e in ordered] == [("z", 0), ("a", 0), ("a", 1), ("gone", 0)]


def test_metrics_keys_and_values():
    episodes = [
        episode("a", True, wall_ms=100, tokens=(100, 10, 50)),
        episode("a", False, wall_ms=300, tokens=(300, 30, 0), status="error"),
        episode("b", True, wall_ms=200, tokens=(0, 0, 0), aux={"eval_error": "boom"}),
    ]
    data = build_metrics(episodes, k=2).model_dump()
    assert list(data) == ["per_episode", "summary", "per_task", "timings"]
    row = data["per_episode"][0]
    assert list(row) == [
        "task_id",
        "expected_outcome",
        "status",
        "success",
        "time",
        "tokens",
        "verdict",
        "qualitative",
        "scores",
    ]
    assert row["tokens"] == {
        "prompt_tokens": 100,
        "completion_tokens": 10,
        "total_tokens": 110,
        "cached_prompt_pct": 50.0,
    }
    assert row["qualitative"] == {
        "response_relevance": None,
        "task_completion_quality": None,
        "hallucination_score": None,
        "tool_call_appropriateness": None,
        "judge_reasoning": None,
    }
    assert data["per_episode"][2]["tokens"]["cached_prompt_pct"] == 0.0
    s = data["summary"]
    assert list(s) == [
        "episodes",
        "k_attempts",
        "total_runs",
        "passed",
        "failed",
        "pass_rate",
        "time",
        "tokens",
        "qualitative",
        "pass_at_k",
        "pass_hat_k",
        "error_episodes",
        "latency_ms",
        "scorers",
        "confidence",
        "interval_method",
        "pass_rate_ci",
        "pass_at_k_ci",
        "pass_hat_k_ci",
        "flaky_tasks",
    ]
    # Task a's two attempts disagree; b has one attempt.
    assert s["flaky_tasks"] == [{"task_id": "a", "attempts": 2, "passed": 1, "pass_share": 0.5}]
    assert s["confidence"] == 0.95 and "cluster" in s["interval_method"]
    low, high = s["pass_rate_ci"]
    assert 0 <= low < 2 / 3 < high <= 1
    # bat-cli's `episodes` counts episodes (attempts), not tasks.
    assert (s["episodes"], s["k_attempts"], s["total_runs"], s["passed"], s["failed"]) == (3, 2, 3, 2, 1)
    assert s["pass_rate"] == pytest.approx(2 / 3)
    assert s["time"] == {"total_wall_ms": 600, "avg_wall_ms": 200, "min_wall_ms": 100, "max_wall_ms": 300}
    assert s["tokens"] == {
        "prompt_tokens_total": 400,
        "completion_tokens_total": 40,
        "total_tokens_total": 440,
        "cached_prompt_pct": 12.5,
        "avg_total_tokens": pytest.approx(440 / 3),
        "min_total_tokens": 0,
        "max_total_tokens": 330,
    }
    assert s["error_episodes"] == 2
    assert s["latency_ms"] == {
        "p50": 200,
        "p90": pytest.approx(280),
        "p95": pytest.approx(290),
        "p99": pytest.approx(298),
    }
    assert data["per_task"] == [
        {"task_id": "a", "attempts": 2, "passed": 1, "pass_at_k": 1.0, "pass_hat_k": 0.0},
        {"task_id": "b", "attempts": 1, "passed": 1, "pass_at_k": 1.0, "pass_hat_k": 1.0},
    ]
    assert s["pass_at_k"] == 1.0 and s["pass_hat_k"] == 0.5
    assert s["qualitative"] == {}


def test_metrics_of_nothing():
    data = build_metrics([], k=3).model_dump()
    assert data["per_episode"] == [] and data["per_task"] == []
    s = data["summary"]
    assert s["total_runs"] == 0 and s["pass_rate"] is None and s["pass_at_k"] is None
    assert s["time"]["avg_wall_ms"] is None and s["latency_ms"]["p50"] is None
    json.dumps(data)


def test_qualitative_stats_over_non_null_scores():
    episodes = [episode(scores=JudgeScores(task_completion_quality=v)) for v in (0.2, None, 1.0)]
    qualitative = build_metrics(episodes, k=1).summary.qualitative
    stats = qualitative["task_completion_quality"]
    assert (stats.avg, stats.min, stats.max, stats.count) == (pytest.approx(0.6), 0.2, 1.0, 2)
    assert list(qualitative) == ["task_completion_quality"]


def test_cached_prompt_share_is_rounded_to_one_decimal_as_bat_cli():
    data = build_metrics([episode(tokens=(3, 1, 1)), episode(tokens=(6, 1, 1))], k=1)
    assert data.per_episode[0].tokens.cached_prompt_pct == 33.3
    assert data.per_episode[1].tokens.cached_prompt_pct == 16.7
    assert data.summary.tokens.cached_prompt_pct == 22.2


def test_episode_judge_reasoning_per_rubric():
    scores = JudgeScores(
        response_relevance=0.9,
        judge_reasoning={"relevance": "on topic", "tool_call": "skipped: no tool calls expected"},
    )
    judged, unjudged = build_metrics([episode(scores=scores), episode()], k=1).per_episode
    assert judged.qualitative.response_relevance == 0.9
    assert judged.qualitative.judge_reasoning == {
        "relevance": "on topic",
        "tool_call": "skipped: no tool calls expected",
    }
    assert unjudged.qualitative.judge_reasoning is None


def test_functions_are_pure():
    episodes = [episode("a"), episode("b", False)]
    before = [e.model_dump() for e in episodes]
    first = build_metrics(episodes, k=1).model_dump()
    assert build_metrics(episodes, k=1).model_dump() == first
    assert [e.model_dump() for e in episodes] == before


@pytest.mark.parametrize("run", ["good", "bad"])
def test_reference_files_match_golden(run):
    episodes = reference_episodes(run)
    model = episodes[0].model_name
    summary = build_summary(episodes, run_name="benchmark", k=K[run], model_name=model, timestamp_utc=TIMESTAMP)
    metrics = build_metrics(episodes, k=K[run])
    assert summary.passed == metrics.summary.passed == sum(e.verdict.passed for e in episodes)
    assert_golden(f"summary_{run}.json", summary.model_dump(mode="json"))
    assert_golden(f"metrics_{run}.json", metrics.model_dump(mode="json"))
