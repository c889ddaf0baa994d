"""The deterministic verdict of one episode (SPEC §6), from the rows of its check scorers.

Each expectation of the task is one gating row of a deterministic scorer
(engine/scorers/: status, output, tool_calls, agent_calls, limits, errors, and a project's
own `evaluation.scorers`); the episode passes only when every gating row does, and the
reason lists every gating row, passed or failed, in scorer order: status, each required
phrase, then the span checks (tool calls, agent calls, model calls, tokens, failed steps).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from bat_pipeline.engine.contracts.config import EvalConfig
from bat_pipeline.engine.contracts.episode import Episode, Verdict, VerdictCheck
from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.contracts.tasks import Task
from bat_pipeline.engine.scorers.project import load_project_scorers
from bat_pipeline.engine.scorers.registry import Scorer, ScoringInput, registered, scorers_for
from bat_pipeline.engine.scorers.support import pass_fail

NO_SPANS = "no spans found for this conversation"
SPANS = "spans"
"""The row standing for every scorer that needs the trajectory when there is none."""
ATTEMPT = "attempt"
"""The one row of an episode that could not be checked (the attempt raised, or its task is gone)."""


def score_checks(task: Task | None, episode: Episode) -> list[ScoreRow]:
    """The rows of every deterministic scorer that applies to the task, in scorer order.

    An episode whose attempt raised (aux `eval_error`), or whose task is None (no longer
    in the dataset), gets one failed `attempt` row instead. When the conversation has no
    trajectory, the scorers that need one are not run: one failed `spans` row stands for
    them all, where the first of them would be. A scorer that raises, or returns
    something other than its own rows, gets one null, non-gating row saying so.
    """
    if episode.eval_error:
        return [attempt_row(episode.eval_error)]
    if task is None:
        return [attempt_row(f"task '{episode.task_id}' is no longer in the dataset")]
    item = ScoringInput(task=task, episode=episode)
    rows: list[ScoreRow] = []
    missing, stood_for = not item.trajectory.found, False
    for scorer in scorers_for(item, "check"):
        if scorer.needs_trajectory and missing:
            if not stood_for:
                rows.append(pass_fail(SPANS, SPANS, False, NO_SPANS))
                stood_for = True
            continue
        rows.extend(_run(scorer, item))
    return rows


def attempt_row(message: str) -> ScoreRow:
    """The failed row of an attempt that raised before it could be checked."""
    return pass_fail(ATTEMPT, ATTEMPT, False, f"the attempt did not complete: {message}")


def verdict_from_rows(rows: Iterable[ScoreRow]) -> Verdict:
    """Passed when every gating row passed (a gating row with `passed` null counts as
    failed); no gating rows pass, with an empty reason. The checks are the gating rows,
    named by their criterion, in order."""
    checks = [VerdictCheck(check=r.criterion, passed=r.passed is True, detail=r.reason) for r in rows if r.gating]
    return Verdict(passed=all(c.passed for c in checks), reason=_reason(checks), checks=checks)


def check_partition(episodes: Sequence[Episode], tasks: Iterable[Task], config: EvalConfig) -> list[Episode]:
    """Every episode with its deterministic rows and the verdict they give.

    The project's own scorers (`evaluation.scorers`) are imported first. Rows already on
    an episode from other scorers (an LLM scorer's, when the verdicts are redone after
    judging) are kept after the new ones and count toward the verdict; earlier rows of
    the deterministic scorers are replaced.
    """
    load_project_scorers(config)
    by_id = {t.id: t for t in tasks}
    ours = {s.name for s in registered("check")} | {SPANS, ATTEMPT}
    checked = []
    for episode in episodes:
        rows = score_checks(by_id.get(episode.task_id), episode)
        rows += [r for r in episode.scores if r.scorer not in ours]
        checked.append(episode.model_copy(update={"scores": rows, "verdict": verdict_from_rows(rows)}))
    return checked


def _run(scorer: Scorer, item: ScoringInput) -> list[ScoreRow]:
    try:
        rows = list(scorer.fn(item))
    except Exception as exc:  # a broken scorer leaves a null row with the reason, as a broken judge does
        return [_broken(scorer, f"raised {type(exc).__name__}: {exc}")]
    strays = [r for r in rows if not isinstance(r, ScoreRow) or r.scorer != scorer.name]
    if strays:
        stray = strays[0]
        what = f"a row of scorer '{stray.scorer}'" if isinstance(stray, ScoreRow) else type(stray).__name__
        return [_broken(scorer, f"returned {what}; a scorer returns ScoreRow objects named '{scorer.name}'")]
    return rows


def _broken(scorer: Scorer, why: str) -> ScoreRow:
    return ScoreRow(scorer=scorer.name, criterion=scorer.name, reason=f"scorer failed: {why}",
                    details={"module": scorer.fn.__module__})


def _reason(checks: list[VerdictCheck]) -> str:
    return "; ".join(f"{c.check} {'ok' if c.passed else 'FAIL'}: {c.detail}" for c in checks)


# --- legacy path, compared with the rows by the parity test; removed next ---------

def decide(task: Task, final_status: str | None, final_output: str | None,
           trajectory: Trajectory) -> Verdict:
    """Check the episode against every expectation of the task.

    `final_output` None counts as empty text. The span checks run only when the task
    has a span expectation; if the trajectory was not found they collapse into one
    failed `spans` check, since none of them can be judged.
    """
    expected = task.expected
    output = final_output or ""
    checks: list[VerdictCheck] = []

    if expected.status is not None:
        checks.append(_status_check(expected.status, final_status))

    for index, phrase in enumerate(expected.output_must_contain):
        found = phrase in output
        detail = f"contains {_quote(phrase)}" if found else f"{_quote(phrase)} not in the final output"
        checks.append(VerdictCheck(check=f"output[{index}]", passed=found, detail=detail))

    if expected.needs_spans:
        if not trajectory.found:
            checks.append(VerdictCheck(check="spans", passed=False, detail=NO_SPANS))
        else:
            checks.extend(_span_checks(task, trajectory))

    return Verdict(
        passed=all(c.passed for c in checks),
        reason=_reason(checks),
        checks=checks,
    )


def error_verdict(message: str) -> Verdict:
    """A failed verdict for an attempt that raised before it could be checked."""
    detail = f"the attempt did not complete: {message}"
    check = VerdictCheck(check="attempt", passed=False, detail=detail)
    return Verdict(passed=False, reason=_reason([check]), checks=[check])



from bat_pipeline.engine.scorers.arguments import args_contain  # noqa: E402
from bat_pipeline.engine.scorers.support import all_steps, iter_steps  # noqa: E402,F401
import json  # noqa: E402
from typing import Any  # noqa: E402
from bat_pipeline.engine.contracts.trajectory import AgentStep, Step, ToolStep, Trajectory  # noqa: E402
MAX_NAMED_FAILURES = 3
MAX_ERROR_CHARS = 300

def _status_check(expected: str, actual: str | None) -> VerdictCheck:
    if actual == expected:
        return VerdictCheck(check="status", passed=True, detail=f"{actual}, as expected")
    got = "no final status" if actual is None else f"ended {actual}"
    return VerdictCheck(check="status", passed=False, detail=f"{got}, expected {expected}")


def _span_checks(task: Task, trajectory: Trajectory) -> list[VerdictCheck]:
    expected = task.expected
    steps = list(all_steps(trajectory))
    tools = [s for s in steps if isinstance(s, ToolStep)]
    agents = [s for s in steps if isinstance(s, AgentStep)]
    checks: list[VerdictCheck] = []

    for want in expected.tool_calls:
        named = [t for t in tools if t.name == want.name]
        matching = [t for t in named if not want.args_subset or args_contain(t.args, want.args_subset)]
        passed = len(matching) >= want.times
        detail = _times(len(matching))
        if want.args_subset:
            detail += f" with arguments containing {_json(want.args_subset)}"
        detail += f", at least {want.times} expected"
        if not passed and len(named) > len(matching):
            detail += f" ({len(named) - len(matching)} more with other arguments)"
        checks.append(VerdictCheck(check=f"tool_call:{want.name}", passed=passed, detail=detail))

    for want in expected.agent_calls:
        count = sum(1 for a in agents if a.agent == want.agent)
        passed = count >= want.times
        detail = f"{_times(count)}, at least {want.times} expected"
        checks.append(VerdictCheck(check=f"agent_call:{want.agent}", passed=passed, detail=detail))

    totals = trajectory.totals
    if expected.max_model_calls is not None:
        limit = expected.max_model_calls
        passed = totals.model_calls <= limit
        detail = f"{totals.model_calls} model calls, at most {limit} allowed"
        checks.append(VerdictCheck(check="model_calls", passed=passed, detail=detail))

    if expected.max_tokens is not None:
        used = totals.tokens_in + totals.tokens_out
        limit = expected.max_tokens
        detail = f"{used} tokens in + out, at most {limit} allowed"
        checks.append(VerdictCheck(check="tokens", passed=used <= limit, detail=detail))

    if expected.no_errors:
        failed = [s for s in steps if s.error]
        checks.append(VerdictCheck(check="no_errors", passed=not failed, detail=_failures(failed)))

    return checks


def _failures(failed: list[Step]) -> str:
    if not failed:
        return "no failed step"
    named = [f"{_step_label(s)} failed with {_cut(s.error or '', MAX_ERROR_CHARS)}"
             for s in failed[:MAX_NAMED_FAILURES]]
    more = len(failed) - len(named)
    text = f"{len(failed)} failed step{'s' if len(failed) != 1 else ''}: " + " | ".join(named)
    return text + (f" | and {more} more" if more else "")


def _step_label(step: Step) -> str:
    if isinstance(step, ToolStep):
        return f"tool {step.name}"
    if isinstance(step, AgentStep):
        return f"agent {step.agent or '?'}"
    if step.kind == "model":
        return f"model {step.model or '?'}"
    return f"span {step.span}"


def _times(count: int) -> str:
    return f"{count} call{'s' if count != 1 else ''}"


def _quote(text: str | None) -> str:
    # Typographic quotes: readable in the reason and never escaped inside a JSON file.
    return f"“{text}”"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
