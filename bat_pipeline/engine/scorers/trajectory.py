"""`trajectory`: the tool calls of the episode against a trajectory assertion
(`expected.trajectory` of a bat-cli task; AgentV's `tool-trajectory` graders use
`trajectory_rows` too).

The calls are the trajectory's tool steps, nested ones included, in step order (the
episode's `trace.tool_calls`). Rows, criteria starting with `trajectory`:

- `trajectory` — the summary, gating: value = hits over aspects of every check (for
  AgentV 4.x's own modes, the score AgentV 4.42.4 gives), passed when every check holds,
  reason = the checks that failed (all of them when none did);
- one row per check, not gating, explaining it: `trajectory:<mode>`,
  `trajectory:durations`, `trajectory:minimum:<tool>`, `trajectory:count:<tool>`,
  `trajectory:forbidden:<tool>`, `trajectory:max_steps`; value = its hits over its
  aspects, details = its misses and the matched (expected, call) pairs.

What each mode counts is in engine.scorers.trajectory_modes.evaluate.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from bat_pipeline.engine.config.messages import dotted, drop_unknown_keys, validated
from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.contracts.trajectory import ToolStep, Trajectory
from bat_pipeline.engine.contracts.trajectory_assertion import ObservedCall, TrajectoryAssertion
from bat_pipeline.engine.scorers.registry import ScoringInput, check
from bat_pipeline.engine.scorers.support import all_steps
from bat_pipeline.engine.scorers.trajectory_modes import Check, evaluate, score

NAME = "trajectory"


def calls_of(trajectory: Trajectory) -> list[ObservedCall]:
    """The tool steps of a trajectory as calls, nested ones included, in step order.
    Tool steps carry no duration, so `max_duration_ms` is not checked on them."""
    return [ObservedCall(name=s.name, args=s.args) for s in all_steps(trajectory) if isinstance(s, ToolStep)]


def trajectory_rows(
    assertion: TrajectoryAssertion,
    calls: Sequence[ObservedCall],
    *,
    agentv4: bool = False,
    scorer: str = NAME,
    criterion: str = NAME,
    gating: bool = True,
) -> list[ScoreRow]:
    """The summary row (`criterion`, `gating`), then one non-gating row per check
    (`<criterion>:<check>`). `agentv4`: the assertion comes from an AgentV 4.x file and
    its modes mean what AgentV 4.42.4 makes of them."""
    checks = evaluate(assertion, calls, agentv4=agentv4)
    value = score(checks)
    passed = all(c.passed is not False for c in checks)
    failed = [c.reason for c in checks if c.passed is False]
    reason = "; ".join(failed or [c.reason for c in checks])
    summary = ScoreRow.unit(
        scorer,
        criterion,
        value,
        passed=passed,
        gating=gating,
        reason=(reason if passed else f"{value:.2f} of 1: {reason}"),
        details={
            "mode": assertion.mode,
            "hits": sum(c.hits for c in checks),
            "aspects": sum(c.aspects for c in checks),
            "calls": [c.name for c in calls],
            "agentv4": agentv4,
        },
    )
    return [summary, *(_row(scorer, criterion, c) for c in checks)]


def _row(scorer: str, criterion: str, c: Check) -> ScoreRow:
    if c.aspects:
        value: float | None = c.hits / c.aspects
    else:
        value = None if c.passed is None else float(c.passed)
    return ScoreRow(
        scorer=scorer,
        criterion=f"{criterion}:{c.criterion}",
        value=value,
        raw=float(c.hits),
        scale="count",
        passed=c.passed,
        gating=False,
        reason=c.reason,
        details={"hits": c.hits, "aspects": c.aspects, **c.details},
    )


@check(
    NAME,
    applies=lambda item: item.task.expected.trajectory is not None,
    order=70,
    needs_trajectory=True,
    criteria=(NAME,),
)
def trajectory(item: ScoringInput) -> list[ScoreRow]:
    assertion = item.task.expected.trajectory
    if assertion is None:
        return []
    return trajectory_rows(assertion, calls_of(item.trajectory))


def parse_assertion(
    data: Mapping[str, Any],
    file: str,
    *,
    entry: str | None = None,
    field: str | None = None,
    ignore: Collection[str] = (),
) -> tuple[TrajectoryAssertion, list[str]]:
    """A trajectory assertion read from a user's file, and its warnings: keys it does not
    know are dropped with a warning (one edit away from a known key: refused as a typo),
    keys in `ignore` (the caller's own: `name`, `weight`, ...) skipped silently. Refuses
    (InputError naming `file`, `entry` and the field below `field`) what does not
    validate."""
    raw = {key: value for key, value in data.items() if key not in ignore}
    prefix = (field,) if field else ()

    def locate(loc: tuple[str | int, ...]) -> tuple[str | None, str]:
        return entry, dotted((*prefix, *loc))

    warnings = drop_unknown_keys(raw, TrajectoryAssertion, file, locate)
    assertion = validated(TrajectoryAssertion, raw, file, json_words=False, strict=False, entry=entry, prefix=prefix)
    return assertion, warnings
