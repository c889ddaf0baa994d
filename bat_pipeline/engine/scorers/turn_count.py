"""`turn_count`: how many agent calls a scenario's conversation used, against its
`max_turns` (EvalBench's raw number of turns; SPEC §12).

One row, not gating: raw = the turns held (scale `count`), value null (a count, not a
quality), reason with the limit and why the conversation ended; details the generated
turns and the simulated user's calls.
"""

from __future__ import annotations

from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.scorers.registry import ScoringInput, check

NAME = "turn_count"


def _applies(item: ScoringInput) -> bool:
    return item.task.scenario is not None and item.task.scenario.selects(NAME)


@check(NAME, applies=_applies, order=65)
def turn_count(item: ScoringInput) -> list[ScoreRow]:
    log = item.episode.conversation
    if log is None:
        return [
            ScoreRow(scorer=NAME, criterion=NAME, scale="count", reason="no conversation recorded for this episode")
        ]
    turns = len(log.turns)
    user = log.simulated_user
    return [
        ScoreRow(
            scorer=NAME,
            criterion=NAME,
            raw=float(turns),
            scale="count",
            reason=f"{turns} turn{'s' if turns != 1 else ''} of at most {log.max_turns}; ended: {log.ended}",
            details={
                "turns": turns,
                "max_turns": log.max_turns,
                "ended": log.ended,
                "generated": sum(t.generated for t in log.turns),
                "simulated_user_calls": user.calls if user else 0,
            },
        )
    ]
