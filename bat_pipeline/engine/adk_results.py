"""Google ADK's result files for the ADK eval cases of one run and model: one
`<app>_<eval set id>_<timestamp>.evalset_result.json` per eval set, in ADK's `EvalSetResult`
shape (google/adk-python src/google/adk/evaluation/eval_result.py, eval_metrics.py,
_eval_set_results_manager_utils.py), so scripts that read ADK's eval history read these.

What differs from ADK's own (docs/formats.md, Google ADK): each attempt (k) is one
`EvalCaseResult`, as ADK's `num_runs` gives; a metric that could not be computed is
FAILED (2), never NOT_EVALUATED (3), and a case whose attempt failed is FAILED with no
metric results; `session_details` is null (an A2A agent's session is not visible) and
`session_id` is the A2A context id; the invocations carry text, tool calls and nothing
else (no tool responses, no usage metadata).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from bat_pipeline.engine.contracts.adk import (
    EFFICIENCY,
    JUDGED,
    MATCH_TYPES,
    RESPONSE_MATCH,
    TRAJECTORY,
    AdkCase,
    AdkCriterion,
    AdkInvocation,
)
from bat_pipeline.engine.contracts.episode import Episode
from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.contracts.tasks import Task
from bat_pipeline.engine.scorers.adk_support import Actual, actual_invocations
from bat_pipeline.engine.scorers.registry import ScoringInput

SUFFIX = ".evalset_result.json"
PASSED, FAILED, INFORMATIONAL = 1, 2, 4
"""ADK's EvalStatus values (NOT_EVALUATED, 3, is never written: see the module's text)."""


def _content(text: str | None, role: str) -> dict[str, Any] | None:
    return None if text is None else {"parts": [{"text": text}], "role": role}


def _invocation(
    invocation_id: str, user: str, text: str | None, calls: list[tuple[str, Any]], created: float
) -> dict[str, Any]:
    return {
        "invocation_id": invocation_id,
        "user_content": _content(user, "user"),
        "final_response": _content(text, "model"),
        "intermediate_data": {
            "tool_uses": [{"id": None, "args": args, "name": name} for name, args in calls],
            "tool_responses": [],
            "intermediate_responses": [],
        },
        "creation_timestamp": created,
    }


def _expected(invocation: AdkInvocation, created: float) -> dict[str, Any]:
    calls = [(c.name, c.args) for c in invocation.tool_uses]
    return _invocation(invocation.invocation_id, invocation.user, invocation.final_response, calls, created)


def _actual(index: int, user: str, actual: Actual, episode: Episode, created: float) -> dict[str, Any]:
    calls = [(c.name, c.args) for c in actual.calls or []]
    return _invocation(f"{episode.conversation_id}-{index}", user, actual.text, calls, created)


def _criterion(criterion: AdkCriterion | None) -> dict[str, Any] | None:
    if criterion is None or criterion.threshold is None:
        return None
    found: dict[str, Any] = {"threshold": criterion.threshold, "include_intermediate_responses_in_final": False}
    if criterion.metric == TRAJECTORY:
        found["match_type"] = {v: k for k, v in MATCH_TYPES.items()}[criterion.match_type]
        found["ignore_args"] = criterion.ignore_args
    if criterion.metric in JUDGED:
        found["judge_model_options"] = {"judge_model": criterion.judge_model, "num_samples": criterion.num_samples}
    return found


def _metric(
    name: str, score: float | None, status: int, criterion: AdkCriterion | None, rubrics: Any = None
) -> dict[str, Any]:
    details: dict[str, Any] = {"rubric_scores": rubrics, "token_usage_details": None, "duration_details": None}
    if name == "token_usage_v1" and score is not None:
        details["token_usage_details"] = {"total_tokens": score}
    return {
        "metric_name": name,
        "threshold": criterion.threshold if criterion is not None else None,
        "criterion": _criterion(criterion),
        "custom_function_path": None,
        "score": score,
        "eval_status": status,
        "details": details,
    }


def _rubric_means(row: ScoreRow) -> list[dict[str, Any]] | None:
    """A rubric metric's score per rubric over the invocations (ADK's overall rubric scores)."""
    turns = row.details.get("rubric_scores")
    if not isinstance(turns, list):
        return None
    by_id: dict[str, list[float]] = {}
    for turn in turns:
        for rubric_id, score in (turn or {}).items():
            by_id.setdefault(rubric_id, [])
            if score is not None:
                by_id[rubric_id].append(score)
    return [{"rubric_id": k, "rationale": None, "score": sum(v) / len(v) if v else None} for k, v in by_id.items()]


def _status(row: ScoreRow) -> int:
    if row.criterion in EFFICIENCY:
        return INFORMATIONAL
    return PASSED if row.passed else FAILED


def _metric_rows(rows: list[ScoreRow]) -> list[ScoreRow]:
    """The rows that are ADK metrics: the configured ones' and the efficiency metrics'."""
    return [r for r in rows if r.criterion in (TRAJECTORY, RESPONSE_MATCH, *JUDGED, *EFFICIENCY)]


def case_result(task: Task, episode: Episode, created: float) -> dict[str, Any]:
    """One attempt of one ADK case as ADK's `EvalCaseResult`."""
    case = task.adk
    assert case is not None
    rows = [] if episode.eval_error else _metric_rows(episode.scores)
    overall = [_metric(r.criterion, r.value, _status(r), case.criterion(r.criterion), _rubric_means(r)) for r in rows]
    passed = episode.verdict is not None and episode.verdict.passed and not episode.eval_error
    per_invocation: list[dict[str, Any]] = []
    if not episode.eval_error:
        actual = actual_invocations(ScoringInput(task=task, episode=episode))
        log = episode.conversation
        users = [t.user for t in log.turns] if log is not None and log.turns else task.turns
        expected = case.conversation or []
        for index, (user, found) in enumerate(zip(users, actual, strict=False)):
            results = []
            for row in rows:
                values = row.details.get("per_invocation")
                value = values[index] if isinstance(values, list) and index < len(values) else None
                status = _status(row)
                if status != INFORMATIONAL and value is not None:
                    criterion = case.criterion(row.criterion)
                    threshold = criterion.threshold if criterion is not None else None
                    status = PASSED if threshold is not None and value >= threshold else FAILED
                turns = row.details.get("rubric_scores")
                turn = turns[index] if isinstance(turns, list) and index < len(turns) else None
                rubrics = [{"rubric_id": k, "rationale": None, "score": v} for k, v in turn.items()] if turn else None
                results.append(_metric(row.criterion, value, status, case.criterion(row.criterion), rubrics))
            per_invocation.append(
                {
                    "actual_invocation": _actual(index, user, found, episode, created),
                    "expected_invocation": _expected(expected[index], created) if index < len(expected) else None,
                    "eval_metric_results": results,
                }
            )
    return {
        "eval_set_file": None,
        "eval_set_id": case.eval_set_id,
        "eval_id": case.eval_id,
        "final_eval_status": PASSED if passed else FAILED,
        "eval_metric_results": None,
        "overall_eval_metric_results": overall,
        "eval_metric_result_per_invocation": per_invocation,
        "session_id": episode.conversation_id,
        "session_details": None,
        "user_id": None,
    }


