"""`sql_result_match`: a scenario's golden SQL and the agent's, run against the scenario's
`database` (DuckDB or SQLite, opened read-only) — EvalBench's result-set comparator.

The result sets compare ignoring row order, counting duplicates, NULL equal to NULL,
numbers by value (engine.sql_results.compare_results). One gating row, raw 100/0. A
generated query that fails is a failed row saying so (`details.comparison_error`); a
golden query that fails leaves the row without a value: the scenario, not the agent, is
wrong.
"""

from __future__ import annotations

from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.scorers.exact_match import sql_row
from bat_pipeline.engine.scorers.registry import ScoringInput, check
from bat_pipeline.engine.scorers.support import cut
from bat_pipeline.engine.sql_results import compare_results, run_query, sql_of

RESULTS = "sql_result_match"


def _results_apply(item: ScoringInput) -> bool:
    scenario = item.task.scenario
    return scenario is not None and scenario.selects(RESULTS) and bool(scenario.golden_sql and scenario.database)


@check(RESULTS, applies=_results_apply, order=63)
def sql_result_match(item: ScoringInput) -> list[ScoreRow]:
    scenario = item.task.scenario
    assert scenario is not None and scenario.golden_sql and scenario.database
    generated_sql = sql_of(item.episode.final_output)
    golden = run_query(scenario.database, scenario.golden_sql)
    if golden.error:
        return [
            sql_row(
                RESULTS,
                None,
                f"the golden query failed: {cut(golden.error, 300)}",
                comparison_error=golden.error,
                database=scenario.database,
            )
        ]
    if not generated_sql:
        return [sql_row(RESULTS, False, "the answer holds no SQL", comparison_error="no SQL in the answer")]
    generated = run_query(scenario.database, generated_sql)
    if generated.error:
        return [
            sql_row(
                RESULTS,
                False,
                f"the generated query failed: {cut(generated.error, 300)}",
                comparison_error=generated.error,
                generated_sql=generated_sql,
            )
        ]
    result = compare_results(golden.rows, generated.rows)
    return [sql_row(RESULTS, result.equal, result.reason, generated_sql=generated_sql, **result.details)]
