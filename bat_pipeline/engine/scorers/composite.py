"""`composite`: AgentV's composite grader (4.x; engine.datasets.agentv_composite), scored as
AgentV 4.42.4 does (graders/composite.ts). Each member is graded as it would be alone (by
its own scorer; an LLM member by the judge; a composite member in turn), then the
aggregator gives the one score:

- `weighted_average`: Σ weight·score / Σ weight, a member's weight from `weights` by its
  name (default 1; the member's own `weight` is not used, as in AgentV);
- `threshold`: the share of members that pass (score ≥ 0.8, AgentV's verdict); the
  grader passes when the share reaches `threshold`;
- `code-grader`: the command (through /bin/sh, in the eval file's folder) reads
  `{"results": {member: {score, verdict, assertions, expectedAspectCount, scores?}}}` on
  stdin and prints `{score, verdict?, assertions?}`; a non-zero exit, no start or a
  timeout scores 0 ("Code aggregator failed"), a missing score is 0;
- `llm-grader`: the judge gets the prompt (ours when none is given) with
  `{{EVALUATOR_RESULTS_JSON}}` replaced by those results and answers `{score,
  assertions}`; no usable answer scores 0 ("LLM aggregator failed").

One row per composite (its members are not rows of their own: AgentV reports one score
with the members under it, kept here in `details.scores`). A member that could not grade
(a grader error) makes the composite a grader error naming it. A composite that asks the
judge (an LLM member or aggregator at any depth) is graded in the judge step
(`composite_judged`), the others with the deterministic scorers.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine
from typing import Any

from bat_pipeline.engine.contracts.agentv import AgentvCase, Assertion
from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.datasets.agentv import content_text
from bat_pipeline.engine.datasets.agentv_composite import AGGREGATOR_KEY, LLM_MEMBER, NEEDS_JUDGE, members
from bat_pipeline.engine.rubrics import JudgeAnswerError, answer_object, checked_score
from bat_pipeline.engine.scorers.assertions import assertion_row, grader_error_row, graders
from bat_pipeline.engine.scorers.judging import Judge, JudgeQuestion, cannot_judge
from bat_pipeline.engine.scorers.llm_grader import grade as llm_grade
from bat_pipeline.engine.scorers.registry import ScoringInput, check, llm, registered
from bat_pipeline.engine.scorers.script import DEFAULT_TIMEOUT_S
from bat_pipeline.engine.scorers.support import cut

NAME = "composite"
JUDGED = "composite_judged"
TYPES = ("composite",)
PASS_SCORE = 0.8
"""AgentV's verdict of a member: pass at a score of 0.8 or more."""
PURPOSE = "agentv_composite"
RESULTS = "{{EVALUATOR_RESULTS_JSON}}"
DEFAULT_PROMPT = (
    "Several graders have judged one answer; their results follow as JSON, by grader name:\n"
    f"{RESULTS}\n\n"
    "Weigh them into one final judgement of the answer."
)
SYSTEM = (
    "You combine the results of several graders into one score. Answer with one JSON object and "
    'nothing else: {"score": <a number from 0 to 1>, "assertions": [{"text": "<what was checked>", '
    '"passed": <true or false>, "evidence": "<a sentence>"}]}.'
)
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "score": {"type": "number", "description": "The final score, from 0 to 1."},
        "assertions": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "text": {"type": "string"},
                    "passed": {"type": "boolean"},
                    "evidence": {"type": "string"},
                },
                "required": ["text", "passed", "evidence"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["score", "assertions"],
    "additionalProperties": False,
}


class MemberError(Exception):
    """A member could not grade: the composite is a grader error."""


def _of(item: ScoringInput, judged: bool) -> list[Assertion]:
    return [g for g in graders(item, TYPES) if bool(g.options.get(NEEDS_JUDGE)) is judged]


@check(NAME, applies=lambda item: bool(_of(item, False)), order=80)
def composite(item: ScoringInput) -> list[ScoreRow]:
    runner = item.runner if item.runner is not None else item.options
    return [_settled(grade(grader, item, None, runner)) for grader in _of(item, False)]


@llm(JUDGED, applies=lambda item: bool(_of(item, True)), order=410)
async def composite_judged(item: ScoringInput, judge: Judge) -> list[ScoreRow]:
    if cannot_judge(item):
        return []
    found = await asyncio.gather(*(grade(grader, item, judge, item.runner) for grader in _of(item, True)))
    return [row.model_copy(update={"judge": judge.name}) for row in found]


