"""`field_accuracy`: AgentV 4.x's `field-accuracy` grader (SPEC §12), as AgentV 4.42.4 scores
it: fields of the answer, read as JSON, against the same fields of the expected output.

The answer: code fences dropped, the text from its first `{` to its last `}` (else all of
it) parsed as JSON; unreadable: score 0. The expected data: the last assistant message of
`expected_output` with content (a mapping, or text holding JSON); none: score 0. Each
field `{path, match, required (true), weight (1), tolerance, relative, formats}`:
`path` is dotted with list indexes (`items[0].sku`, `items.0.sku`);
- no expected value at the path: a hit;
- missing in the answer: a miss when required, else a hit that weighs nothing;
- `exact`: equal as JSON values (`1 != true`, `1 == 1.0`, lists in order);
- `numeric_tolerance`: both numbers (text read as JavaScript's parseFloat reads it) and
  within `tolerance` (0), relative to the expected value with `relative: true`;
- `date`: the same calendar day, dates read as AgentV reads them (below).
Score: the weighted share of hits, or with `aggregation: all_or_nothing` 1 only when every
field hits. `details.checks` names each field's outcome.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime
from typing import Any

from bat_pipeline.engine.contracts.agentv import AgentvCase, Assertion
from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.scorers.assertions import assertion_row, graders, has_graders
from bat_pipeline.engine.scorers.registry import ScoringInput, check

NAME = "field_accuracy"
TYPES = ("field-accuracy",)
MISSING = object()
_MONTHS = {
    name: i + 1
    for i, names in enumerate(
        [
            "jan january",
            "feb february",
            "mar march",
            "apr april",
            "may",
            "jun june",
            "jul july",
            "aug august",
            "sep sept september",
            "oct october",
            "nov november",
            "dec december",
        ]
    )
    for name in names.split()
}
_NUMBER = re.compile(r"^\s*([+-]?(?:Infinity|\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?))")
_WORDED = ("%B %d, %Y", "%b %d, %Y", "%B %d %Y", "%b %d %Y", "%d %B %Y", "%d %b %Y", "%Y/%m/%d")
_US_FORMAT, _EU_FORMAT = ("MM/DD", "MM-DD"), ("DD/MM", "DD-MM")


@check(NAME, applies=has_graders(TYPES), order=62)
def field_accuracy(item: ScoringInput) -> list[ScoreRow]:
    case = item.task.agentv
    assert case is not None
    return [_grade(grader, case, item.episode.final_output or "") for grader in graders(item, TYPES)]


def _grade(grader: Assertion, case: AgentvCase, answer: str) -> ScoreRow:
    fields: list[dict[str, Any]] = grader.options.get("fields") or []
    try:
        candidate = _answer_json(answer)
    except ValueError:
        return _row(grader, case, 0.0, [{"text": "Failed to parse the answer as JSON", "pass": False}])
    expected = _expected_data(case)
    if expected is None:
        return _row(grader, case, 0.0, [{"text": "No expected data found in expected_output", "pass": False}])
    results = [_field(f, candidate, expected) for f in fields]
    if grader.options.get("aggregation") == "all_or_nothing":
        score = 0.0 if any(not hit for _, hit, _ in results) else 1.0
    else:
        total = sum(weight for weight, _, _ in results)
        score = sum(weight for weight, hit, _ in results if hit) / total if total else (1.0 if not results else 0.0)
    return _row(grader, case, score, [{"text": text, "pass": hit} for _, hit, text in results])


def _row(grader: Assertion, case: AgentvCase, score: float, checks: list[dict[str, Any]]) -> ScoreRow:
    hits = sum(1 for c in checks if c["pass"])
    reason = f"{hits} of {len(checks)} fields match" + "".join(f"; {c['text']}" for c in checks if not c["pass"])
    return assertion_row(NAME, grader, case, score, reason, checks=checks)


def _field(spec: dict[str, Any], candidate: Any, expected: Any) -> tuple[float, bool, str]:
    """(weight, hit, what happened) of one field."""
    path, match = str(spec["path"]), spec["match"]
    weight = float(spec.get("weight", 1))
    want, got = resolve(expected, path), resolve(candidate, path)
    if want is MISSING:
        return weight, True, f"{path}: no expected value"
    if got is MISSING:
        return (
            (weight, False, f"{path} (required, missing)")
            if spec.get("required", True)
            else (0.0, True, f"{path}: optional field missing")
        )
    if match == "exact":
        if same_json(got, want):
            return weight, True, path
        return weight, False, f"{path} ({'value' if _kind(got) == _kind(want) else 'type'} mismatch)"
    if match == "numeric_tolerance":
        a, b = to_number(got), to_number(want)
        if a is None or b is None or a in (float("inf"), float("-inf")) or b in (float("inf"), float("-inf")):
            return weight, False, f"{path} (not a number)"
        diff = abs(a - b)
        tolerance = float(spec.get("tolerance", 0))
        within = (diff if b == 0 else diff / abs(b)) <= tolerance if spec.get("relative") else diff <= tolerance
        return weight, within, f"{path} ({'within' if within else 'outside'} tolerance: diff={diff:.2f})"
    formats = spec.get("formats") or []
    day_got, day_want = parse_day(str(_js_text(got)), formats), parse_day(str(_js_text(want)), formats)
    if day_got is None or day_want is None:
        return weight, False, f"{path} (unreadable {'answer' if day_got is None else 'expected'} date)"
    if day_got == day_want:
        return weight, True, path
    return weight, False, f"{path} (date mismatch: got {day_got.isoformat()}, expected {day_want.isoformat()})"


def _answer_json(text: str) -> Any:
    cleaned = re.sub(r"```json\n?|```", "", text).strip()
    blob = re.search(r"\{[\s\S]*\}", cleaned)
    raw = blob.group(0) if blob else cleaned
    raw = re.sub(
        r'("passed"\s*:\s*)(?:"([^"]+)"|([A-Za-z_][A-Za-z0-9_-]*))',
        lambda m: m.group(1) + ("true" if (m.group(2) or m.group(3) or "").strip().lower() == "true" else "false"),
        raw,
        flags=re.IGNORECASE,
    )
    return json.loads(raw)


def _expected_data(case: AgentvCase) -> Any:
    for message in reversed(case.expected_output):
        if message.role == "assistant" and message.content:
            if isinstance(message.content, (dict, list)):
                return message.content
            if isinstance(message.content, str):
                try:
                    return _answer_json(message.content)
                except ValueError:
                    continue
    return None


def resolve(data: Any, path: str) -> Any:
    """The value at a dotted path with list indexes (null included), else MISSING."""
    if not path or (not isinstance(data, (dict, list)) and not data):
        return MISSING
    current = data
    for part in (p for p in re.split(r"[.\[\]]", path) if p):
        if current is MISSING or current is None:
            return MISSING
        if isinstance(current, list):
            current = current[int(part)] if part.isdigit() and int(part) < len(current) else MISSING
        elif isinstance(current, dict):
            current = current.get(part, MISSING)
        else:
            return MISSING
    return current


def same_json(a: Any, b: Any) -> bool:
    """Equal as JavaScript compares JSON values deeply: no bool/number mixing."""
    if _kind(a) != _kind(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    return bool(a == b)


def to_number(value: Any) -> float | None:
    """A number as is; text read as JavaScript's parseFloat reads it; else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        found = _NUMBER.match(value)
        return float(found.group(1).replace("Infinity", "inf")) if found else None
    return None


