"""`composite` graders of AgentV files, read as AgentV 4.42.4 reads them
(loaders/grader-parser.ts): members under `assertions` (or `assert`, `evaluators`), each
a grader with a `name` and one of AgentV's grader types as written, read as any grader
is (nested composites too); an `aggregator` of type `weighted_average` (`weights: {member:
number}`, default 1 each), `threshold` (`threshold` 0..1: the share of members that pass),
`code-grader` (`path`: a command run in the eval file's folder, reading the members'
results on stdin) or `llm-grader` (`prompt`: text or `file://PATH`, with
`{{EVALUATOR_RESULTS_JSON}}`). What AgentV skips with a warning (no members, a member
without a name or of another type, no or another aggregator, a deprecated one) is left
out with a warning in 4.x files, as it does, and refused in the seed's format.

Kept in the grader's options: `members` (the members as JSON data: Assertion records),
`aggregator` (its checked settings) and `needs_judge` (a member or aggregator, at any
depth, asks the judge: the grader is then graded in the judge step).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from bat_pipeline.engine.config.files import read_text
from bat_pipeline.engine.contracts.agentv import Assertion
from bat_pipeline.engine.datasets.agentv_graders import GraderContext
from bat_pipeline.engine.errors import InputError

MEMBERS_KEY, AGGREGATOR_KEY, NEEDS_JUDGE = "members", "aggregator", "needs_judge"
GRADER_KINDS = (
    "code-grader",
    "llm-grader",
    "rubric",
    "composite",
    "tool-trajectory",
    "field-accuracy",
    "latency",
    "cost",
    "token-usage",
    "execution-metrics",
    "skill-trigger",
    "contains",
    "contains-any",
    "contains-all",
    "icontains",
    "icontains-any",
    "icontains-all",
    "starts-with",
    "ends-with",
    "regex",
    "is-json",
    "equals",
    "rubrics",
    "inline-assert",
)
"""AgentV 4.42.4's grader kinds: a member's `type` must be one of them as written."""
LLM_MEMBER = "llm-rubric"


def composite_options(
    raw: dict[str, Any], options: dict[str, Any], at: GraderContext, member: Callable[[Any, GraderContext], Any]
) -> dict[str, Any] | None:
    """The composite's options (module docstring); None: left out (4.x, warned about).
    `member(raw, context)` reads one member grader (engine.datasets.agentv.assertion)."""

    def skip(why: str, field: str | None = None) -> None:
        if at.fmt != "v4":
            raise at.refuse(why, field)
        at.warn(f"left out: composite {why} (as AgentV 4.42 does)")

    key = next((k for k in ("assertions", "assert", "evaluators") if k in raw), None)
    written = raw.get(key) if key else None
    if not isinstance(written, list):
        skip("needs an `assertions` list of member graders", "assertions")
        return None
    aggregator = _aggregator(raw.get("aggregator"), at)
    if isinstance(aggregator, str):
        skip(aggregator, "aggregator")
        return None
    members: list[Assertion] = []
    for i, item in enumerate(written):
        where = GraderContext(at.file, at.entry, f"{at.field}.{key}[{i}]", at.fmt, at.warnings)
        name = item.get("name") if isinstance(item, dict) else None
        kind = item.get("type") if isinstance(item, dict) else None
        if not isinstance(name, str) or not name or kind not in GRADER_KINDS:
            problem = "a member needs a `name` and one of AgentV's grader types (as written, e.g. llm-grader)"
            if at.fmt != "v4":
                raise where.refuse(problem)
            where.warn(f"left out: {problem} (as AgentV 4.42 does)")
            continue
        found = member(item, where)
        if found is not None:
            members.append(found)
    if not members:
        skip("has no usable member grader", key)
        return None
    needs_judge = aggregator["type"] == "llm-grader" or any(
        m.type == LLM_MEMBER or m.options.get(NEEDS_JUDGE) for m in members
    )
    return {
        **{k: v for k, v in options.items() if k not in ("assertions", "assert", "evaluators", "aggregator")},
        MEMBERS_KEY: [m.model_dump(mode="json") for m in members],
        AGGREGATOR_KEY: aggregator,
        NEEDS_JUDGE: needs_judge,
    }


def members(grader: Assertion) -> list[Assertion]:
    """A composite's member graders, as records again."""
    return [Assertion.model_validate(m) for m in grader.options.get(MEMBERS_KEY) or []]


def _aggregator(raw: Any, at: GraderContext) -> dict[str, Any] | str:
    """The checked aggregator, or why it cannot be used."""
    if not isinstance(raw, dict):
        return "needs an `aggregator`"
    kind = raw.get("type")
    if isinstance(kind, str) and kind not in ("weighted_average", "threshold"):
        kind = kind.replace("_", "-")
    if kind in ("code-judge", "llm-judge"):
        return f"aggregator type '{raw.get('type')}' is deprecated (use '{str(kind).replace('-judge', '-grader')}')"
    if kind == "weighted_average":
        given = raw.get("weights")
        weights: dict[str, Any] = given if isinstance(given, dict) else {}
        numbers = {str(k): v for k, v in weights.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
        return {"type": kind, "weights": numbers}
    if kind == "threshold":
        value = raw.get("threshold")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
            return "a threshold aggregator needs `threshold` from 0 to 1"
        return {"type": kind, "threshold": value}
    if kind == "code-grader":
        path = raw.get("path")
        if not isinstance(path, str) or not path.strip():
            return "a code-grader aggregator needs `path` (the command to run)"
        return {"type": kind, "path": path}
    if kind == "llm-grader":
        prompt = raw.get("prompt")
        if prompt is not None and not isinstance(prompt, str):
            return "an llm-grader aggregator's `prompt` is text or file://PATH"
        if isinstance(prompt, str) and prompt.startswith("file://"):
            source = Path(at.file).parent / prompt.removeprefix("file://")
            try:
                prompt = read_text(source)
            except InputError as exc:
                raise at.refuse(f"cannot read the prompt file {exc}", "aggregator.prompt") from None
        return {"type": kind, "prompt": prompt or None}
    return f"invalid aggregator type '{raw.get('type')}' (weighted_average, threshold, code-grader, llm-grader)"
