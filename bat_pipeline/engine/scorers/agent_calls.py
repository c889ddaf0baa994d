"""`agent_calls`: each expected agent was called at least `times` times (its CLIENT spans'
`gen_ai.agent.name`), nested calls included; one row per expectation, `agent_call:<agent>`."""

from __future__ import annotations

from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.contracts.trajectory import AgentStep
from bat_pipeline.engine.scorers.registry import ScoringInput
from bat_pipeline.engine.scorers.support import all_steps, expected_calls_check, pass_fail, times

CRITERION = "agent_call:"
"""Then the agent's name."""


@expected_calls_check("agent_calls", criterion=CRITERION, order=40)
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
