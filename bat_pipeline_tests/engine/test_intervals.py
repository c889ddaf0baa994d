"""engine/intervals: the clustered interval and the paired difference against figures
worked out by hand (each test spells the arithmetic out)."""

from __future__ import annotations

import pytest

from bat_pipeline.engine.intervals import clustered_interval, paired_difference, t_quantile, wilson


def test_t_quantiles_are_students():
    # Tables of Student's t: two-sided 95 % with 5 df is 2.5706, 80 % with 5 df 1.4759.
    assert t_quantile(0.95, 5) == pytest.approx(2.570582, abs=1e-6)
    assert t_quantile(0.80, 5) == pytest.approx(1.475884, abs=1e-6)


def test_clustered_interval_by_hand():
    # Six tasks, three attempts each, passing 3, 2, 0, 3, 1, 3: N = 18, mean 12/18 = 2/3.
    # Per-task residual sums (passed − 3·2/3): 1, 0, −2, 1, −1, 1; their squares add to 8.
    # Var = 6/5 · 8 / 18² → se = √9.6 / 18 = 0.172133; t(80 %, 5 df) = 1.475884;
    # half-width 0.254049 → [0.412618, 0.920716].
    passes = [3, 2, 0, 3, 1, 3]
    clusters = [[1.0] * p + [0.0] * (3 - p) for p in passes]
    low, high = clustered_interval(clusters, 0.80)
    assert low == pytest.approx(0.412618, abs=1e-5)
    assert high == pytest.approx(0.920716, abs=1e-5)


def test_clustering_widens_the_interval_when_attempts_agree():
    # The same 18 outcomes taken as 18 independent tasks give a narrower interval: attempts
    # of a task that agree carry less information than separate tasks.
    passes = [3, 2, 0, 3, 1, 3]
    outcomes = [x for p in passes for x in [1.0] * p + [0.0] * (3 - p)]
    clustered = clustered_interval([[1.0] * p + [0.0] * (3 - p) for p in passes], 0.80)
    independent = clustered_interval([[x] for x in outcomes], 0.80)
    assert clustered[1] - clustered[0] > independent[1] - independent[0]


def test_a_rate_at_its_bound_is_not_certain():
    # 13 tasks, every attempt passed: no spread, so Wilson's interval with one observation
    # per task, n = 13, p = 1: centre (1 + z²/2n)/(1 + z²/n), half (z²/2n)/(1 + z²/n), so
    # low = 1/(1 + z²/n) = 13/(13 + 1.959964²) = 0.771898 and high = 1.
    low, high = clustered_interval([[1.0, 1.0, 1.0]] * 13, 0.95)
    assert high == pytest.approx(1.0)
    assert low == pytest.approx(13 / (13 + 1.959964**2), abs=1e-5)
    assert wilson(0.0, 13, 0.95)[0] == 0.0 and wilson(0.0, 12, 0.95)[0] == 0.0  # exactly, not 1e-17
    assert wilson(1.0, 12, 0.95)[1] == 1.0


def test_constant_scores_inside_the_range_have_a_zero_width_interval():
    assert clustered_interval([[0.5, 0.5], [0.5]], 0.95) == (0.5, 0.5)


def test_one_task_gives_no_interval():
    assert clustered_interval([[1.0, 0.0, 1.0]], 0.95) is None


def test_paired_difference_by_hand():
    # Per-task means base 1, 0, 0.5, 1 and candidate 0, 0, 0, 0.5: differences −1, 0,
    # −0.5, −0.5, mean −0.5; sd = √((0.25 + 0.25 + 0 + 0)/3) = 0.408248; se = 0.204124;
    # t(95 %, 3 df) = 3.182446 → half 0.649612 → [−1.149612, 0.149612]: not significant.
    base = {"a": [1.0, 1.0], "b": [0.0, 0.0], "c": [1.0, 0.0], "d": [1.0, 1.0]}
    candidate = {"a": [0.0, 0.0], "b": [0.0, 0.0], "c": [0.0, 0.0], "d": [1.0, 0.0], "new": [1.0]}
    result = paired_difference(base, candidate, 0.95)
    assert result.tasks == 4  # `new` has no base side
    assert result.difference == pytest.approx(-0.5)
    assert result.low == pytest.approx(-1.149612, abs=1e-5)
    assert result.high == pytest.approx(0.149612, abs=1e-5)
    assert not result.significant and result.verdict == "no detectable difference"
    assert [d.task_id for d in result.per_task] == ["a", "b", "c", "d"]


def test_a_consistent_drop_is_significant_and_equal_runs_are_not():
    base = {t: [1.0, 1.0] for t in "abcdef"}
    worse = {t: [0.0, 1.0] if t in "abc" else [0.0, 0.0] for t in "abcdef"}
    drop = paired_difference(base, worse, 0.95)
    assert drop.significant and drop.verdict == "worse" and drop.high < 0
    assert paired_difference(worse, base, 0.95).verdict == "better"
    same = paired_difference(base, base, 0.95)
    assert same.difference == 0 and not same.significant


def test_every_task_flipped_is_not_a_certain_difference():
    # 12 tasks, each passing every attempt on the base side and none on the candidate's:
    # every difference is −1, at the edge of [−1, 1]. The share of tasks that broke is 12/12;
    # Wilson's interval of it (as for a rate at its bound) has low 12/(12 + z²) = 0.757549,
    # so the difference lies in [−1, −0.757549]: significant, no longer of zero width.
    base = {f"t{i}": [1.0, 1.0] for i in range(12)}
    candidate = {f"t{i}": [0.0, 0.0] for i in range(12)}
    drop = paired_difference(base, candidate, 0.95, bounds=(0.0, 1.0))
    assert drop.low == pytest.approx(-1.0)
    assert drop.high == pytest.approx(-12 / (12 + 1.959964**2), abs=1e-5)
    assert drop.verdict == "worse"
    gain = paired_difference(candidate, base, 0.95, bounds=(0.0, 1.0))
    assert gain.high == pytest.approx(1.0) and gain.low == pytest.approx(-drop.high, abs=1e-9)
    # Three tasks all broken: [−1, −3/(3 + z²)] = [−1, −0.438577], still below 0.
    few = paired_difference({t: [1.0] for t in "abc"}, {t: [0.0] for t in "abc"}, 0.95, bounds=(0.0, 1.0))
    assert few.high == pytest.approx(-3 / (3 + 1.959964**2), abs=1e-5) and few.significant
    # Without bounds the values' range is unknown: the zero-width interval stays.
    assert paired_difference(base, candidate, 0.95).low == paired_difference(base, candidate, 0.95).high == -1.0
