"""The fields of AgentV graders that are more than an operand (SPEC §12), checked when the
file is read so that a bad one is refused before anything runs.

LLM graders (`llm-rubric`, 4.x `llm-grader`, `rubric`, `rubrics`, plain strings) keep the
text the judge grades against under `options["grading"]`: the rubric text (`value`), the
4.x `prompt` (`file://` paths read, relative to the eval file), or the rubric items'
outcomes (`rubrics:`, and `criteria:` of 4.x `rubrics`), one per line; none of these:
the test's `criteria` (a test without them is refused).

`field-accuracy` graders keep their valid `fields` (`{path, match: exact |
numeric_tolerance | date, required, weight, tolerance, relative, formats}`) and
`aggregation` (`weighted_average` | `all_or_nothing`; another is ignored). In 4.x files a
bad field is left out, and a grader with no good field too, each with a warning, as
AgentV 4.42 does; in the seed's format they are refused.

Trajectory graders (`tool-trajectory`, `trajectory`, the newer `trajectory:<kind>`)
become the trajectory assertion the trajectory scorer checks, kept under
`options["trajectory"]`. In 4.x files AgentV 4.42.4's leniencies hold: an `any_order`
grader without `minimums` is left out, and an `args_match` it does not know is dropped
(the default applies), each with a warning, where our own files are refused.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bat_pipeline.engine.config.files import read_text
from bat_pipeline.engine.config.messages import kind
from bat_pipeline.engine.contracts.agentv import AgentvFormat
from bat_pipeline.engine.datasets import agentv_score_ranges as score_ranges
from bat_pipeline.engine.errors import InputError
from bat_pipeline.engine.scorers.trajectory import parse_assertion

GRADING_KEY = "grading"
"""Where an LLM grader's text is kept in `Assertion.options` ("" : the test's criteria)."""
TRAJECTORY_KEY = "trajectory"
"""Where a trajectory grader's assertion is kept in `Assertion.options` (as JSON data)."""
_OURS = ("written_type", "required_given")
_ARGS_KEYWORDS = ("exact", "ignore", "subset", "superset")


class GraderContext:
    """Where a grader is written (for messages) and what reading it found."""

    def __init__(self, file: str, entry: str, field: str, fmt: AgentvFormat, warnings: list[str]):
        self.file, self.entry, self.field, self.fmt, self.warnings = file, entry, field, fmt, warnings
        self.name: str | None = None
        """The grader's `name` as written (the newer trajectory kinds name the tool there)."""
        self.value: Any = None
        """The grader's `value` (an LLM rubric's text)."""

    def refuse(self, message: str, field: str | None = None) -> InputError:
        return InputError(self.file, message, entry=self.entry, field=f"{self.field}.{field}" if field else self.field)

    def warn(self, message: str) -> None:
        self.warnings.append(f"{self.file}: {self.entry}, {self.field}: {message}")


def checked_options(normal: str, options: dict[str, Any], at: GraderContext) -> dict[str, Any] | None:
    """The grader's options, checked and completed for its (normalised) type; None: the
    grader is left out (a 4.x leniency, warned about)."""
    check = _CHECKS.get(normal)
    return check(options, at) if check is not None else options


def fold_rubric_strings(items: list[Any]) -> list[tuple[int, Any]]:
    """4.x, as AgentV 4.42.4: the plain strings of one grader list become one `rubrics`
    grader (one judge call) at the first string's place, its items in order, weighing as
    many as there are strings; an empty string is left out. Each grader with the index it
    is written at (the folded one: the first string's)."""
    strings = [i for i, item in enumerate(items) if isinstance(item, str)]
    placed = [(i, item) for i, item in enumerate(items) if i not in strings]
    criteria = [items[i].strip() for i in strings if items[i].strip()]
    if criteria:
        placed.insert(strings[0], (strings[0], {"type": "rubrics", "criteria": criteria, "weight": len(criteria)}))
    return placed


