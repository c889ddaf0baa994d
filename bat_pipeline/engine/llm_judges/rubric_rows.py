"""Score rows of a rubric-shaped judgement: one row per criterion (the judge's value on the
criterion's own scale as `raw`, normalised as `value`), then one summary row (the weighted
score, `passed` by the rubric's gates and pass threshold). Every judge kind here is such a
judgement: a YAML rubric or the quality dimensions asked one choice question per criterion,
the standard and pattern kinds one JSON question for all. Summing up N runs recomputes the
summary from the criteria's medians, so hard gates apply to medians (SPEC §11)."""

from __future__ import annotations

import asyncio
import statistics
from collections.abc import Callable, Sequence
from typing import Any

from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.judge_samples import MEDIAN, median_rows
from bat_pipeline.engine.llm_judges.choice import (
    SCALE as CHOICE_SCALE,
    anchors_for_levels,
    choice_messages,
    parse_choice,
)
from bat_pipeline.engine.scorers.judging import FAILED, Judge, JudgeQuestion, null_row
from bat_pipeline.engine.yaml_rubrics import Criterion, Rubric, ScoringResult, score

SUMMARY = "summary"
"""`details` key marking a rubric's summary row."""


def scale_of(criterion: Criterion) -> str:
    return f"{criterion.low:g}..{criterion.high:g}"


def criterion_row(
    scorer: str,
    rubric: Rubric,
    criterion: Criterion,
    raw: float,
    *,
    prefix: str,
    judge: str,
    reason: str,
    passed: bool | None = None,
    details: dict[str, Any] | None = None,
) -> ScoreRow:
    """A criterion's row: `raw` on its own scale, clamped and normalised into `value`."""
    return ScoreRow(
        scorer=scorer,
        criterion=prefix + criterion.name,
        value=criterion.normalise(raw),
        raw=raw,
        scale=scale_of(criterion),
        passed=passed,
        judge=judge,
        reason=reason,
        details={"rubric": rubric.name, "source": rubric.source, **(details or {})},
    )


def summary_row(
    scorer: str,
    rubric: Rubric,
    result: ScoringResult,
    *,
    prefix: str,
    name: str,
    judge: str | None,
    raw_max: float = 1.0,
    extra: dict[str, Any] | None = None,
) -> ScoreRow:
    """The rubric's summary row: the weighted score as `value` (and as `raw`, times
    `raw_max`), `passed` from gates and the pass threshold, the rest in details."""
    gates = [
        f"{g.criterion} {'none' if g.value is None else f'{g.value:g}'} < {g.minimum:g}" for g in result.failed_gates
    ]
    words = f"weighted {result.weighted_score:.3f}, unweighted {result.total_score:.3f}"
    if result.band:
        words += f", {result.band}"
    if gates:
        words += "; hard gates failed: " + ", ".join(gates)
    if result.missing_criteria:
        words += "; not scored: " + ", ".join(result.missing_criteria)
    extra = dict(extra or {})
    if rubric.metadata.get("letter_grades"):
        extra["grade"] = letter_grade(result.weighted_score)
        words += f", grade {extra['grade']}"
    return ScoreRow(
        scorer=scorer,
        criterion=prefix + name,
        value=result.weighted_score,
        raw=round(result.weighted_score * raw_max, 6),
        scale=f"0..{raw_max:g}",
        passed=result.passed,
        judge=judge,
        reason=words,
        details={
            SUMMARY: True,
            "rubric": rubric.name,
            "source": rubric.source,
            **result.model_dump(mode="json", exclude={"rubric"}),
            **extra,
        },
    )


def graded_rows(
    scorer: str,
    rubric: Rubric,
    scores: dict[str, float],
    *,
    summary: str,
    raw_max: float,
    judge: str,
    details: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
) -> list[ScoreRow]:
    """The rows of one JSON answer grading every criterion on 0..`raw_max` (the standard
    and pattern kinds): a row per criterion scored (`details` added to each), then the
    summary row named `summary` (`extra` added to its details)."""
    rows = [
        criterion_row(
            scorer,
            rubric,
            rubric.criterion(name),
            raw,
            prefix="",
            judge=judge,
            reason=f"{raw:g} of {raw_max:g}",
            details=details,
        )
        for name, raw in scores.items()
    ]
    result = score(rubric, scores)
    rows.append(summary_row(scorer, rubric, result, prefix="", name=summary, judge=judge, raw_max=raw_max, extra=extra))
    return rows


def letter_grade(unit: float) -> str:
    """A (≥ 90 %), B (≥ 80 %), C (≥ 70 %), D (≥ 60 %), else F."""
    for grade, floor in (("A", 0.9), ("B", 0.8), ("C", 0.7), ("D", 0.6)):
        if unit >= floor - 1e-9:
            return grade
    return "F"


