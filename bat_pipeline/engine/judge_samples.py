"""N runs of an LLM scorer and panels of judges (SPEC §13): each run's rows carry their
sample index, the judge's cache key includes it (engine.scorers.judging.JudgeQuestion), and
the runs of one judge are summed up in one row per criterion holding their median and
spread (`sample` = MEDIAN). A panel asks several judge models the same questions; each
model's rows are kept (its median when it ran N times) and one row per criterion with
`judge` = PANEL holds the median across the models and their agreement.

Only the last word on a criterion counts toward a verdict: the panel row, else the
median row, else the single run's row — every other row of that criterion is kept with
`gating` off."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.scorers.judging import FAILED, JudgeAnswer, JudgeQuestion

T = TypeVar("T")

MEDIAN = -1
"""`sample` of a row holding the median of N runs (and of a panel row)."""
PANEL = "panel"
"""`judge` of a row summing up a panel of judge models."""

Reduce = Callable[[list[ScoreRow]], list[ScoreRow]]
"""One judge's rows of one scorer over all its runs → the rows summing them up."""


@dataclass(frozen=True)
class SampleJudge:
    """A judge that asks every question as run `sample` of N (a distinct cache entry)."""

    judge: Any
    sample: int

    @property
    def name(self) -> str:
        name: str = self.judge.name
        return name

    async def ask(self, question: JudgeQuestion[T]) -> JudgeAnswer[T]:
        answer: JudgeAnswer[T] = await self.judge.ask(replace(question, sample=self.sample))
        return answer


def _groups(rows: Iterable[ScoreRow]) -> dict[tuple[str, str], list[ScoreRow]]:
    groups: dict[tuple[str, str], list[ScoreRow]] = {}
    for row in rows:
        groups.setdefault((row.scorer, row.criterion), []).append(row)
    return groups


def summarise(group: Sequence[ScoreRow], *, sample: int, judge: str | None, what: str) -> ScoreRow:
    """One row standing for `group` (rows of one criterion): the median of their values
    and raws, `passed` when most of them passed (null when none decides), the reason of
    the row nearest the median; details `values`, `median`, `spread` (max − min),
    `stdev`, `count` and `what` (`runs` or `judges`)."""
    first = group[0]
    values = [r.value for r in group if r.value is not None]
    raws = [r.raw for r in group if r.raw is not None]
    passes = [r.passed for r in group if r.passed is not None]
    details: dict[str, Any] = {"aggregate": what, "count": len(group), "values": values}
    if not values:  # the first one's reason, so it still reads as `judge failed: …` / `skipped: …`
        return first.model_copy(update={"sample": sample, "judge": judge, "details": {**first.details, **details}})
    median = statistics.median(values)
    spread = max(values) - min(values)
    details.update(median=median, spread=spread, stdev=statistics.pstdev(values))
    nearest = min((r for r in group if r.value is not None), key=lambda r: abs((r.value or 0) - median))
    passed = None if not passes else sum(passes) * 2 > len(passes)
    reason = f"median of {len(values)} {what}: {median:.3g} (spread {spread:.3g}); {nearest.reason}"
    return first.model_copy(
        update={
            "value": median,
            "raw": statistics.median(raws) if raws else None,
            "passed": passed,
            "sample": sample,
            "judge": judge,
            "reason": reason,
            "details": {**first.details, **details},
        }
    )


def median_rows(rows: Sequence[ScoreRow]) -> list[ScoreRow]:
    """The generic summing up of one judge's runs: per criterion with rows from more than
    one run, `summarise` over them."""
    out = []
    for group in _groups(rows).values():
        if len({r.sample for r in group}) > 1:
            out.append(summarise(group, sample=MEDIAN, judge=group[0].judge, what="runs"))
    return out


def last_word(rows: Sequence[ScoreRow]) -> list[ScoreRow]:
    """Per criterion, the row that has the last word (module docstring), in first-seen order."""
    out = []
    for group in _groups(rows).values():
        panel = [r for r in group if r.judge == PANEL]
        medians = [r for r in group if r.sample == MEDIAN]
        first_runs = [r for r in group if r.sample == 0]
        out.append((panel or medians or first_runs or group)[0])
    return out


def sampled(rows_per_run: Sequence[list[ScoreRow]], reduce: Reduce | None) -> list[ScoreRow]:
    """One judge's rows of one scorer over its runs: every run's rows (sample set, gating
    off when there are several runs), then the rows summing them up (`reduce`, else
    median_rows), which gate as the first run's rows of their criterion did. Rows without
    a value that say nothing was asked (skipped, not judged) are kept from the first run
    only."""
    if len(rows_per_run) <= 1:  # one run: the rows as the scorer wrote them (it may sample on its own)
        return list(rows_per_run[0]) if rows_per_run else []
    first = [r.model_copy(update={"sample": 0}) for r in rows_per_run[0]]
    runs = list(first)
    for sample, rows in enumerate(rows_per_run[1:], start=1):
        runs += [
            r.model_copy(update={"sample": sample}) for r in rows if r.value is not None or r.reason.startswith(FAILED)
        ]
    if all(r.sample == 0 for r in runs):
        return first
    gating = {(r.scorer, r.criterion): r.gating for r in first}
    summed = [
        r.model_copy(update={"gating": gating.get((r.scorer, r.criterion), False)})
        for r in (reduce or median_rows)(runs)
    ]
    return [r.model_copy(update={"gating": False}) for r in runs] + summed


def panel_rows(per_judge: Sequence[list[ScoreRow]]) -> list[ScoreRow]:
    """Every judge's rows (gating off), then per criterion one PANEL row: the median of the
    judges' last words, with `judges` (model → value) and `agreement` (1 − the spread of
    their values; 1 when they all agree) in its details."""
    kept = [r.model_copy(update={"gating": False}) for rows in per_judge for r in rows]
    words = [r for rows in per_judge for r in last_word(rows)]
    out = []
    for group in _groups(words).values():
        row = summarise(group, sample=MEDIAN, judge=PANEL, what="judges")
        judges = {r.judge or "?": r.value for r in group}
        spread = row.details.get("spread")
        row.details = {**row.details, "judges": judges, "agreement": None if spread is None else round(1 - spread, 6)}
        row.gating = any(
            r.gating for rows in per_judge for r in rows if (r.scorer, r.criterion) == (row.scorer, row.criterion)
        )
        out.append(row)
    return kept + out
