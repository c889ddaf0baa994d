"""Per-partition result lines every run writes (issue 15 point 5, SPEC §13):

- `results.jsonl`: one line per episode `{test_id, target, attempt, pass, score, reason,
  error, checks: [{name, type, pass, score, reason}]}`, for any kind of run;
- `index.jsonl`: AgentV's own index shape `{test_id, target, attempt, score, scores[],
  execution_status}`, for AgentV files.

Both come from the episodes' score rows: score = the mean value of the gating rows (for
an AgentV test, its pass rule's weighted score); an error is the attempt's eval error or
a grader error.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from bat_pipeline.engine.agentv_rule import RULE
from bat_pipeline.engine.contracts.agentv import IMPLICIT_KEY
from bat_pipeline.engine.contracts.episode import Episode


def _score(episode: Episode) -> float | None:
    values = [r.value for r in episode.scores if r.gating and r.value is not None]
    return round(sum(values) / len(values), 6) if values else None


def _error(episode: Episode) -> str | None:
    if episode.eval_error:
        return episode.eval_error
    errors = [str(r.details["error"]) for r in episode.scores if r.scorer == RULE and r.details.get("error")]
    return errors[0] if errors else None


def result_line(episode: Episode) -> dict[str, Any]:
    """The `results.jsonl` line of one episode."""
    verdict = episode.verdict
    checks = [
        {
            "name": r.criterion,
            "type": str(r.details.get("assertion") or r.scorer),
            "pass": r.passed,
            "score": r.value,
            "reason": r.reason,
        }
        for r in episode.scores
        if r.scorer != RULE
    ]
    return {
        "test_id": episode.task_id,
        "target": episode.model_name,
        "attempt": episode.attempt_index,
        "pass": bool(verdict and verdict.passed),
        "score": _score(episode),
        "reason": (verdict.reason if verdict else "") or (episode.eval_error or ""),
        "error": _error(episode),
        "checks": checks,
    }


def result_lines(episodes: Iterable[Episode]) -> list[dict[str, Any]]:
    return [result_line(e) for e in episodes]


def index_lines(episodes: Iterable[Episode], suite: str) -> list[dict[str, Any]]:
    """AgentV's `index.jsonl`: per test and attempt, the score, each grader's score and
    verdict, and `execution_status` (`ok`, `quality_failure` or `execution_error`)."""
    lines = []
    for episode in episodes:
        error = _error(episode)
        passed = bool(episode.verdict and episode.verdict.passed)
        scores = [
            {
                "name": r.criterion,
                "type": str(r.details.get("assertion") or r.scorer),
                "score": r.value,
                "weight": r.details.get("weight", 1.0),
                "verdict": "error" if r.details.get("error") else ("pass" if r.passed else "fail"),
                "assertions": [
                    {"text": c.get("text", ""), "passed": bool(c.get("pass")), "evidence": c.get("reason", "")}
                    for c in r.details.get("checks") or []
                ],
            }
            for r in episode.scores
            if "assertion" in r.details and not r.details.get(IMPLICIT_KEY)  # as AgentV: a test of no grader lists none
        ]
        lines.append(
            {
                "test_id": episode.task_id,
                "suite": suite,
                "target": episode.model_name,
                "attempt": episode.attempt_index,
                "score": _score(episode) or 0.0,
                "scores": scores,
                "execution_status": "execution_error" if error else ("ok" if passed else "quality_failure"),
                **({"error": error} if error else {}),
            }
        )
    return lines
