"""Gate results: only the gates that are set, with the model and the figures."""

from __future__ import annotations

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


def test_max_regression_against_the_previous_run():
    failed = gates(GateSettings(max_regression=0.1), pass_rate=0.6, previous=0.9)["max_regression"]
    assert not failed.passed
    assert failed.message == ("openai-sloppy: pass rate 0.60 vs previous 0.90, a drop of 0.30 > max_regression 0.10")
    within = gates(GateSettings(max_regression=0.2), pass_rate=0.1, previous=0.3)["max_regression"]
    assert within.passed and "a drop of 0.20 <= max_regression 0.20" in within.message
    better = gates(GateSettings(max_regression=0.0), pass_rate=0.9, previous=0.5)["max_regression"]
    assert better.passed and "no drop" in better.message


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