def _trajectory(options: dict[str, Any], at: GraderContext) -> dict[str, Any] | None:
    raw = {k: v for k, v in options.items() if k not in _OURS}
    written = str(options.get("written_type", ""))
    if ":" in written:
        raw = _newer_kind(written.split(":", 1)[1].strip().lower().replace("_", "-"), raw, at)
    elif at.fmt == "v4":
        if raw.get("mode") == "any_order" and "minimums" not in raw:
            at.warn("left out: any_order needs `minimums` (as AgentV 4.42 does)")
            return None
        raw = _lenient_args_match(raw, at)
    assertion, warnings = parse_assertion(raw, at.file, entry=at.entry, field=at.field)
    at.warnings.extend(warnings)
    return {**options, TRAJECTORY_KEY: assertion.model_dump(mode="json", exclude_none=True)}


def _lenient_args_match(raw: dict[str, Any], at: GraderContext) -> dict[str, Any]:
    """4.x: an `args_match` that is neither a keyword nor field paths is dropped with a
    warning; a list keeps its non-empty strings (none: dropped), as AgentV 4.42 reads them."""

    def fix(holder: dict[str, Any], where: str) -> dict[str, Any]:
        holder = dict(holder)
        for key in ("args_match", "argsMatch"):
            if key not in holder:
                continue
            value = holder[key]
            if isinstance(value, list):
                paths = [p for p in value if isinstance(p, str) and p]
                if paths:
                    holder[key] = paths
                else:
                    del holder[key]
            elif value not in _ARGS_KEYWORDS:
                at.warn(
                    f"{where}{key} {value!r} is not exact, superset, subset, ignore or a list of fields: "
                    "ignored (as AgentV 4.42 does)"
                )
                del holder[key]
        return holder

    out = fix(raw, "")
    if isinstance(out.get("expected"), list):
        out["expected"] = [
            fix(item, f"expected[{i}].") if isinstance(item, dict) else item for i, item in enumerate(out["expected"])
        ]
    return out


def _newer_kind(sub: str, raw: dict[str, Any], at: GraderContext) -> dict[str, Any]:
    """The newer `trajectory:<kind>` graders as one trajectory assertion: `tool-used
    {name, min, max}` → `counts`, `tool-sequence {mode, steps}` → `expected`,
    `tool-args-match {name, args, mode: partial|exact}` → `superset` with the arguments,
    `step-count {max}` → `max_steps`."""

    def name() -> str:
        value = raw.get("tool", at.name)
        if "pattern" in raw and value is None:
            raise at.refuse("a tool pattern is not supported: give the tool's `name`", "pattern")
        if not isinstance(value, str) or not value:
            raise at.refuse(f"trajectory:{sub} needs the tool's `name` (or `tool`)", "name")
        return value

    if sub == "tool-used":
        count = {k: raw[k] for k in ("min", "max") if raw.get(k) is not None}
        return {"counts": {name(): count or {"min": 1}}}
    if sub == "tool-sequence":
        steps = raw.get("steps")
        if not isinstance(steps, list) or not steps:
            raise at.refuse(f"expected a list of steps, got {kind(steps)}", "steps")
        expected = [
            {"tool": s}
            if isinstance(s, str)
            else {"tool": s.get("tool", s.get("name")), **({"args": s["args"]} if "args" in s else {})}
            if isinstance(s, dict)
            else s
            for s in steps
        ]
        return {"mode": raw.get("mode", "in_order"), "expected": expected}
    if sub == "tool-args-match":
        mode = raw.get("mode", "partial")
        if mode not in ("partial", "exact"):
            raise at.refuse(f"expected partial or exact, got {mode!r}", "mode")
        return {
            "mode": "superset",
            "expected": [
                {
                    "tool": name(),
                    "args": raw.get("args") or {},
                    "args_mode": "superset" if mode == "partial" else "exact",
                }
            ],
        }
    if sub == "step-count":
        if raw.get("min") not in (None, 0):
            raise at.refuse("a minimum number of steps is not supported: use trajectory:tool-used", "min")
        return {"max_steps": raw.get("max")}
    raise at.refuse(
        f"unknown trajectory kind '{sub}' (known: tool-used, tool-sequence, tool-args-match, step-count)", "type"
    )


