"""The report of one run from its partitions (episodes and metrics.json), compared with
the previous run of the same agent when there is one."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bat_pipeline.engine.contracts import Episode
from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.intervals import clustered_interval, paired_difference
from bat_pipeline.engine.judge_samples import MEDIAN, PANEL, last_word
from bat_pipeline.engine.judge_view import render_episode_for_judge
from bat_pipeline.engine.reports.model import (
    EpisodeReport,
    FlakyTaskReport,
    PartitionReport,
    Regression,
    RunReport,
    ScoreSummary,
    TaskCell,
    TaskReport,
    VersusPrevious,
)

TRAJECTORY_CHARS = 12_000
SCORE_DROP = 0.1
"""A criterion's mean falling by at least this much against the previous run is a regression."""


@dataclass
class PartitionInput:
    """One partition of a run as stored: its key, model, episodes and metrics.json."""

    key: str
    model: str
    episodes: list[Episode]
    metrics: dict[str, Any] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)


def _passed(episode: Episode) -> bool:
    return bool(episode.verdict and episode.verdict.passed)


def score_summaries(episodes: Sequence[Episode], confidence: float = 0.95) -> list[ScoreSummary]:
    """Per scorer and criterion, over the rows with the last word of each episode; each
    mean with its interval, the values clustered by task."""
    groups: dict[tuple[str, str], list[ScoreRow]] = {}
    by_task: dict[tuple[str, str], dict[str, list[float]]] = {}
    spreads: dict[tuple[str, str], list[float]] = {}
    for episode in episodes:
        for row in last_word(episode.scores):
            if row.value is not None:
                by_task.setdefault((row.scorer, row.criterion), {}).setdefault(episode.task_id, []).append(row.value)
        for row in episode.scores:
            key = (row.scorer, row.criterion)
            if row.sample == MEDIAN and row.judge != PANEL and isinstance(row.details.get("spread"), (int, float)):
                spreads.setdefault(key, []).append(float(row.details["spread"]))
        for row in last_word(episode.scores):
            groups.setdefault((row.scorer, row.criterion), []).append(row)
    out = []
    for (scorer, criterion), rows in groups.items():
        values = [r.value for r in rows if r.value is not None]
        agreements = [
            float(r.details["agreement"])
            for r in rows
            if r.judge == PANEL and isinstance(r.details.get("agreement"), (int, float))
        ]
        spread = spreads.get((scorer, criterion))
        out.append(
            ScoreSummary(
                scorer=scorer,
                criterion=criterion,
                mean=statistics.fmean(values) if values else None,
                ci=clustered_interval(list(by_task.get((scorer, criterion), {}).values()), confidence),
                passed=sum(1 for r in rows if r.passed is True),
                failed=sum(1 for r in rows if r.passed is False),
                count=len(values),
                spread=statistics.fmean(spread) if spread else None,
                agreement=statistics.fmean(agreements) if agreements else None,
                judged=any(r.judge for r in rows),
                summary=any(r.details.get("summary") for r in rows),
            )
        )
    return out


def _partition(part: PartitionInput, previous: PartitionInput | None) -> PartitionReport:
    summary = part.metrics.get("summary") or {}
    latency = summary.get("latency_ms") or {}
    confidence = float(summary.get("confidence") or 0.95)
    passed = sum(1 for e in part.episodes if _passed(e))
    before = None
    versus = None
    if previous is not None and previous.episodes:
        before = sum(1 for e in previous.episodes if _passed(e)) / len(previous.episodes)
        paired = paired_difference(_outcomes(previous.episodes), _outcomes(part.episodes), confidence, bounds=(0, 1))
        if paired.difference is not None:
            versus = VersusPrevious(
                tasks=paired.tasks,
                difference=paired.difference,
                low=paired.low,
                high=paired.high,
                significant=paired.significant,
                verdict=paired.verdict,
            )
    return PartitionReport(
        key=part.key,
        model=part.model,
        episodes=len(part.episodes),
        passed=passed,
        pass_rate=passed / len(part.episodes) if part.episodes else None,
        pass_rate_ci=clustered_interval(list(_outcomes(part.episodes).values()), confidence),
        confidence=confidence,
        error_episodes=int(summary.get("error_episodes") or sum(1 for e in part.episodes if e.eval_error)),
        pass_at_k=summary.get("pass_at_k"),
        pass_at_k_ci=_pair(summary.get("pass_at_k_ci")),
        flaky_tasks=[
            FlakyTaskReport(task_id=t, attempts=len(v), passed=int(sum(v)))
            for t, v in _outcomes(part.episodes).items()
            if 0 < sum(v) < len(v)
        ],
        versus_previous=versus,
        provenance=dict(part.provenance),
        p50_ms=latency.get("p50"),
        p95_ms=latency.get("p95"),
        scores=score_summaries(part.episodes, confidence),
        classification=part.metrics.get("classification"),
        performance=part.metrics.get("performance"),
        previous_pass_rate=before,
    )


