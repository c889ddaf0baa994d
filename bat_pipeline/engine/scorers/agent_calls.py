"""`agent_calls`: each expected agent was called at least `times` times (its CLIENT spans'
`gen_ai.agent.name`), nested calls included; one row per expectation, `agent_call:<agent>`."""

from __future__ import annotations

from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.contracts.trajectory import AgentStep
from bat_pipeline.engine.scorers.registry import ScoringInput, check
from bat_pipeline.engine.scorers.support import all_steps, pass_fail, times

CRITERION = "agent_call:"
"""Then the agent's name."""


@check(
    "agent_calls",
    applies=lambda item: bool(item.task.expected.agent_calls),
    order=40,
    needs_trajectory=True,
    criteria=(CRITERION,),
)
def agent_calls(item: ScoringInput) -> list[ScoreRow]:
    """`times: 0` always holds."""
    agents = [s.agent for s in all_steps(item.trajectory) if isinstance(s, AgentStep)]
    rows = []
    for want in item.task.expected.agent_calls:
        count = agents.count(want.agent)
        reason = f"{times(count)}, at least {want.times} expected"
        rows.append(
            pass_fail(
                "agent_calls", f"{CRITERION}{want.agent}", count >= want.times, reason, calls=count, times=want.times
            )
        )
    return rows