def parse_day(text: str, formats: list[str]) -> date | None:
    """The calendar day of a date as AgentV 4.42 reads it (on a machine keeping UTC): ISO
    dates and times (an offset moves the day), `15-JAN-2025`, `January 15, 2025`, `15 Jan
    2025`, `2025/01/15`, and `NN/NN/YYYY` or `NN-NN-YYYY` — month first when it can be, else
    day first (or as `formats` say, when they name only one order)."""
    text = text.strip()
    iso = re.fullmatch(r"(\d{4})-(\d{1,2})-(\d{1,2})", text)
    if iso:
        return _day(int(iso.group(1)), int(iso.group(2)), int(iso.group(3)))
    if re.match(r"\d{4}-\d{2}-\d{2}[T ]", text):
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
            return (moment.astimezone(UTC) if moment.tzinfo else moment).date()
        except ValueError:
            return None
    worded = re.fullmatch(r"(\d{1,2})-([A-Za-z]{3,9})-(\d{4})", text)
    if worded:
        month = _MONTHS.get(worded.group(2).lower())
        return _day(int(worded.group(3)), month, int(worded.group(1))) if month else None
    for pattern in _WORDED:
        try:
            return datetime.strptime(text, pattern).date()
        except ValueError:
            continue
    numeric = re.fullmatch(r"(\d{1,2})[/-](\d{1,2})[/-](\d{4})", text)
    if not numeric:
        return None
    first, second, year = (int(g) for g in numeric.groups())
    if first <= 12:  # the JavaScript date parser reads it month first
        return _day(year, first, second)
    us = any(any(f in fmt for f in _US_FORMAT) for fmt in formats)
    eu = any(any(f in fmt for f in _EU_FORMAT) for fmt in formats)
    return None if us and not eu else _day(year, second, first)


def _day(year: int, month: int | None, day: int) -> date | None:
    try:
        return date(year, month or 0, day)
    except ValueError:
        return None


def _kind(value: Any) -> str:
    """JavaScript's `typeof` of a JSON value (null apart)."""
    kinds = ((type(None), "null"), (bool, "boolean"), ((int, float), "number"), (str, "string"))
    return next((name for types, name in kinds if isinstance(value, types)), "object")


def _js_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