def _llm_rubric(options: dict[str, Any], at: GraderContext) -> dict[str, Any]:
    value = at.value
    prompt = options.get("prompt")
    items = options.get("rubrics", options.get("criteria"))
    if isinstance(value, str) and value.strip():
        text = value.strip()
    elif isinstance(prompt, str) and prompt.strip():
        text = _prompt_text(prompt.strip(), at)
    elif isinstance(prompt, dict) and ("command" in prompt or "script" in prompt):
        raise at.refuse(
            "a grading prompt built by a command (AgentV's prompt template script) is not run here: "
            "give the prompt as text or file://PATH (run the script once and keep what it prints)",
            "prompt",
        )
    elif prompt is not None:
        raise at.refuse(f"expected the grading prompt as text or file://PATH, got {kind(prompt)}", "prompt")
    elif items is not None and at.fmt == "v4" and score_ranges.has_score_ranges(items):
        ranged = score_ranges.score_range_items(items, "rubrics" if "rubrics" in options else "criteria", at.refuse)
        return {**options, GRADING_KEY: score_ranges.grading_text(ranged), score_ranges.KEY: ranged}
    elif items is not None:
        text = "\n".join(_outcomes(items, "rubrics" if "rubrics" in options else "criteria", at))
    else:
        text = ""
    return {**options, GRADING_KEY: text}


def _prompt_text(prompt: str, at: GraderContext) -> str:
    if not prompt.startswith("file://"):
        return prompt
    path = Path(at.file).parent / prompt.removeprefix("file://")
    try:
        return read_text(path).strip()
    except InputError as exc:
        raise at.refuse(f"cannot read the prompt file {exc}", "prompt") from None


def _outcomes(items: Any, key: str, at: GraderContext) -> list[str]:
    if not isinstance(items, list) or not items:
        raise at.refuse(f"expected a non-empty list of rubric items, got {kind(items)}", key)
    out = []
    for i, item in enumerate(items):
        text = (
            item
            if isinstance(item, str)
            else item.get("outcome", item.get("description"))
            if isinstance(item, dict)
            else None
        )
        if not isinstance(text, str) or not text.strip():
            raise at.refuse("a rubric item is a text or {id, outcome, weight, required}", f"{key}[{i}]")
        weight = item.get("weight") if isinstance(item, dict) else None
        out.append(f"- {text.strip()}" + (f" (weight {weight})" if weight not in (None, 1) else ""))
    return out


def _field_accuracy(options: dict[str, Any], at: GraderContext) -> dict[str, Any] | None:
    raw = options.get("fields")
    problem = (
        None
        if isinstance(raw, list) and raw
        else ("`fields` is empty" if isinstance(raw, list) else "needs a `fields` list")
    )
    fields: list[dict[str, Any]] = []
    for i, item in enumerate(raw if isinstance(raw, list) else []):
        path = item.get("path") if isinstance(item, dict) else None
        match = item.get("match") if isinstance(item, dict) else None
        if not isinstance(item, dict) or not isinstance(path, str) or not path:
            bad, field = "a field is a mapping with a `path`", f"fields[{i}]"
        elif match not in _FIELD_MATCHES:
            bad, field = f"match {match!r} is not exact, numeric_tolerance or date", f"fields[{i}].match"
        else:
            fields.append(_field_spec(item))
            continue
        if at.fmt != "v4":
            raise at.refuse(bad, field)
        at.warn(f"{field}: {bad}: left out (as AgentV 4.42 does)")
    if problem is None and not fields:
        problem = "no usable field"
    if problem is not None:
        if at.fmt != "v4":
            raise at.refuse(problem, "fields")
        at.warn(f"left out: field-accuracy {problem} (as AgentV 4.42 does)")
        return None
    aggregation = options.get("aggregation")
    return {
        **options,
        "fields": fields,
        "aggregation": aggregation if aggregation in ("weighted_average", "all_or_nothing") else None,
    }


