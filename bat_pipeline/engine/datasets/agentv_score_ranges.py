"""`score_ranges` rubric items of a 4.x AgentV rubric grader (issue 29 point 9), read and
scored as AgentV 4.42.4 does (loaders/grader-parser.ts, graders/llm-grader.ts).

An item `{id, outcome, weight, min_score | required_min_score | required, score_ranges}`
gives the judge bands of a 0-10 score, each with what an answer in it looks like: a list
`[{score_range: [min, max], outcome}]` or the shorthand map `{0: text, 3: text, ...}` (each
key the lower bound of a band that ends below the next key; the last ends at 10). The bands
are whole numbers from 0 to 10, do not overlap and cover 0-10; a file that breaks this is
refused, naming the item (AgentV skips the test). Once one item of a grader has bands, the
grader is an analytic rubric: the judge scores every item 0-10 (items without bands by
their outcome).

Scoring: each item the judge scored counts its score / 10 with its weight (default 1); the
grader's score is the weighted mean (0 when the judge scored none). An item below its
minimum (`min_score` 0-1, else `required_min_score` / 10, else 1.0 when `required: true`)
fails the grader whatever its score; an item passes at 7 or more and its minimum.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from bat_pipeline.engine.config.messages import kind
from bat_pipeline.engine.errors import InputError

Refuse = Callable[[str, str], InputError]
"""Makes the InputError of a refusal: (message, field)."""
KEY = "score_range_items"
"""Where a rubric grader's checked items are kept in `Assertion.options`."""

PASS_AT = 7
"""An item passes at this score or more (out of 10), as AgentV's assertions say."""


def has_score_ranges(items: Any) -> bool:
    return isinstance(items, list) and any(isinstance(i, dict) and "score_ranges" in i for i in items)


def score_range_items(items: list[Any], field: str, refuse: Refuse) -> list[dict[str, Any]]:
    """The items, checked (module docstring): `{id, outcome, weight, min_score, ranges:
    [[min, max, outcome], ...]}`. `refuse(message, field)` makes the InputError."""
    out = []
    for i, raw in enumerate(items):
        at = f"{field}[{i}]"
        if isinstance(raw, str):
            raw = {"outcome": raw}
        if not isinstance(raw, dict):
            raise refuse(f"a rubric item is a text or a mapping, got {kind(raw)}", at)
        item_id = str(raw.get("id") or f"rubric-{i + 1}")
        outcome = raw.get("outcome", raw.get("criteria"))
        weight = raw.get("weight", 1.0)
        if isinstance(weight, bool) or not isinstance(weight, (int, float)):
            weight = 1.0  # as AgentV: a weight that is not a number is 1
        out.append(
            {
                "id": item_id,
                "outcome": outcome.strip() if isinstance(outcome, str) else "",
                "weight": float(weight),
                "min_score": _minimum(raw, item_id, at, refuse),
                "ranges": _ranges(raw["score_ranges"], item_id, f"{at}.score_ranges", refuse)
                if "score_ranges" in raw
                else [],
            }
        )
    return out


def _minimum(raw: dict[str, Any], item_id: str, at: str, refuse: Refuse) -> float | None:
    given = raw.get("min_score")
    if isinstance(given, (int, float)) and not isinstance(given, bool):
        if not 0 < given <= 1:
            raise refuse(f"rubric item '{item_id}': min_score is above 0 and at most 1, got {given}", f"{at}.min_score")
        return float(given)
    legacy = raw.get("required_min_score")
    if isinstance(legacy, (int, float)) and not isinstance(legacy, bool):
        if legacy != int(legacy) or not 0 <= legacy <= 10:
            raise refuse(
                f"rubric item '{item_id}': required_min_score is a whole number from 0 to 10, got {legacy}",
                f"{at}.required_min_score",
            )
        return legacy / 10
    return 1.0 if raw.get("required") is True else None


