"""`tool_calls`: each expected tool was called at least `times` times with arguments
containing `args_subset`, nested calls (inside tools and other agents) included; one row
per expectation, `tool_call:<name>`."""

from __future__ import annotations

from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.contracts.trajectory import ToolStep
from bat_pipeline.engine.scorers.arguments import args_contain
from bat_pipeline.engine.scorers.registry import ScoringInput
from bat_pipeline.engine.scorers.support import all_steps, as_json, expected_calls_check, pass_fail, times

CRITERION = "tool_call:"
"""Then the tool's name."""


@expected_calls_check("tool_calls", criterion=CRITERION, order=30)
def tool_calls(item: ScoringInput) -> list[ScoreRow]:
    """No `args_subset` (or an empty one) matches any arguments; `times: 0` always holds.
    A failing row counts the calls of that tool whose arguments did not match."""
    tools = [s for s in all_steps(item.trajectory) if isinstance(s, ToolStep)]
    rows = []
    for want in item.task.expected.tool_calls:
        named = [t for t in tools if t.name == want.name]
        matching = [t for t in named if not want.args_subset or args_contain(t.args, want.args_subset)]
        passed = len(matching) >= want.times
        reason = times(len(matching))
        if want.args_subset:
            reason += f" with arguments containing {as_json(want.args_subset)}"
        reason += f", at least {want.times} expected"
        if not passed and len(named) > len(matching):
            reason += f" ({len(named) - len(matching)} more with other arguments)"
        rows.append(
            pass_fail(
                "tool_calls",
                f"{CRITERION}{want.name}",
                passed,
                reason,
                calls=len(matching),
                other_arguments=len(named) - len(matching),
                times=want.times,
            )
        )
    return rows