def _field_spec(item: dict[str, Any]) -> dict[str, Any]:
    """A field's settings of the types AgentV takes; others are ignored, as it does."""
    spec: dict[str, Any] = {"path": item["path"], "match": item["match"]}
    for key, types in (
        ("required", (bool,)),
        ("relative", (bool,)),
        ("weight", (int, float)),
        ("tolerance", (int, float)),
    ):
        value = item.get(key)
        if isinstance(value, types) and (bool in types or not isinstance(value, bool)):
            spec[key] = value
    if isinstance(item.get("formats"), list):
        spec["formats"] = [f for f in item["formats"] if isinstance(f, str)]
    return spec


_METRIC_LIMITS = (
    "max_tool_calls",
    "max_llm_calls",
    "max_tokens",
    "max_cost_usd",
    "max_duration_ms",
    "target_exploration_ratio",
    "exploration_tolerance",
)


def _execution_metrics(options: dict[str, Any], at: GraderContext) -> dict[str, Any] | None:
    """`execution-metrics`: the limits (snake_case or camelCase), each a number ≥ 0, at
    least one besides `exploration_tolerance`. A bad one leaves the grader out in 4.x files
    (with a warning, as AgentV 4.42 does) and is refused in the seed's format."""
    limits: dict[str, Any] = {}
    problem = None
    for key in _METRIC_LIMITS:
        camel = "".join(part if i == 0 else part.capitalize() for i, part in enumerate(key.split("_")))
        value = options.get(key, options.get(camel))
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or value != value:
            problem = f"{key} must be a non-negative finite number"
            break
        limits[key] = value
    if problem is None and not set(limits) - {"exploration_tolerance"}:
        problem = "needs at least one limit (" + ", ".join(_METRIC_LIMITS[:-1]) + ")"
    if problem is not None:
        if at.fmt != "v4":
            raise at.refuse(problem)
        at.warn(f"left out: execution-metrics {problem} (as AgentV 4.42 does)")
        return None
    return {**options, **limits}


_FIELD_MATCHES = ("exact", "numeric_tolerance", "date")
_REGEX_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE}


def regex_flags(flags: Any) -> int:
    """A regex grader's `flags` (letters `i`, `m`, `s`, `x`) as `re` flags."""
    out = 0
    for letter in str(flags or ""):
        out |= _REGEX_FLAGS.get(letter, 0)
    return out


def _regex(options: dict[str, Any], at: GraderContext) -> dict[str, Any]:
    """A regex grader's pattern compiled now: a bad one is refused when the file is read,
    not found at grading time."""
    if at.value is None:
        raise at.refuse("a regex grader needs a `value` (the pattern)", "value")
    pattern = at.value if isinstance(at.value, str) else json.dumps(at.value, ensure_ascii=False)
    try:
        re.compile(pattern, regex_flags(options.get("flags")))
    except (re.error, OverflowError, RecursionError) as exc:
        raise at.refuse(f"invalid regex {pattern!r}: {exc}", "value") from None
    return options


def _script(options: dict[str, Any], at: GraderContext) -> dict[str, Any]:
    """A script grader names the command it runs (`command`, or 4.x `script`): text or a
    non-empty list of texts."""
    command = options.get("command", options.get("script"))
    items = command if isinstance(command, list) else [command]
    if not command or not all(isinstance(c, str) and c.strip() for c in items):
        raise at.refuse(
            f"a script grader needs a `command` (text or a list of texts), got {kind(command)}",
            "command" if "script" not in options else "script",
        )
    return options


_CHECKS: dict[str, Callable[[dict[str, Any], GraderContext], dict[str, Any] | None]] = {
    "regex": _regex,
    "script": _script,
    "trajectory": _trajectory,
    "llm-rubric": _llm_rubric,
    "field-accuracy": _field_accuracy,
    "execution-metrics": _execution_metrics,
}
