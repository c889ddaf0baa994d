"""Scorers: one module per judgement on an episode, registered by name.

    from bat_pipeline.engine.scorers import ScoreRow, ScoringInput, check

    @check("short_answer", applies=lambda item: item.task.meta.get("short"))
    def short_answer(item: ScoringInput) -> list[ScoreRow]:
        ok = len(item.episode.final_output) <= 200
        return [ScoreRow(scorer="short_answer", criterion="length", value=float(ok), passed=ok,
                         gating=True, reason=f"{len(item.episode.final_output)} characters")]

See registry.py for the contract and docs/architecture.md for how rows flow on.
"""

from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.scorers.registry import (
    Scorer,
    ScoringInput,
    check,
    llm,
    load_builtin,
    load_modules,
    registered,
    scorers_for,
)

__all__ = [
    "ScoreRow",
    "Scorer",
    "ScoringInput",
    "check",
    "llm",
    "load_builtin",
    "load_modules",
    "registered",
    "scorers_for",
]