def _ranges(raw: Any, item_id: str, at: str, refuse: Refuse) -> list[list[Any]]:
    if isinstance(raw, dict):
        raw = _shorthand(raw, item_id, at, refuse)
    if not isinstance(raw, list) or not raw:
        raise refuse(f"rubric item '{item_id}': score_ranges is a list or a map of 0-10 bands, got {kind(raw)}", at)
    ranges = []
    for j, band in enumerate(raw):
        where = f"{at}[{j}]"
        bounds = band.get("score_range") if isinstance(band, dict) else None
        if not (
            isinstance(bounds, list)
            and len(bounds) == 2
            and all(isinstance(b, int) and not isinstance(b, bool) for b in bounds)
        ):
            raise refuse(f"rubric item '{item_id}': score_range is [min, max], two whole numbers", where)
        low, high = bounds
        if not (0 <= low <= high <= 10):
            raise refuse(f"rubric item '{item_id}': score_range [{low}, {high}] is not within 0-10, min first", where)
        outcome = band.get("outcome")
        if not isinstance(outcome, str) or not outcome:
            raise refuse(f"rubric item '{item_id}': the band [{low}, {high}] has no outcome", f"{where}.outcome")
        ranges.append([low, high, outcome])
    ordered = sorted(ranges)
    for before, after in itertools.pairwise(ordered):
        if after[0] <= before[1]:
            raise refuse(f"rubric item '{item_id}': bands {before[:2]} and {after[:2]} overlap", at)
    missing = [n for n in range(11) if not any(low <= n <= high for low, high, _ in ranges)]
    if missing:
        raise refuse(
            f"rubric item '{item_id}': the bands leave out {', '.join(map(str, missing))} (they cover 0-10)", at
        )
    return ranges


def _shorthand(raw: dict[Any, Any], item_id: str, at: str, refuse: Refuse) -> list[dict[str, Any]] | dict[Any, Any]:
    bounds = {}
    for key, text in raw.items():
        number = key if isinstance(key, int) and not isinstance(key, bool) else None
        if isinstance(key, str) and key.isdigit():
            number = int(key)
        if number is None or not 0 <= number <= 10 or not isinstance(text, str) or not text:
            return raw  # not the shorthand: refused as not a list
        bounds[number] = text
    lows = sorted(bounds)
    if lows[0] != 0:
        raise refuse(f"rubric item '{item_id}': the score_ranges map starts at 0, got {lows[0]}", at)
    highs = [*(n - 1 for n in lows[1:]), 10]
    return [{"score_range": [low, high], "outcome": bounds[low]} for low, high in zip(lows, highs, strict=True)]


def grading_text(items: list[dict[str, Any]]) -> str:
    """The items as the judge reads them: id, weight, minimum, outcome and bands."""
    lines = []
    for item in items:
        head = f"- {item['id']}"
        if item["weight"] != 1:
            head += f" (weight {item['weight']:g})"
        if item["min_score"] is not None:
            head += f" [needs at least {round(item['min_score'] * 10):g} of 10]"
        lines.append(head + (f": {item['outcome']}" if item["outcome"] else ""))
        for low, high, outcome in item["ranges"]:
            lines.append(f"    {low if low == high else f'{low}-{high}'}: {outcome}")
    return "\n".join(lines)


def score_checks(items: list[dict[str, Any]], checks: list[dict[str, Any]]) -> tuple[float, bool, list[dict[str, Any]]]:
    """(score, whether an item fell below its minimum, one check per scored item) from the
    judge's `checks: [{id, score 0-10, reasoning}]` (module docstring)."""
    by_id = {item["id"]: item for item in items}
    total = weighted = 0.0
    below = False
    out = []
    for check in checks:
        item = by_id.get(str(check.get("id")))
        if item is None:
            continue
        raw = max(0.0, min(10.0, float(check["score"])))
        total += item["weight"]
        weighted += raw / 10 * item["weight"]
        short = item["min_score"] is not None and raw / 10 < item["min_score"]
        below = below or short
        band = next((text for low, high, text in item["ranges"] if low <= raw <= high), "")
        out.append(
            {
                "text": f"[{item['id']}] {item['outcome'] or item['id']} - {raw:g}/10" + (f" ({band})" if band else ""),
                "pass": not short and raw >= PASS_AT,
                "evidence": str(check.get("reasoning") or ""),
            }
        )
    score = min(1.0, max(0.0, weighted / total)) if total > 0 else 0.0
    return score, below, out
