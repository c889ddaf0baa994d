"""What each step reports about its partition, as plain values: the figures and preview rows
the UI shows (Dagster metadata is made of them in `assets.common`), and log lines."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bat_pipeline.engine.contracts import Episode, Task
from bat_pipeline.engine.contracts.metrics import MetricsFile, SummaryFile
from bat_pipeline.engine.metrics import is_error_episode

Columns = tuple[tuple[str, str], ...]
"""A preview table's columns: (name, type: string | int | float | bool)."""

EPISODE_COLUMNS: Columns = (
    ("task", "string"),
    ("try", "int"),
    ("status", "string"),
    ("passed", "bool"),
    ("wall_ms", "float"),
    ("output", "string"),
)
TASK_COLUMNS = ("id", "turns", "expected status")
PREVIEW_EPISODES = 20
PREVIEW_TASKS = 30
OUTPUT_PREVIEW_CHARS = 80


def episode_counts(episodes: Sequence[Episode]) -> dict[str, int | float]:
    """episodes, passed, failed (of those with a verdict), pass_rate (4 decimals, 0 without
    a verdict) and error_episodes (the attempt raised, or the agent ended in `error`)."""
    judged = [e for e in episodes if e.verdict is not None]
    passed = sum(1 for e in judged if e.verdict and e.verdict.passed)
    return {
        "episodes": len(episodes),
        "passed": passed,
        "failed": len(judged) - passed,
        "pass_rate": round(passed / len(judged), 4) if judged else 0.0,
        "error_episodes": sum(1 for e in episodes if is_error_episode(e)),
    }


def episode_preview(episodes: Sequence[Episode], limit: int = PREVIEW_EPISODES) -> list[dict[str, Any]]:
    """The first `limit` episodes as rows of EPISODE_COLUMNS (the output cut short)."""
    return [
        {
            "task": e.task_id,
            "try": e.attempt_index,
            "status": e.final_status or "",
            "passed": bool(e.verdict.passed) if e.verdict else False,
            "wall_ms": round(e.trace.wall_ms, 1),
            "output": (e.final_output or "")[:OUTPUT_PREVIEW_CHARS],
        }
        for e in episodes[:limit]
    ]


def dataset_figures(tasks: Sequence[Task]) -> dict[str, Any]:
    """tasks, turns, tasks per `meta.category` (`uncategorised` without one), and the first
    tasks as rows of TASK_COLUMNS (`preview`)."""
    categories: dict[str, int] = {}
    for task in tasks:
        category = str(task.meta.get("category", "uncategorised"))
        categories[category] = categories.get(category, 0) + 1
    return {
        "tasks": len(tasks),
        "turns": sum(len(t.turns) for t in tasks),
        "categories": categories,
        "preview": [
            dict(zip(TASK_COLUMNS, (t.id, len(t.turns), t.expected.status), strict=True)) for t in tasks[:PREVIEW_TASKS]
        ],
    }


def trajectory_figures(episodes: Sequence[Episode]) -> dict[str, int]:
    """Trajectories found and missing, and the model, tool and agent calls and failed steps
    over every episode's trajectory."""
    totals = [e.trace.trajectory.totals for e in episodes]
    found = sum(1 for e in episodes if e.trace.trajectory.found)
    return {
        "trajectories_found": found,
        "trajectories_missing": len(episodes) - found,
        "model_calls": sum(t.model_calls for t in totals),
        "tool_calls": sum(t.tool_calls for t in totals),
        "agent_calls": sum(t.agent_calls for t in totals),
        "failed_steps": sum(t.errors for t in totals),
    }


def failed_verdicts(episodes: Sequence[Episode]) -> list[str]:
    """One line per episode whose verdict failed: `<conversation id>: FAIL - <reason>`."""
    return [f"{e.conversation_id}: FAIL - {e.verdict.reason}" for e in episodes if e.verdict and not e.verdict.passed]


def metrics_figures(episodes: Sequence[Episode], metrics: MetricsFile, summary: SummaryFile) -> dict[str, Any]:
    """episode_counts, the pass rate's interval (`pass_rate_ci`, at `confidence`, rounded
    to 4 decimals; absent with fewer than two tasks), pass@k and pass^k with theirs, the
    flaky tasks (count and list), latency p50 and p95, total tokens and the judge's means
    (`judge_means`, summary.json's `qualitative_scores`)."""
    figures = metrics.summary
    intervals = {
        name: [round(low, 4), round(high, 4)]
        for name, ci in (
            ("pass_rate_ci", figures.pass_rate_ci),
            ("pass_at_k_ci", figures.pass_at_k_ci),
            ("pass_hat_k_ci", figures.pass_hat_k_ci),
        )
        if ci is not None
        for low, high in [ci]
    }
    return {
        **episode_counts(episodes),
        **intervals,
        "confidence": figures.confidence,
        "flaky_task_count": len(figures.flaky_tasks),
        "flaky_tasks": [f"{t.task_id} ({t.passed}/{t.attempts})" for t in figures.flaky_tasks],
        "pass_at_k": figures.pass_at_k,
        "pass_hat_k": figures.pass_hat_k,
        "latency_p50_ms": figures.latency_ms.p50,
        "latency_p95_ms": figures.latency_ms.p95,
        "total_tokens": figures.tokens.total_tokens_total,
        "judge_means": summary.qualitative_scores,
    }
