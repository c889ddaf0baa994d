"""Quality gates of one model's run: the figures a blocking asset check compares
against `GateSettings`. Pure; a gate that is not set produces no result."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel

from bat_pipeline.engine.contracts.config import GateSettings
from bat_pipeline.engine.contracts.episode import Episode
from bat_pipeline.engine.metrics import is_error_episode

_EPSILON = 1e-9
"""Pass rates are ratios of small integers: compare with a tolerance so that
0.3 − 0.1 is not taken as above 0.2."""


class GateResult(BaseModel):
    name: str
    """The GateSettings field checked: min_pass_rate, max_error_episodes, max_regression."""
    passed: bool
    message: str
    """The model, the figures and the limit, e.g. `m: pass rate 0.40 < min_pass_rate 0.80`."""


def evaluate_gates(gate: GateSettings, *, model_key: str, pass_rate: float | None,
                   error_episodes: int, previous_pass_rate: float | None) -> list[GateResult]:
    """Check every gate that is set, in GateSettings order.

    A pass rate of None (no episodes) fails min_pass_rate and is not compared for
    regression; max_regression with no previous run passes and says so.
    """
    results = []
    if gate.min_pass_rate is not None:
        results.append(_min_pass_rate(model_key, pass_rate, gate.min_pass_rate))
    if gate.max_error_episodes is not None:
        limit = gate.max_error_episodes
        ok = error_episodes <= limit
        results.append(GateResult(
            name="max_error_episodes", passed=ok,
            message=f"{model_key}: {error_episodes} error episode{'s' * (error_episodes != 1)} "
                    f"{'<=' if ok else '>'} max_error_episodes {limit}"))
    if gate.max_regression is not None:
        results.append(_max_regression(model_key, pass_rate, previous_pass_rate, gate.max_regression))
    return results


def _min_pass_rate(model_key: str, pass_rate: float | None, limit: float) -> GateResult:
    if pass_rate is None:
        return GateResult(name="min_pass_rate", passed=False,
                          message=f"{model_key}: no episodes, so no pass rate to hold to "
                                  f"min_pass_rate {limit:.2f}")
    ok = pass_rate >= limit - _EPSILON
    shown, bound = _figures(pass_rate, limit)
    return GateResult(name="min_pass_rate", passed=ok,
                      message=f"{model_key}: pass rate {shown} {'>=' if ok else '<'} min_pass_rate {bound}")


def _max_regression(model_key: str, pass_rate: float | None, previous: float | None,
                    limit: float) -> GateResult:
    if previous is None:
        return GateResult(name="max_regression", passed=True,
                          message=f"{model_key}: no previous run to compare with; "
                                  f"max_regression {limit:.2f} not applied")
    if pass_rate is None:
        return GateResult(name="max_regression", passed=True,
                          message=f"{model_key}: no pass rate in this run (previous {previous:.2f}); "
                                  f"max_regression {limit:.2f} not applied")
    drop = previous - pass_rate
    ok = drop <= limit + _EPSILON
    figures = f"pass rate {pass_rate:.2f} vs previous {previous:.2f}"
    if drop <= 0:
        return GateResult(name="max_regression", passed=True,
                          message=f"{model_key}: {figures}, no drop (max_regression {limit:.2f})")
    shown, bound = _figures(drop, limit)
    return GateResult(name="max_regression", passed=ok,
                      message=f"{model_key}: {figures}, a drop of {shown} "
                              f"{'<=' if ok else '>'} max_regression {bound}")


def _figures(value: float, limit: float) -> tuple[str, str]:
    """Both with 2 decimals, or more when 2 would print a failing value equal to its limit."""
    for digits in (2, 4, 6):
        shown, bound = f"{value:.{digits}f}", f"{limit:.{digits}f}"
        if shown != bound or abs(value - limit) <= _EPSILON:
            break
    return shown, bound


def nothing_ran(episodes: Sequence[Episode], model_name: str) -> str | None:
    """Why a model's run measured nothing, when every one of its episodes errored (the
    attempt raised, or the agent ended in status error: no key, no network, the agent
    crashed); None when at least one episode ran. The most frequent reason is quoted."""
    if not episodes or not all(is_error_episode(e) for e in episodes):
        return None
    reasons = Counter(
        e.eval_error or f"the agent ended in status error: {(e.final_output or '(no output)')[:300]}"
        for e in episodes)
    reason, count = reasons.most_common(1)[0]
    more = f" ({count} of {len(episodes)}; other reasons in the episode files)" if len(reasons) > 1 else ""
    return f"every episode of {model_name} errored ({len(episodes)}), so nothing was measured: {reason}{more}"