async def grade(grader: Assertion, item: ScoringInput, judge: Judge | None, runner: Any) -> ScoreRow:
    """The composite's row (module docstring)."""
    case = item.task.agentv
    assert case is not None
    try:
        result = await _result(grader, item, judge, runner)
    except MemberError as exc:
        return grader_error_row(NAME, grader, str(exc))
    checks = [{"text": a["text"], "pass": a["passed"], "reason": a.get("evidence", "")} for a in result["assertions"]]
    aggregator = grader.options[AGGREGATOR_KEY]["type"]
    return assertion_row(
        NAME,
        grader,
        case,
        result["score"],
        f"{aggregator} of {', '.join(s['name'] for s in result['scores'])}: {result['score']:.3f}",
        passed=result.get("passed"),
        checks=checks,
        aggregator=aggregator,
        scores=result["scores"],
    )


async def _result(grader: Assertion, item: ScoringInput, judge: Judge | None, runner: Any) -> dict[str, Any]:
    """AgentV's EvaluationScore of a composite: score, verdict, assertions, scores."""
    found = await _each([_member(m, item, judge, runner) for m in members(grader)], judge)
    named = list(zip(members(grader), found, strict=True))
    aggregator: dict[str, Any] = grader.options[AGGREGATOR_KEY]
    kind = aggregator["type"]
    if kind == "weighted_average":
        weights = aggregator.get("weights") or {}
        children = [_child(m, r, float(weights.get(m.name, 1.0))) for m, r in named]
        total = sum(c["weight"] for c in children)
        score = sum(c["weight"] * c["score"] for c in children) / total if total > 0 else 0.0
        tagged = [{**a, "text": f"[{m.name}] {a['text']}"} for m, r in named for a in r["assertions"]]
        return _score(score, tagged, children)
    children = [_child(m, r, None) for m, r in named]
    if kind == "threshold":
        passing = sum(1 for c in children if c["verdict"] == "pass")
        share = passing / len(children)
        held = share >= aggregator["threshold"]
        head = {
            "text": f"{passing}/{len(children)} evaluators passed (threshold: {aggregator['threshold']})",
            "passed": held,
        }
        tagged = [{**a, "text": f"[{m.name}] {a['text']}"} for m, r in named for a in r["assertions"]]
        return {**_score(share, [head, *tagged], children), "verdict": "pass" if held else "fail", "passed": held}
    results = {m.name: r for m, r in named}
    if kind == "code-grader":
        return await _code_aggregator(aggregator["path"], results, children, item, judge, runner)
    if judge is None:
        raise MemberError("an llm-grader aggregator needs the judge")
    return await _llm_aggregator(aggregator.get("prompt"), results, children, judge)


async def _member(member: Assertion, item: ScoringInput, judge: Judge | None, runner: Any) -> dict[str, Any]:
    case = item.task.agentv
    assert case is not None
    if member.type == "composite":
        return await _result(member, item, judge, runner)
    if member.type == LLM_MEMBER:
        if judge is None:
            raise MemberError(f"member '{member.name}' needs the judge")
        row = await llm_grade(member, case, content_text(item.episode.final_output), judge)
    else:
        row = _deterministic(member, item, runner)
    if row.value is None:
        raise MemberError(f"member '{member.name}': {row.details.get('error') or row.reason}")
    assertions = [
        {
            "text": str(c.get("text", "")),
            "passed": bool(c.get("pass")),
            **({"evidence": c["reason"]} if c.get("reason") else {}),
        }
        for c in row.details.get("checks") or []
    ]
    return _score(row.value, assertions, None)


def _deterministic(member: Assertion, item: ScoringInput, runner: Any) -> ScoreRow:
    """The member's row from the deterministic scorer of its type, run on the test with
    only this grader."""
    case = item.task.agentv
    assert case is not None
    alone = item.task.model_copy(update={"agentv": case.model_copy(update={"assertions": [member]})})
    sub = ScoringInput(task=alone, episode=item.episode, options=runner, runner=runner)
    for scorer in registered("check"):
        if scorer.name == NAME or not scorer.applies(sub):
            continue
        rows: list[ScoreRow] = list(scorer.fn(sub))
        for row in rows:
            if row.criterion == member.name and "assertion" in row.details:
                return row
    raise MemberError(f"member '{member.name}': no scorer grades {member.type} graders")


