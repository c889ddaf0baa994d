"""Gate results: only the gates that are set, with the model and the figures."""

from __future__ import annotations

import pytest

from bat_pipeline.engine.contracts import GateSettings
from bat_pipeline.engine.gates import GateResult, evaluate_gates


def gates(
    settings: GateSettings, *, pass_rate: float | None = 0.4, errors: int = 0, previous: float | None = None
) -> dict[str, GateResult]:
    results = evaluate_gates(
        settings, model_key="openai-sloppy", pass_rate=pass_rate, error_episodes=errors, previous_pass_rate=previous
    )
    return {r.name: r for r in results}


def test_unset_gates_produce_nothing():
    assert gates(GateSettings(), pass_rate=0.0, errors=10, previous=1.0) == {}


def test_min_pass_rate_fails_below_and_passes_at_the_limit():
    failed = gates(GateSettings(min_pass_rate=0.8), pass_rate=0.4)["min_pass_rate"]
    assert not failed.passed
    assert failed.message == "openai-sloppy: pass rate 0.40 < min_pass_rate 0.80"
    at_limit = gates(GateSettings(min_pass_rate=0.7), pass_rate=0.1 * 7)["min_pass_rate"]
    assert at_limit.passed and "0.70 >= min_pass_rate 0.70" in at_limit.message


def test_min_pass_rate_shows_enough_digits_to_tell_a_failure():
    result = gates(GateSettings(min_pass_rate=0.8), pass_rate=0.799)["min_pass_rate"]
    assert not result.passed and "pass rate 0.7990 < min_pass_rate 0.8000" in result.message


def test_min_pass_rate_without_episodes_fails():
    result = gates(GateSettings(min_pass_rate=0.5), pass_rate=None)["min_pass_rate"]
    assert not result.passed and "no episodes" in result.message


def test_max_error_episodes():
    failed = gates(GateSettings(max_error_episodes=1), errors=3)["max_error_episodes"]
    assert not failed.passed
    assert failed.message == "openai-sloppy: 3 error episodes > max_error_episodes 1"
    assert gates(GateSettings(max_error_episodes=0), errors=0)["max_error_episodes"].passed


def test_max_regression_against_the_previous_run_without_confidence():
    # gate.confidence: null keeps the plain gate: any drop above the limit fails.
    failed = gates(GateSettings(max_regression=0.1, confidence=None), pass_rate=0.6, previous=0.9)["max_regression"]
    assert not failed.passed
    assert failed.message == ("openai-sloppy: pass rate 0.60 vs previous 0.90, a drop of 0.30 > max_regression 0.10")
    within = gates(GateSettings(max_regression=0.2, confidence=None), pass_rate=0.1, previous=0.3)["max_regression"]
    assert within.passed and "a drop of 0.20 <= max_regression 0.20" in within.message
    better = gates(GateSettings(max_regression=0.0, confidence=None), pass_rate=0.9, previous=0.5)["max_regression"]
    assert better.passed and "no drop" in better.message


def _paired_gate(previous: dict[str, list[float]], current: dict[str, list[float]], settings: GateSettings):
    from bat_pipeline.engine.gates import paired_against_previous

    def rate(outcomes):
        values = [x for v in outcomes.values() for x in v]
        return sum(values) / len(values)

    paired = paired_against_previous(current, previous, settings.confidence or 0.95)
    results = evaluate_gates(
        settings,
        model_key="m",
        pass_rate=rate(current),
        error_episodes=0,
        previous_pass_rate=rate(previous),
        paired=paired,
    )
    return {r.name: r for r in results}["max_regression"]


