"""`text`: AgentV's deterministic graders over the answer text (SPEC §12): `contains`,
`contains-any`, `contains-all`, `icontains` (and `-any`/`-all`), `starts-with`,
`ends-with`, `regex`, `equals`, `is-json`, `json-subset`; each with `negate` (and the
`not-` spellings). Scores are 0 or 1, as AgentV 4.42 gives them; `starts-with`,
`ends-with` and `equals` compare trimmed text, as it does.
"""

from __future__ import annotations

import json
import re
from typing import Any

from bat_pipeline.engine.contracts.agentv import AgentvCase, Assertion
from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.datasets.agentv import TEXT_TYPES
from bat_pipeline.engine.datasets.agentv_graders import regex_flags
from bat_pipeline.engine.scorers.assertions import assertion_row, grader_error_row, graders, has_graders
from bat_pipeline.engine.scorers.registry import ScoringInput, check
from bat_pipeline.engine.scorers.support import cut, quote

NAME = "text"


@check(NAME, applies=has_graders(TEXT_TYPES), order=60)
def text(item: ScoringInput) -> list[ScoreRow]:
    answer = item.episode.final_output or ""
    rows = []
    for assertion in graders(item, TEXT_TYPES):
        try:
            held, reason = judge(assertion, answer, item.task.agentv)
        except ValueError as exc:
            rows.append(grader_error_row(NAME, assertion, str(exc)))
            continue
        rows.append(
            assertion_row(
                NAME, assertion, item.task.agentv, 1.0 if held else 0.0, reason, checks=[{"text": reason, "pass": held}]
            )
        )
    return rows


def judge(assertion: Assertion, answer: str, case: AgentvCase | None) -> tuple[bool, str]:
    """Whether the answer holds the check (before `negate`), and why in words. ValueError
    for an operand the type cannot use (a bad regex, a missing value)."""
    kind, value = assertion.type, assertion.value
    if kind == "is-json":
        try:
            json.loads(answer)
            return True, "the answer is valid JSON"
        except json.JSONDecodeError as exc:
            return False, f"the answer is not valid JSON ({exc.msg})"
    if kind == "json-subset":
        return _json_subset(value, answer, case)
    if kind in ("contains-any", "contains-all", "icontains-any", "icontains-all"):
        values = [str(v) for v in (value if isinstance(value, list) else [value])] if value is not None else []
        if not values:
            raise ValueError(f"{kind} needs a list under `value`")
        fold = kind.startswith("i")
        haystack = answer.lower() if fold else answer
        found = [v for v in values if (v.lower() if fold else v) in haystack]
        if kind.endswith("any"):
            return bool(found), (
                f"contains {quote(found[0])}" if found else f"contains none of {', '.join(map(quote, values))}"
            )
        missing = [v for v in values if v not in found]
        return not missing, ("contains all" if not missing else f"missing {', '.join(map(quote, missing))}")
    if value is None:
        raise ValueError(f"{kind} needs a `value`")
    operand = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if kind == "contains":
        held = operand in answer
        return held, f"{'contains' if held else 'does not contain'} {quote(operand)}"
    if kind == "icontains":
        held = operand.lower() in answer.lower()
        return held, f"{'contains' if held else 'does not contain'} {quote(operand)} (any case)"
    if kind == "starts-with":
        held = answer.strip().startswith(operand.strip())
        return held, f"{'starts' if held else 'does not start'} with {quote(operand)}"
    if kind == "ends-with":
        held = answer.strip().endswith(operand.strip())
        return held, f"{'ends' if held else 'does not end'} with {quote(operand)}"
    if kind == "equals":
        held = answer.strip() == operand.strip()
        return held, f"equals {quote(operand)}" if held else f"{quote(cut(answer.strip(), 80))} is not {quote(operand)}"
    if kind == "regex":
        try:
            pattern = re.compile(operand, regex_flags(assertion.options.get("flags")))
        except re.error as exc:
            raise ValueError(f"invalid regex {quote(operand)}: {exc}") from None
        held = pattern.search(answer) is not None
        return held, f"{'matches' if held else 'does not match'} /{operand}/"
    raise ValueError(f"unknown text check '{kind}'")


def _json_subset(value: Any, answer: str, case: AgentvCase | None) -> tuple[bool, str]:
    """`value` (else the structured content of the test's expected output) contained in
    the answer parsed as JSON: every key of a mapping, recursively; lists item by item."""
    expected = value
    if expected is None and case is not None:
        expected = next(
            (m.content for m in reversed(case.expected_output) if isinstance(m.content, (dict, list))), None
        )
    if expected is None:
        raise ValueError("json-subset needs a `value` or structured content in expected_output")
    try:
        actual = json.loads(answer)
    except json.JSONDecodeError as exc:
        return False, f"the answer is not JSON ({exc.msg})"
    problem = _missing(expected, actual, "$")
    return problem is None, "the expected fields are all in the answer" if problem is None else problem


def _missing(expected: Any, actual: Any, path: str) -> str | None:
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{path} is not an object"
        for key, want in expected.items():
            if key not in actual:
                return f"{path}.{key} is missing"
            problem = _missing(want, actual[key], f"{path}.{key}")
            if problem:
                return problem
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) < len(expected):
            return f"{path} is not a list of at least {len(expected)} items"
        for i, want in enumerate(expected):
            problem = _missing(want, actual[i], f"{path}[{i}]")
            if problem:
                return problem
        return None
    return None if expected == actual else f"{path} is {json.dumps(actual)}, expected {json.dumps(expected)}"