async def _code_aggregator(
    command: str,
    results: dict[str, Any],
    children: list[dict[str, Any]],
    item: ScoringInput,
    judge: Judge | None,
    runner: Any,
) -> dict[str, Any]:
    case: AgentvCase | None = item.task.agentv
    assert case is not None
    if runner is None or not hasattr(runner, "run_script"):
        raise MemberError("no script runner in this step for the code-grader aggregator")
    stdin = json.dumps({"results": {k: _wire(v) for k, v in results.items()}}, indent=2, ensure_ascii=False)
    call = {"cwd": case.eval_file.parent, "stdin": stdin, "timeout_s": DEFAULT_TIMEOUT_S}
    ended: Any = (
        runner.run_script(command, **call)
        if judge is None
        else await asyncio.to_thread(lambda: runner.run_script(command, **call))
    )
    failure = (
        f"could not start: {ended.start_error}"
        if ended.start_error
        else "timed out"
        if ended.timed_out
        else f"exited with code {ended.exit_code}: {cut(ended.stderr.strip(), 500)}"
        if ended.exit_code != 0
        else None
    )
    if failure is not None:
        return _score(0.0, [{"text": f"Code aggregator failed: {failure}", "passed": False}], children)
    try:
        parsed = json.loads(ended.stdout.strip())
    except json.JSONDecodeError:
        parsed = None
    parsed = parsed if isinstance(parsed, dict) else {}
    raw = parsed.get("score")
    score = _clamp(raw) if isinstance(raw, (int, float)) and not isinstance(raw, bool) else 0.0
    assertions = _assertions(parsed.get("assertions"))
    result = _score(score, assertions, children)
    if parsed.get("verdict") in ("pass", "fail"):
        result["verdict"] = parsed["verdict"]
    return result


async def _llm_aggregator(
    prompt: str | None, results: dict[str, Any], children: list[dict[str, Any]], judge: Judge
) -> dict[str, Any]:
    shown = json.dumps({k: _wire(v) for k, v in results.items()}, indent=2, ensure_ascii=False)
    question = (prompt or DEFAULT_PROMPT).replace(RESULTS, shown)
    reply = await judge.ask(
        JudgeQuestion(
            purpose=PURPOSE,
            messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}],
            parse=_parse_aggregate,
            schema=SCHEMA,
        )
    )
    if reply.value is None:
        return _score(0.0, [{"text": "LLM aggregator failed", "passed": False}], children)
    score, assertions = reply.value
    return _score(score, assertions[:8], children)


def _parse_aggregate(text: str) -> tuple[float, list[dict[str, Any]]]:
    found = answer_object(text)
    score = checked_score(found["score"])
    listed = found.get("assertions", [])
    if not isinstance(listed, list):
        raise JudgeAnswerError("`assertions` is not a list")
    return score, _assertions(listed)


def _assertions(raw: Any) -> list[dict[str, Any]]:
    """`[{text, passed, evidence?}]` of the items with a text, as AgentV keeps them."""
    out = []
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, dict) and isinstance(item.get("text"), str):
            out.append(
                {
                    "text": item["text"],
                    "passed": bool(item.get("passed")),
                    **({"evidence": item["evidence"]} if isinstance(item.get("evidence"), str) else {}),
                }
            )
    return out


def _score(score: float, assertions: list[dict[str, Any]], children: list[dict[str, Any]] | None) -> dict[str, Any]:
    score = _clamp(score)
    out = {"score": score, "verdict": "pass" if score >= PASS_SCORE else "fail", "assertions": assertions}
    return {**out, "scores": children} if children is not None else out


def _child(member: Assertion, result: dict[str, Any], weight: float | None) -> dict[str, Any]:
    child = {
        "name": member.name,
        "type": member.options.get("written_type", member.type),
        "score": result["score"],
        **({"weight": weight} if weight is not None else {}),
        "verdict": result["verdict"],
        "assertions": result["assertions"],
    }
    return {**child, "scores": result["scores"]} if "scores" in result else child


def _wire(result: dict[str, Any]) -> dict[str, Any]:
    """A member's result as AgentV hands it to an aggregator (camelCase EvaluationScore)."""
    out = {
        "score": result["score"],
        "verdict": result["verdict"],
        "assertions": result["assertions"],
        "expectedAspectCount": len(result["assertions"]) or 1,
    }
    return {**out, "scores": result["scores"]} if "scores" in result else out


async def _each(coroutines: list[Coroutine[Any, Any, dict[str, Any]]], judge: Judge | None) -> list[dict[str, Any]]:
    """The members' results: together when the judge is asked (in the judge step's event
    loop), one after the other otherwise (no event loop: `_settled`)."""
    if judge is not None:
        return list(await asyncio.gather(*coroutines))
    return [await c for c in coroutines]


def _clamp(value: float) -> float:
    return min(1.0, max(0.0, float(value)))


def _settled(coroutine: Coroutine[Any, Any, ScoreRow]) -> ScoreRow:
    """The row of a composite that asks no judge: its coroutine never waits (no judge, the
    runner called directly), so it completes on its first step, without an event loop."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        row: ScoreRow = done.value
        return row
    coroutine.close()
    raise RuntimeError("a composite without the judge waited for something")