def raw_values(rows: Sequence[ScoreRow], rubric: Rubric, prefix: str) -> dict[str, float]:
    """Criterion name → raw value, from a rubric's criterion rows (those with a value)."""
    names = {prefix + c.name: c.name for c in rubric.criteria}
    return {
        names[r.criterion]: r.raw for r in rows if r.criterion in names and r.raw is not None and r.value is not None
    }


async def ask_by_choice(
    scorer: str, rubric: Rubric, view: str, judge: Judge, *, prefix: str, summary: str | None = "weighted_score"
) -> list[ScoreRow]:
    """One choice question per criterion (1–5 mapped onto the criterion's range), then the
    summary row (none when `summary` is None). An answer without a choice scores 0 and
    does not pass, its text kept; a failed question leaves the criterion without a value
    (it is listed as missing in the summary and left out of its division, whoever's the
    rubric: a judge error is not a zero)."""

    async def one(criterion: Criterion) -> ScoreRow:
        question = criterion.description or criterion.name
        messages = choice_messages(
            f"{criterion.name} ({rubric.name} rubric)",
            question,
            anchors_for_levels(criterion.levels, *criterion.level_span),
            view,
        )
        answer = await judge.ask(JudgeQuestion(purpose="choice", messages=messages, parse=parse_choice))
        if answer.value is None:
            return null_row(
                scorer,
                prefix + criterion.name,
                judge.name,
                FAILED + (answer.error or "no answer"),
                scale=scale_of(criterion),
                details={"rubric": rubric.name},
            )
        choice = answer.value
        text = (answer.text or "").strip()
        said = "\n".join(text.splitlines()[:-1]).strip() if choice.how == "last line" else text
        reason = (f"choice {choice.label} of 1–5: " if choice.label else "no choice found in the answer: ") + said[:600]
        return criterion_row(
            scorer,
            rubric,
            criterion,
            criterion.from_unit(choice.score),
            prefix=prefix,
            judge=judge.name,
            reason=reason,
            passed=choice.passed,
            details={"choice": choice.label, "choice_scale": CHOICE_SCALE, "read_from": choice.how, "raw_answer": text},
        )

    rows = list(await asyncio.gather(*(one(c) for c in rubric.criteria)))
    if summary is not None:
        rows.append(
            summary_row(
                scorer,
                rubric,
                score(rubric, raw_values(rows, rubric, prefix), missing_as_zero=False),
                prefix=prefix,
                name=summary,
                judge=judge.name,
            )
        )
    return rows


def rubric_reduce(
    lookup: Callable[[ScoreRow], tuple[Rubric, str, str, float] | None],
) -> Callable[[list[ScoreRow]], list[ScoreRow]]:
    """The summing up of N runs for rubric-shaped rows: medians per criterion
    (judge_samples.median_rows), and each summary recomputed from those medians.
    `lookup(summary row)` gives (rubric, prefix, summary name, raw_max)."""

    def reduce(rows: list[ScoreRow]) -> list[ScoreRow]:
        summaries = [r for r in rows if r.details.get(SUMMARY)]
        medians = median_rows([r for r in rows if not r.details.get(SUMMARY)])
        out = list(medians)
        for first in [r for r in summaries if r.sample == 0] or summaries[:1]:
            found = lookup(first)
            if found is None:
                continue
            rubric, prefix, name, raw_max = found
            singles = [r for r in rows if r.sample == 0 and not r.details.get(SUMMARY)]
            values = {**raw_values(singles, rubric, prefix), **raw_values(medians, rubric, prefix)}
            per_run = [r.value for r in summaries if r.details.get("rubric") == rubric.name and r.value is not None]
            extra = {
                "aggregate": "runs",
                "values": per_run,
                "count": len(per_run),
                "spread": max(per_run) - min(per_run) if per_run else None,
                "stdev": statistics.pstdev(per_run) if per_run else None,
            }
            row = summary_row(
                first.scorer,
                rubric,
                score(rubric, values, missing_as_zero=False),
                prefix=prefix,
                name=name,
                judge=first.judge,
                raw_max=raw_max,
                extra={**_extra_of(first), **extra},
            )
            out.append(row.model_copy(update={"sample": MEDIAN}))
        return out

    return reduce


def _extra_of(row: ScoreRow) -> dict[str, Any]:
    """What a kind put in its summary's details besides the scoring (grade, improvements)."""
    keep = ("pattern", "improvements", "confidence")
    return {k: v for k, v in row.details.items() if k in keep}
