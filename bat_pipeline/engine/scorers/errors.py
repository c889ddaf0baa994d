"""`errors`: with `expected.no_errors`, no step of the trajectory failed (model, tool and
agent calls, other spans, nested ones included); criterion `no_errors`."""

from __future__ import annotations

from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.contracts.trajectory import AgentStep, Step, ToolStep
from bat_pipeline.engine.scorers.registry import ScoringInput, check
from bat_pipeline.engine.scorers.support import all_steps, cut, pass_fail

MAX_NAMED_FAILURES = 3
"""Failed steps named in the reason; the rest are counted."""
MAX_ERROR_CHARS = 300
"""A failed step's error is cut to this length in the reason."""


@check(
    "errors",
    applies=lambda item: item.task.expected.no_errors,
    order=60,
    needs_trajectory=True,
    criteria=("no_errors",),
)
def errors(item: ScoringInput) -> list[ScoreRow]:
    failed = [s for s in all_steps(item.trajectory) if s.error]
    return [pass_fail("errors", "no_errors", not failed, _failures(failed), failed_steps=len(failed))]


def _failures(failed: list[Step]) -> str:
    if not failed:
        return "no failed step"
    named = [f"{_label(s)} failed with {cut(s.error or '', MAX_ERROR_CHARS)}" for s in failed[:MAX_NAMED_FAILURES]]
    more = len(failed) - len(named)
    text = f"{len(failed)} failed step{'s' if len(failed) != 1 else ''}: " + " | ".join(named)
    return text + (f" | and {more} more" if more else "")


def _label(step: Step) -> str:
    if isinstance(step, ToolStep):
        return f"tool {step.name}"
    if isinstance(step, AgentStep):
        return f"agent {step.agent or '?'}"
    if step.kind == "model":
        return f"model {step.model or '?'}"
    return f"span {step.span}"
