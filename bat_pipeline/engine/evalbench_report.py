"""The CSV report of an EvalBench run (SPEC §12) as EvalBench writes it: `configs`, `evals`,
`scores` and `summary` of one job, built from the warehouse's rows (pure: rows in, rows out).

Each table has EvalBench's columns, in its order (its `config_to_df`, the agent evaluator's
eval output, `ComparisonResult.to_dict` plus the item's fields, `reporting/analyzer.py`), then
this project's own (`target`: the partition, since one run here may hold several targets that
EvalBench would run as several jobs; then what the warehouse adds). Scores are on EvalBench's
0–100 (a row's `raw` when its scale is `0..100`, a count or milliseconds, else its 0..1 value
× 100); this project's rows keep 0..1 with raw and scale. One `scores` line per episode and
comparator: the scorer's own criterion (`trajectory_matcher`, `goal_completion`, …) or its
indexed ones (`binary_rubric_scorer_0`, …), else its first row. The summary is
engine.evalbench_summary's.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from bat_pipeline.engine.contracts.episode import Episode
from bat_pipeline.engine.contracts.scenario import ConversationLog, ConversationTurn
from bat_pipeline.engine.evalbench_harness import accumulated_skills, accumulated_tools
from bat_pipeline.engine.evalbench_summary import SUMMARY_COLUMNS, summary_lines

Row = Mapping[str, Any]
Table = tuple[list[str], list[dict[str, Any]]]

CONFIG_COLUMNS = ["job_id", "run_time", "config", "value", "target"]
EVAL_COLUMNS = [
    # EvalBench's agent evaluator's eval output (evalbench/evaluator/agentevaluator.py)
    "eval_id",
    "stdout",
    "stderr",
    "returncode",
    "prompt_generator_error",
    "generated_error",
    "sql_generator_error",
    "golden_error",
    "generated_sql",
    "prompt",
    "conversation_history",
    "scenario",
    "accumulated_tools",
    "accumulated_skills",
    "job_id",
    "metadata",
    "fake_home",
    # ours
    "target",
    "attempt",
    "final_status",
    "passed",
    "eval_error",
    "final_output",
    "wall_ms",
    "tokens_in",
    "tokens_out",
    "turns",
    "generated_turns",
    "max_turns",
    "ended",
    "simulated_user_model",
    "simulated_user_tokens_in",
    "simulated_user_tokens_out",
]
SCORE_COLUMNS = [
    # EvalBench's (evalbench/scorers/score.py: to_dict() and the item's fields)
    "comparator",
    "score",
    "comparison_error",
    "comparison_logs",
    "id",
    "generated_sql",
    "generated_error",
    "dialects",
    "database",
    "job_id",
    # ours
    "target",
    "attempt",
    "criterion",
    "value",
    "raw",
    "scale",
    "passed",
    "judge",
]
NATIVE_SCALES = ("0..100", "count", "ms")
"""Scales whose raw number is written as it is (EvalBench's own: 0–100 scores, counts, ms)."""
COMPARATOR_ORDER = (
    "exact_match",
    "recall_match",
    "set_match",
    "llmrater",
    "regexp_matcher",
    "returned_sql",
    "executable_sql",
    "trajectory_matcher",
    "skills_trajectory",
    "skills_best_practices",
    "goal_completion",
    "behavioral_metrics",
    "parameter_analysis",
    "turn_count",
    "agent_steps",
    "end_to_end_latency",
    "tool_call_latency",
    "token_consumption",
    "tokens_processed",
    "effective_billed_tokens",
    "binary_rubric_scorer",
)
"""The order EvalBench's score.compare runs its comparators in; others come after."""


def csv_score(row: Row) -> float | None:
    """A score row on EvalBench's scale: raw for `0..100`, counts and ms, else value × 100."""
    if row.get("scale") in NATIVE_SCALES and row.get("raw") is not None:
        return float(row["raw"])
    return None if row.get("value") is None else round(float(row["value"]) * 100, 10)


def _details(row: Row) -> dict[str, Any]:
    details = row.get("details")
    if isinstance(details, str):
        try:
            details = json.loads(details)
        except ValueError:
            details = None
    return details if isinstance(details, dict) else {}


def _error(row: Row) -> str:
    details = _details(row)
    found = details.get("comparison_error") or details.get("error")
    if found:
        return str(found)
    return str(row.get("reason") or "") if row.get("value") is None and row.get("raw") is None else ""


def _indexed(row: Row) -> bool:
    """`binary_rubric_scorer_0`: one of a scorer's comparators EvalBench numbers."""
    suffix = str(row["criterion"])[len(str(row["scorer"])) + 1 :]
    return str(row["criterion"]).startswith(f"{row['scorer']}_") and suffix.isdigit()


def _main_rows(scores: Iterable[Row]) -> list[tuple[str, Row]]:
    """Per episode and comparator, (comparator, row): the scorer's own criterion or its
    indexed ones, else its first row."""
    chosen: dict[tuple[Any, ...], tuple[str, Row]] = {}
    for row in sorted(scores, key=lambda r: (r["model_key"], r["task_id"], r["attempt"], r["position"])):
        episode = (row["model_key"], row["task_id"], row["attempt"])
        if _indexed(row):
            chosen[(*episode, row["criterion"])] = (str(row["criterion"]), row)
            continue
        key = (*episode, row["scorer"])
        if key not in chosen or (row["criterion"] == row["scorer"] and chosen[key][1]["criterion"] != row["scorer"]):
            chosen[key] = (str(row["scorer"]), row)
    rank = {name: i for i, name in enumerate(COMPARATOR_ORDER)}

    def order(item: tuple[tuple[Any, ...], tuple[str, Row]]) -> tuple[Any, ...]:
        (model, task, attempt, _), (name, row) = item
        base = str(row["scorer"])
        return (model, task, attempt, rank.get(base, len(rank)), base, name)

    return [value for _, value in sorted(chosen.items(), key=order)]


def _log(conversation: Row) -> ConversationLog | None:
    try:
        turns = json.loads(conversation.get("transcript") or "[]")
        return ConversationLog(turns=[ConversationTurn.model_validate(t) for t in turns])
    except (ValueError, TypeError):
        return None  # a transcript cut short in the warehouse


def _history(log: ConversationLog | None) -> str:
    """EvalBench's `conversation_history`: `[{user, agent}]`, `agent` the harness's output."""
    if log is None:
        return ""
    pairs = [{"user": t.user, "agent": t.agent if t.harness_output is None else t.harness_output} for t in log.turns]
    return json.dumps(pairs, indent=2)


def _python(value: Any) -> str:
    """A list or dict cell as pandas writes one (its Python text)."""
    return str(value)


def eval_line(e: Row, c: Row, scenario: Mapping[str, Any] | None, run: Mapping[str, Any] | None) -> dict[str, Any]:
    """One episode's evals.csv line."""
    log = _log(c) if c else None
    episode = Episode(model_name="", task_id=str(e["task_id"]), aux={"conversation": log.model_dump()} if log else {})
    turns = log.turns if log else []
    last = turns[-1] if turns else None
    settings = run or {}
    return {
        "eval_id": e["task_id"],
        "stdout": (last.harness_output if last.harness_output is not None else last.agent) if last else "",
        "stderr": "",
        "returncode": (1 if last.status == "error" else 0) if last else "",
        "prompt_generator_error": None,
        "generated_error": None,
        "sql_generator_error": None,
        "golden_error": None,
        "generated_sql": "skipped",
        "prompt": turns[0].user if turns else "",
        "conversation_history": _history(log),
        "scenario": _python(dict(scenario)) if scenario is not None else "",
        "accumulated_tools": _python(accumulated_tools(episode) or []),
        "accumulated_skills": _python(accumulated_skills(episode)),
        "job_id": e["run_id"],
        "metadata": _python(
            {
                "dialects": settings.get("dialects", []),
                "database": settings.get("database", "unknown"),
                "scorers": settings.get("scorers", {}),
            }
        ),
        "fake_home": None,
        "target": e["model_key"],
        "attempt": e["attempt"],
        **{k: e.get(k) for k in EVAL_COLUMNS[19:26]},
        **{k: c.get(k) for k in ("turns", "generated_turns", "max_turns", "ended")},
        "simulated_user_model": c.get("user_model"),
        "simulated_user_tokens_in": c.get("user_tokens_in"),
        "simulated_user_tokens_out": c.get("user_tokens_out"),
    }


def flatten(config: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """(key, value) as pandas.json_normalize(sep=".") flattens a config: nested mappings
    joined with `.`, an empty mapping leaving no key, lists and scalars kept whole."""
    out: list[tuple[str, Any]] = []
    for key, value in config.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.extend(flatten(value, f"{name}."))
        else:
            out.append((name, value))
    return out


def _config_text(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return _python(value)


def config_lines(
    runs: Sequence[Row], run_time: str, run: Mapping[str, Any] | None, model: Mapping[str, Any] | None
) -> list[dict[str, Any]]:
    """configs.csv: EvalBench's `config_to_df` of {experiment_config, model_config,
    db_configs}, per target; without the run config (an export), what the warehouse keeps."""
    lines = []
    for r in runs:
        if run is not None:
            config: dict[str, Any] = {
                "experiment_config": dict(run),
                "model_config": dict(model or {}),
                "db_configs": [],
            }
        else:
            config = {
                "experiment_config": {"num_trials": r.get("k"), "run_name": r.get("run_name")},
                "model_config": {"name": r.get("model_name")},
                "db_configs": [],
            }
        for key, value in flatten(config):
            lines.append(
                {
                    "job_id": r["run_id"],
                    "run_time": run_time,
                    "config": key,
                    "value": _config_text(value),
                    "target": r["model_key"],
                }
            )
    return lines


def run_time_text(runs: Sequence[Row]) -> str:
    """EvalBench's `run_time` (`datetime.now()` as pandas writes it: `2026-01-05
    10:00:00.123456`): the run's first start, in UTC."""
    started = sorted(str(r["started_at"]) for r in runs if r.get("started_at"))
    if not started:
        return ""
    try:
        moment = datetime.fromisoformat(started[0])
    except ValueError:
        return started[0]
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return str(moment)


def csv_tables(
    runs: Sequence[Row],
    episodes: Sequence[Row],
    conversations: Sequence[Row],
    scores: Sequence[Row],
    *,
    run_time: str = "",
    run: Mapping[str, Any] | None = None,
    model: Mapping[str, Any] | None = None,
    scenarios: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Table]:
    """`configs`, `evals`, `scores`, `summary` of one run: (columns, rows) each. `run`: the
    run config as read (its scorers order the summary, as EvalBench's analyzer iterates
    them), `model` its model config, `scenarios` the evalset's scenarios by id."""
    held = {(c["model_key"], c["task_id"], c["attempt"]): c for c in conversations}
    evals = [
        eval_line(
            e, held.get((e["model_key"], e["task_id"], e["attempt"]), {}), (scenarios or {}).get(e["task_id"]), run
        )
        for e in episodes
    ]
    settings = run or {}
    lines = []
    for comparator, r in _main_rows(scores):
        error = _error(r)
        score = csv_score(r)
        lines.append(
            {
                "comparator": comparator,
                # EvalBench's ComparisonResult starts at 0: a comparator that raised scores 0.
                "score": 0.0 if score is None and error else score,
                "comparison_error": error,
                "comparison_logs": r.get("reason") or "",
                "id": r["task_id"],
                "generated_sql": "skipped",
                "generated_error": None,
                "dialects": _python(settings.get("dialects", [])),
                "database": settings.get("database", "unknown"),
                "job_id": r["run_id"],
                "target": r["model_key"],
                "attempt": r["attempt"],
                **{k: r.get(k) for k in SCORE_COLUMNS[12:]},
            }
        )
    names = list((settings.get("scorers") or {}) if isinstance(settings.get("scorers"), dict) else [])
    if run is None:
        names = list(dict.fromkeys(str(r["scorer"]) for _, r in _main_rows(scores)))
    return {
        "configs": (CONFIG_COLUMNS, config_lines(runs, run_time, run, model)),
        "evals": (EVAL_COLUMNS, evals),
        "scores": (SCORE_COLUMNS, lines),
        "summary": (
            SUMMARY_COLUMNS,
            summary_lines(
                lines,
                names,
                run_time=run_time,
                num_trials=int(settings.get("num_trials") or 1),
                targets=sorted({(str(r["run_id"]), str(r["model_key"])) for r in runs}),
            ),
        ),
    }