def _outcomes(episodes: Sequence[Episode]) -> dict[str, list[float]]:
    """task → 1.0 / 0.0 per attempt, in the episodes' order."""
    found: dict[str, list[float]] = {}
    for episode in episodes:
        found.setdefault(episode.task_id, []).append(1.0 if _passed(episode) else 0.0)
    return found


def _pair(value: Any) -> tuple[float, float] | None:
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(x, (int, float)) for x in value):
        return float(value[0]), float(value[1])
    return None


def _judged_mean(episode: Episode) -> float | None:
    values = [r.value for r in last_word(episode.scores) if r.judge is not None and r.value is not None]
    return statistics.fmean(values) if values else None


def _cells(episodes: Sequence[Episode]) -> dict[str, TaskCell]:
    by_task: dict[str, list[Episode]] = {}
    for episode in episodes:
        by_task.setdefault(episode.task_id, []).append(episode)
    cells = {}
    for task_id, own in by_task.items():
        means = [m for m in (_judged_mean(e) for e in own) if m is not None]
        cells[task_id] = TaskCell(
            attempts=len(own),
            passed=sum(1 for e in own if _passed(e)),
            mean_score=statistics.fmean(means) if means else None,
        )
    return cells


def _episode(key: str, episode: Episode) -> EpisodeReport:
    turns = [t.user for t in episode.trace.trajectory.turns] or [
        e.user_input for e in episode.trace.events if e.user_input
    ]
    try:
        trajectory = render_episode_for_judge(episode, max_chars=TRAJECTORY_CHARS)
    except ValueError:
        trajectory = ""
    verdict = episode.verdict
    return EpisodeReport(
        partition=key,
        task_id=episode.task_id,
        attempt=episode.attempt_index,
        conversation_id=episode.conversation_id,
        passed=verdict.passed if verdict else None,
        reason=verdict.reason if verdict else "",
        final_status=str(episode.final_status),
        wall_ms=episode.trace.wall_ms,
        turns=[t for t in turns if t],
        events=[e.model_dump(mode="json") for e in episode.trace.events],
        final_output=episode.final_output,
        trajectory=trajectory,
        error=episode.eval_error,
        rows=list(episode.scores),
    )


def _regressions(report: RunReport, previous: Sequence[PartitionInput]) -> list[Regression]:
    found: list[Regression] = []
    before = {p.key: p for p in previous}
    for part in report.partitions:
        old = before.get(part.key)
        if old is None:
            continue
        if (
            part.previous_pass_rate is not None
            and part.pass_rate is not None
            and part.pass_rate < part.previous_pass_rate
        ):
            found.append(
                Regression(partition=part.key, what="pass rate", before=part.previous_pass_rate, after=part.pass_rate)
            )
        old_scores = {(s.scorer, s.criterion): s.mean for s in score_summaries(old.episodes)}
        for score in part.scores:
            was = old_scores.get((score.scorer, score.criterion))
            if was is not None and score.mean is not None and was - score.mean >= SCORE_DROP:
                found.append(
                    Regression(
                        partition=part.key, what=f"{score.scorer}/{score.criterion}", before=was, after=score.mean
                    )
                )
    for task in report.tasks:
        for key, cell in task.cells.items():
            was_rate = task.previous_pass_rate.get(key)
            if was_rate is not None and cell.pass_rate < was_rate:
                found.append(
                    Regression(partition=key, what=f"task {task.task_id}", before=was_rate, after=cell.pass_rate)
                )
    return found


def build_report(
    run_id: str,
    agent_id: str,
    partitions: Sequence[PartitionInput],
    *,
    generated_at: str,
    previous: Sequence[PartitionInput] = (),
    previous_run_id: str | None = None,
    green: float = 0.8,
    amber: float = 0.5,
) -> RunReport:
    """The report of a run; `previous`: the partitions of the run before (regressions)."""
    before = {p.key: p for p in previous}
    report = RunReport(
        run_id=run_id,
        agent_id=agent_id,
        generated_at=generated_at,
        green=green,
        amber=amber,
        previous_run_id=previous_run_id if previous else None,
    )
    report.partitions = [_partition(p, before.get(p.key)) for p in partitions]
    tasks: dict[str, TaskReport] = {}
    for part in partitions:
        for task_id, cell in _cells(part.episodes).items():
            tasks.setdefault(task_id, TaskReport(task_id=task_id)).cells[part.key] = cell
        old = before.get(part.key)
        for task_id, cell in (_cells(old.episodes) if old else {}).items():
            if task_id in tasks:
                tasks[task_id].previous_pass_rate[part.key] = cell.pass_rate
    report.tasks = list(tasks.values())
    report.episodes = [_episode(p.key, e) for p in partitions for e in p.episodes]
    report.regressions = _regressions(report, previous)
    return report