def test_max_regression_does_not_fail_on_a_drop_within_noise():
    # Six tasks, two attempts each. Previous: every attempt passed on a..d, one of two on e, f
    # (10/12). Now: a and b lose one attempt each, e gains one (8/12 vs 10/12 overall; on the
    # paired per-task means: differences −0.5, −0.5, 0, 0, +0.5, 0, mean −1/12 = −0.083). Above
    # a limit of 0.05, but sd = √((2·(−0.5+1/12)² + 3·(1/12)² + (0.5+1/12)²)/5) = 0.376386,
    # se 0.153659, t(95 %, 5) = 2.570582: the drop's interval [−0.311657, 0.478324] holds 0.
    previous = {"a": [1, 1], "b": [1, 1], "c": [1, 1], "d": [1, 1], "e": [1, 0], "f": [1, 0]}
    current = {"a": [1, 0], "b": [0, 1], "c": [1, 1], "d": [1, 1], "e": [1, 1], "f": [0, 1]}
    result = _paired_gate(previous, current, GateSettings(max_regression=0.05))
    assert result.passed, result.message
    assert "within noise" in result.message and "includes 0" in result.message
    assert result.figures["drop"] == pytest.approx(1 / 12)
    low, high = result.figures["drop_ci"]
    assert low == pytest.approx(1 / 12 - 2.570582 * 0.153659, abs=1e-4)
    assert high == pytest.approx(1 / 12 + 2.570582 * 0.153659, abs=1e-4)
    assert result.figures["confidence"] == 0.95 and result.figures["tasks_compared"] == 6
    # The same figures through the old gate fail: the drop alone is above the limit.
    old = _paired_gate(previous, current, GateSettings(max_regression=0.05, confidence=None))
    assert not old.passed


def test_max_regression_still_fails_on_a_large_drop():
    previous = {t: [1, 1] for t in "abcdefgh"}
    current = {t: [0, 0] if t in "abcdef" else [1, 0] for t in "abcdefgh"}
    result = _paired_gate(previous, current, GateSettings(max_regression=0.2))
    assert not result.passed
    assert "significant" in result.message and "excludes 0" in result.message
    assert result.figures["drop"] == pytest.approx(0.875)
    assert result.figures["drop_ci"][0] > 0.2


def test_a_significant_drop_within_the_limit_passes():
    previous = {t: [1, 1, 1, 1] for t in "abcdefghij"}
    current = {t: [1, 1, 1, 0] for t in "abcdefghij"}
    result = _paired_gate(previous, current, GateSettings(max_regression=0.3))
    assert result.passed and "<= max_regression 0.30" in result.message


def test_max_regression_with_one_common_task_compares_the_drop_alone():
    result = _paired_gate({"a": [1, 1]}, {"a": [0, 0]}, GateSettings(max_regression=0.1))
    assert not result.passed and "no interval: fewer than two tasks in common" in result.message


def test_gate_confidence_is_not_a_gate():
    from bat_pipeline.engine.gates import set_gates

    assert set_gates(GateSettings(confidence=0.9)) == {}
    assert set_gates(GateSettings(max_regression=0.1)) == {"max_regression": 0.1}


def test_max_regression_without_a_previous_run_passes_and_says_so():
    result = gates(GateSettings(max_regression=0.1), previous=None)["max_regression"]
    assert result.passed and "no previous run" in result.message


def test_all_gates_in_settings_order():
    results = evaluate_gates(
        GateSettings(min_pass_rate=0.5, max_error_episodes=0, max_regression=0.1),
        model_key="m",
        pass_rate=0.5,
        error_episodes=0,
        previous_pass_rate=0.5,
    )
    assert [r.name for r in results] == ["min_pass_rate", "max_error_episodes", "max_regression"]
    assert all(r.passed for r in results)


def _episode(task: str, *, eval_error: str | None = None, status: str = "error", output: str = ""):
    from bat_pipeline.engine.contracts import Episode

    aux = {"attempt_index": 0, **({"eval_error": eval_error} if eval_error else {})}
    return Episode(model_name="openai:m", task_id=task, final_status=status, final_output=output, aux=aux)


def test_nothing_ran_when_every_episode_errored():
    from bat_pipeline.engine.gates import nothing_ran

    episodes = [
        _episode("a", eval_error="ConnectError: connection refused"),
        _episode("b", eval_error="ConnectError: connection refused"),
        _episode("c", output="model call failed: 401 invalid api key"),
    ]
    message = nothing_ran(episodes, "openai:m")
    assert message.startswith("every episode of openai:m errored (3), so nothing was measured: ")
    assert "ConnectError: connection refused (2 of 3" in message
    only_status = nothing_ran([_episode("c", output="model call failed: 401")], "openai:m")
    assert only_status.endswith("the agent ended in status error: model call failed: 401")
    assert nothing_ran([*episodes, _episode("d", status="completed")], "openai:m") is None
    assert nothing_ran([], "openai:m") is None
