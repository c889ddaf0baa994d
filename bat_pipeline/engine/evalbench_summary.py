"""summary.csv as EvalBench's analyzer computes it (evalbench/reporting/analyzer.py:
`analyze_result` and `analyze_one_metric`), per target (one EvalBench job each):

- one line per scorer the run config names, in its order, but `behavioral_metrics` and
  `parameter_analysis` (LLM metrics it only logs);
- a count or time metric (`turn_count`, `agent_steps`, the latencies, the token metrics,
  `skills_best_practices`): `metric_score` the mean score, `correct_results_count` the sum,
  `total_results_count` the lines;
- any other: `metric_score` 100, `correct_results_count` the lines scoring exactly 100,
  `total_results_count` the lines (none: the number of scenarios);
- last the `executable` line: `metric_score` 1, the scenarios whose generation raised no
  error (every agent scenario: EvalBench's `generated_sql` is "skipped"), out of scenarios ×
  `num_trials`.

A column holding any fraction is written with every number as a float, as pandas writes a
float column (`100.0`, `2.0`); `run_time` is the run's start, `job_id` the run id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

SUMMARY_COLUMNS = [
    "metric_name",
    "metric_score",
    "correct_results_count",
    "total_results_count",
    "job_id",
    "run_time",
    "target",
]
NON_BINARY = (
    "turn_count",
    "agent_steps",
    "end_to_end_latency",
    "tool_call_latency",
    "token_consumption",
    "tokens_processed",
    "effective_billed_tokens",
    "skills_best_practices",
    "dataset_quality",
    "tool_activation_faithfulness",
    "discoverability_coverage",
    "error_recovery_coverage",
    "composition_coverage",
    "cuj_diversity",
)
LOGGED_ONLY = ("behavioral_metrics", "parameter_analysis")


def _metric(lines: Sequence[Mapping[str, Any]], name: str, prompts: int) -> dict[str, Any]:
    mine = [line for line in lines if line["comparator"] == name]
    scores = [float(line["score"]) for line in mine if line["score"] is not None]
    if name in NON_BINARY:
        return {
            "metric_name": name,
            "metric_score": sum(scores) / len(scores) if scores else 0.0,
            "correct_results_count": float(sum(scores)),
            "total_results_count": len(mine) or prompts,
        }
    return {
        "metric_name": name,
        "metric_score": 100,
        "correct_results_count": sum(score == 100 for score in scores),
        "total_results_count": len(mine) or prompts,
    }


def _as_pandas_writes(lines: list[dict[str, Any]]) -> None:
    for column in ("metric_score", "correct_results_count", "total_results_count"):
        if any(isinstance(line[column], float) for line in lines):
            for line in lines:
                line[column] = float(line[column])


def summary_lines(
    lines: Sequence[Mapping[str, Any]],
    scorers: Sequence[str],
    *,
    run_time: str,
    num_trials: int,
    targets: Sequence[tuple[str, str]],
) -> list[dict[str, Any]]:
    """Every target's summary lines (module docstring)."""
    out: list[dict[str, Any]] = []
    for job, target in targets:
        mine = [line for line in lines if line["target"] == target and line["job_id"] == job]
        prompts = len({line["id"] for line in mine})
        table = [_metric(mine, name.strip(), prompts) for name in scorers if name.strip() not in LOGGED_ONLY]
        table.append(
            {
                "metric_name": "executable",
                "metric_score": 1,
                "correct_results_count": prompts,
                "total_results_count": prompts * num_trials,
            }
        )
        _as_pandas_writes(table)
        out.extend({**line, "job_id": job, "run_time": run_time, "target": target} for line in table)
    return out