def result_files(episodes: Iterable[Episode], tasks: list[Task], app_name: str, created: float) -> dict[str, Any]:
    """File name → ADK `EvalSetResult` for each eval set of the ADK tasks with episodes
    (dataset order, then attempt order); {} when the run has no ADK case."""
    by_id = {t.id: t for t in tasks if t.adk is not None}
    sets: dict[str, list[dict[str, Any]]] = {}
    apps: dict[str, str] = {}
    order = {t.id: i for i, t in enumerate(tasks)}
    for episode in sorted(episodes, key=lambda e: (order.get(e.task_id, len(order)), e.attempt_index)):
        task = by_id.get(episode.task_id)
        if task is None or task.adk is None:
            continue
        case: AdkCase = task.adk
        sets.setdefault(case.eval_set_id, []).append(case_result(task, episode, created))
        apps.setdefault(case.eval_set_id, case.app_name or app_name)
    files = {}
    for set_id, results in sets.items():
        result_id = f"{apps[set_id]}_{set_id}_{created}"
        name = result_id.replace("/", "_")
        files[name + SUFFIX] = {
            "eval_set_result_id": result_id,
            "eval_set_result_name": name,
            "eval_set_id": set_id,
            "eval_case_results": results,
            "creation_timestamp": created,
        }
    return files
