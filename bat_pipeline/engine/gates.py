"""Quality gates of one model's run: the figures a blocking asset check compares
against `GateSettings`. Pure; a gate that is not set produces no result."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from bat_pipeline.engine.contracts.config import GateSettings
from bat_pipeline.engine.contracts.episode import Episode
from bat_pipeline.engine.intervals import PAIRED_METHOD, PairedDifference, paired_difference
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
    figures: dict[str, Any] = Field(default_factory=dict)
    """What the check compared, for the check's metadata (max_regression: the drop, its
    interval, the confidence, the tasks compared)."""


@dataclass(frozen=True)
class GateFigures:
    """What the gates of one model's run compare."""

    model_key: str
    pass_rate: float | None
    """None: the run has no episodes."""
    error_episodes: int
    previous_pass_rate: float | None
    """The model's pass rate in its previous run; None without one."""
    paired: PairedDifference | None = None
    """This run against the previous one on the tasks both ran (None: not known)."""
    confidence: float | None = None
    """gate.confidence: None compares the drop alone."""


GATES = ("min_pass_rate", "max_error_episodes", "max_regression")
"""The GateSettings fields that are gates (the others tune them)."""


def set_gates(gate: GateSettings) -> dict[str, float]:
    """The gates that are set, name (GateSettings field) → limit, in GateSettings order."""
    return {name: limit for name in GATES if (limit := getattr(gate, name)) is not None}


def paired_against_previous(
    current: Mapping[str, Sequence[float]], previous: Mapping[str, Sequence[float]], confidence: float
) -> PairedDifference:
    """This run (candidate) against the previous one (base), task → 1/0 per attempt."""
    return paired_difference(previous, current, confidence, bounds=(0.0, 1.0))


def evaluate_gates(
    gate: GateSettings,
    *,
    model_key: str,
    pass_rate: float | None,
    error_episodes: int,
    previous_pass_rate: float | None,
    paired: PairedDifference | None = None,
) -> list[GateResult]:
    """Check every gate that is set, in GateSettings order.

    A pass rate of None (no episodes) fails min_pass_rate and is not compared for
    regression; max_regression with no previous run passes and says so. With
    `gate.confidence` set, max_regression reads `paired` (this run against the previous
    one on their common tasks): it fails only on a drop both above the limit and
    significant; without a paired interval (fewer than two tasks in common) it compares
    the drop alone and says so.
    """
    figures = GateFigures(model_key, pass_rate, error_episodes, previous_pass_rate, paired, gate.confidence)
    return [GateResult(name=name, **_CHECKS[name](figures, limit)) for name, limit in set_gates(gate).items()]


Outcome = dict[str, Any]
"""`passed`, `message` and `figures` of a GateResult."""


def _outcome(passed: bool, message: str, **figures: Any) -> Outcome:
    return {"passed": passed, "message": message, "figures": figures}


def _min_pass_rate(run: GateFigures, limit: float) -> Outcome:
    if run.pass_rate is None:
        return _outcome(False, f"{run.model_key}: no episodes, so no pass rate to hold to min_pass_rate {limit:.2f}")
    ok = run.pass_rate >= limit - _EPSILON
    shown, bound = _figures(run.pass_rate, limit)
    return _outcome(ok, f"{run.model_key}: pass rate {shown} {'>=' if ok else '<'} min_pass_rate {bound}")


def _max_error_episodes(run: GateFigures, limit: float) -> Outcome:
    count = run.error_episodes
    ok = count <= limit
    return _outcome(
        ok,
        f"{run.model_key}: {count} error episode{'s' * (count != 1)} {'<=' if ok else '>'} max_error_episodes {limit}",
    )


def _max_regression(run: GateFigures, limit: float) -> Outcome:
    previous, pass_rate = run.previous_pass_rate, run.pass_rate
    if previous is None:
        return _outcome(
            True, f"{run.model_key}: no previous run to compare with; max_regression {limit:.2f} not applied"
        )
    if pass_rate is None:
        return _outcome(
            True,
            f"{run.model_key}: no pass rate in this run (previous {previous:.2f}); "
            f"max_regression {limit:.2f} not applied",
        )
    paired = run.paired
    if run.confidence is not None and paired is not None and paired.difference is not None:
        return _paired_regression(run.model_key, paired, limit, run.confidence)
    drop = previous - pass_rate
    figures = f"pass rate {pass_rate:.2f} vs previous {previous:.2f}"
    if drop <= 0:
        return _outcome(True, f"{run.model_key}: {figures}, no drop (max_regression {limit:.2f})", drop=drop)
    ok = drop <= limit + _EPSILON
    shown, bound = _figures(drop, limit)
    why = "" if run.confidence is None else " (no interval: fewer than two tasks in common with the previous run)"
    return _outcome(
        ok,
        f"{run.model_key}: {figures}, a drop of {shown} {'<=' if ok else '>'} max_regression {bound}{why}",
        drop=drop,
        max_regression=limit,
    )


def _paired_regression(model_key: str, paired: PairedDifference, limit: float, confidence: float) -> Outcome:
    """The drop on the common tasks, and whether its interval says it is real."""
    assert paired.difference is not None and paired.base is not None and paired.candidate is not None
    drop = -paired.difference
    figures: dict[str, Any] = {
        "drop": drop,
        "max_regression": limit,
        "confidence": confidence,
        "drop_ci": None if paired.low is None or paired.high is None else [-paired.high, -paired.low],
        "tasks_compared": paired.tasks,
        "method": PAIRED_METHOD,
    }
    seen = f"pass rate {paired.candidate:.2f} vs previous {paired.base:.2f} on {paired.tasks} common tasks"
    if paired.low is None or paired.high is None:
        ok = drop <= limit + _EPSILON
        shown, bound = _figures(max(drop, 0.0), limit)
        return _outcome(
            ok,
            f"{model_key}: {seen}, a drop of {shown} {'<=' if ok else '>'} max_regression {bound} "
            "(no interval: fewer than two tasks in common)",
            **figures,
        )
    interval = f"{confidence:.0%} interval of the drop [{-paired.high:.2f}, {-paired.low:.2f}]"
    if drop <= 0:
        return _outcome(True, f"{model_key}: {seen}, no drop; {interval} (max_regression {limit:.2f})", **figures)
    above = drop > limit + _EPSILON
    significant = paired.high < 0
    shown, bound = _figures(drop, limit)
    if above and significant:
        verdict = f"a drop of {shown} > max_regression {bound}, significant: {interval} excludes 0"
    elif above:
        verdict = f"a drop of {shown} > max_regression {bound}, but within noise: {interval} includes 0"
    else:
        verdict = f"a drop of {shown} <= max_regression {bound}; {interval}"
    return _outcome(not (above and significant), f"{model_key}: {seen}, {verdict}", **figures)


_CHECKS: dict[str, Callable[[GateFigures, float], Outcome]] = {
    "min_pass_rate": _min_pass_rate,
    "max_error_episodes": _max_error_episodes,
    "max_regression": _max_regression,
}
"""One check per GateSettings field."""
assert tuple(_CHECKS) == GATES, "a gate without its check, or a check without its gate"
assert set(GATES) <= set(GateSettings.model_fields), "a check without its setting"


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
        e.eval_error or f"the agent ended in status error: {(e.final_output or '(no output)')[:300]}" for e in episodes
    )
    reason, count = reasons.most_common(1)[0]
    more = f" ({count} of {len(episodes)}; other reasons in the episode files)" if len(reasons) > 1 else ""
    return f"every episode of {model_name} errored ({len(episodes)}), so nothing was measured: {reason}{more}"
