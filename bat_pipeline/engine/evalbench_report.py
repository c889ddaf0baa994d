"""The CSV report EvalBench users expect (SPEC §12): `configs`, `evals`, `scores` and
`summary` tables of one run, built from the warehouse's rows (pure: rows in, rows out).

Scores are on EvalBench's 0–100 there (a row's `raw` when its scale is `0..100` or a
count, else its 0..1 value × 100); this project's own rows keep 0..1 with raw and scale.
One `scores` line per episode and scorer: the scorer's own criterion (`trajectory_matcher`,
`goal_completion`, …), else its first row; its other criteria are in the warehouse.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

Row = Mapping[str, Any]
Table = tuple[list[str], list[dict[str, Any]]]

CONFIG_COLUMNS = ["job_id", "target", "model_name", "agent_id", "run_name", "k", "started_at", "finished_at"]
_EPISODE_FIELDS = ("final_status", "passed", "eval_error", "final_output", "wall_ms", "tokens_in", "tokens_out")
"""Columns of evals.csv taken as they are from the warehouse's episodes."""
EVAL_COLUMNS = [
    "id",
    "job_id",
    "target",
    "attempt",
    *_EPISODE_FIELDS,
    "turns",
    "generated_turns",
    "max_turns",
    "ended",
    "simulated_user_model",
    "simulated_user_tokens_in",
    "simulated_user_tokens_out",
    "conversation",
]
SCORE_COLUMNS = [
    "id",
    "job_id",
    "target",
    "attempt",
    "comparator",
    "score",
    "comparison_error",
    "comparison_logs",
    "criterion",
    "value",
    "raw",
    "scale",
    "passed",
    "judge",
]
SUMMARY_COLUMNS = ["job_id", "target", "metric_name", "metric_score", "correct_results_count", "total_results_count"]
HUNDRED_SCALES = ("0..100", "count")
"""Scales whose raw number is written as it is (EvalBench's own: 0–100 scores, counts)."""


def csv_score(row: Row) -> float | None:
    """A score row on EvalBench's scale: raw for `0..100` and counts, else value × 100."""
    if row.get("scale") in HUNDRED_SCALES and row.get("raw") is not None:
        return round(float(row["raw"]), 2)
    return None if row.get("value") is None else round(float(row["value"]) * 100, 2)


def _error(row: Row) -> str:
    details = row.get("details")
    if isinstance(details, str):
        try:
            details = json.loads(details)
        except ValueError:
            details = None
    found = (
        (details or {}).get("comparison_error") or (details or {}).get("error") if isinstance(details, dict) else None
    )
    if found:
        return str(found)
    return str(row.get("reason") or "") if row.get("value") is None and row.get("raw") is None else ""


def _main_rows(scores: Iterable[Row]) -> list[Row]:
    """Per episode and scorer, the row of the scorer's own criterion, else its first."""
    chosen: dict[tuple[Any, ...], Row] = {}
    for row in sorted(scores, key=lambda r: (r["model_key"], r["task_id"], r["attempt"], r["position"])):
        key = (row["model_key"], row["task_id"], row["attempt"], row["scorer"])
        if key not in chosen or (row["criterion"] == row["scorer"] and chosen[key]["criterion"] != row["scorer"]):
            chosen[key] = row
    return list(chosen.values())


def csv_tables(
    runs: Sequence[Row], episodes: Sequence[Row], conversations: Sequence[Row], scores: Sequence[Row]
) -> dict[str, Table]:
    """`configs`, `evals`, `scores`, `summary` of one run: (columns, rows) each."""
    configs = [
        {"job_id": r["run_id"], "target": r["model_key"], **{c: r.get(c) for c in CONFIG_COLUMNS[2:]}} for r in runs
    ]
    held = {(c["model_key"], c["task_id"], c["attempt"]): c for c in conversations}
    evals = []
    for e in episodes:
        c = held.get((e["model_key"], e["task_id"], e["attempt"]), {})
        evals.append(
            {
                "id": e["task_id"],
                "job_id": e["run_id"],
                "target": e["model_key"],
                "attempt": e["attempt"],
                **{k: e.get(k) for k in _EPISODE_FIELDS},
                **{k: c.get(k) for k in ("turns", "generated_turns", "max_turns", "ended")},
                "simulated_user_model": c.get("user_model"),
                "simulated_user_tokens_in": c.get("user_tokens_in"),
                "simulated_user_tokens_out": c.get("user_tokens_out"),
                "conversation": c.get("transcript"),
            }
        )
    lines = [
        {
            "id": r["task_id"],
            "job_id": r["run_id"],
            "target": r["model_key"],
            "attempt": r["attempt"],
            "comparator": r["scorer"],
            "score": csv_score(r),
            "comparison_error": _error(r),
            "comparison_logs": r.get("reason") or "",
            **{k: r.get(k) for k in SCORE_COLUMNS[8:]},
        }
        for r in _main_rows(scores)
    ]
    return {
        "configs": (CONFIG_COLUMNS, configs),
        "evals": (EVAL_COLUMNS, evals),
        "scores": (SCORE_COLUMNS, lines),
        "summary": (SUMMARY_COLUMNS, _summary(lines)),
    }


def _summary(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per target and comparator: the mean score, and how many lines passed (a line
    without a verdict counts when it scored 100 on a 0–100 scale)."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for line in lines:
        groups.setdefault((line["job_id"], line["target"], line["comparator"]), []).append(line)
    summary = []
    for (job, target, name), group in sorted(groups.items()):
        scored = [g["score"] for g in group if g["score"] is not None]
        correct = sum(
            1
            for g in group
            if g["passed"] is True or (g["passed"] is None and g["scale"] != "count" and g["score"] == 100)
        )
        summary.append(
            {
                "job_id": job,
                "target": target,
                "metric_name": name,
                "metric_score": round(sum(scored) / len(scored), 2) if scored else None,
                "correct_results_count": correct,
                "total_results_count": len(group),
            }
        )
    return summary
