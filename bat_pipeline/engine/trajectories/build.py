"""A conversation's trajectory from the span index, and the tool calls it made."""

from __future__ import annotations

from bat_pipeline.engine.contracts.episode import RecordedToolCall
from bat_pipeline.engine.contracts.trajectory import Step, Trajectory, Turn
from bat_pipeline.engine.spans import SpanIndex
from bat_pipeline.engine.trajectories.plan import planned_steps
from bat_pipeline.engine.trajectories.steps import Cutter, build_steps, totals


def build_trajectory(
    index: SpanIndex, conversation_id: str, turns: list[str], *, max_field_chars: int = 4000
) -> Trajectory:
    """The trajectory of `conversation_id`: its roots in start order matched to `turns`.

    A turn without a root has no steps; roots beyond the turns are ignored; `found` is
    False when the conversation has no root at all. Text fields longer than
    `max_field_chars` are cut and the trajectory marked truncated.
    """
    cut = Cutter(max_field_chars)
    roots = [r for r in index.conversation_roots(conversation_id) if r.span_id in planned_steps(index, r.trace_id)]
    out_turns = []
    for i, user in enumerate(turns):
        steps = []
        if i < len(roots):
            root = roots[i]
            steps = build_steps(planned_steps(index, root.trace_id)[root.span_id], cut)
        out_turns.append(Turn(user=user, steps=steps))
    return Trajectory(found=bool(roots), turns=out_turns, totals=totals(out_turns), truncated=cut.cut)


def recorded_tool_calls(trajectory: Trajectory) -> list[RecordedToolCall]:
    """Every tool step, nested ones included, in step order (a tool before its inner steps)."""
    calls: list[RecordedToolCall] = []

    def walk(steps: list[Step]) -> None:
        for step in steps:
            if step.kind == "tool":
                calls.append(RecordedToolCall(name=step.name, args=step.args, error=step.error))
            if step.kind in ("tool", "agent"):
                walk(step.steps)

    for turn in trajectory.turns:
        walk(turn.steps)
    return calls
