"""`exact_match`: a scenario's answer against its `golden_sql` (or `expected_answer`) —
EvalBench's exact comparator. The generated SQL is the final answer's last ```sql block,
else the whole answer (engine.sql_results.sql_of); it matches when it equals the golden
SQL with whitespace collapsed and trailing semicolons dropped (an `expected_answer`: the
trimmed answer equals it). One gating row; EvalBench's 0–100 is its raw value.
"""

from __future__ import annotations

from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.scorers.registry import ScoringInput, check
from bat_pipeline.engine.scorers.support import cut
from bat_pipeline.engine.sql_results import normalise_sql, sql_of

EXACT = "exact_match"
SCALE = "0..100"


def sql_row(scorer: str, passed: bool | None, reason: str, **details: object) -> ScoreRow:
    """A gating row of an SQL comparator: 1/0 (raw 100/0 on EvalBench's scale), or no
    value when it could not compare."""
    value = None if passed is None else float(passed)
    return ScoreRow(
        scorer=scorer,
        criterion=scorer,
        value=value,
        raw=None if value is None else value * 100,
        scale=SCALE,
        passed=passed,
        gating=True,
        reason=reason,
        details=dict(details),
    )


def _exact_applies(item: ScoringInput) -> bool:
    scenario = item.task.scenario
    return (
        scenario is not None
        and scenario.selects(EXACT)
        and (scenario.golden_sql is not None or scenario.expected_answer is not None)
    )


@check(EXACT, applies=_exact_applies, order=62)
def exact_match(item: ScoringInput) -> list[ScoreRow]:
    scenario = item.task.scenario
    assert scenario is not None
    answer = item.episode.final_output
    if scenario.golden_sql is not None:
        golden, generated = normalise_sql(scenario.golden_sql), normalise_sql(sql_of(answer))
    else:
        golden, generated = (scenario.expected_answer or "").strip(), answer.strip()
    same = golden == generated
    reason = "the answer is the golden one" if same else f"expected {cut(golden, 200)!r}, got {cut(generated, 200)!r}"
    return [sql_row(EXACT, same, reason, golden=golden, generated=generated)]
