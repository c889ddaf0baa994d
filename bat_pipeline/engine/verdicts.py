"""The deterministic verdict of one episode (SPEC §6), from the rows of its check scorers.

Each expectation of the task is one gating row of a deterministic scorer
(engine/scorers/: status, output, tool_calls, agent_calls, limits, errors, trajectory, and
a project's own `evaluation.scorers`); the episode passes only when every gating row does, and the
reason lists every gating row, passed or failed, in scorer order: status, each required
phrase, then the span checks (tool calls, agent calls, model calls, tokens, failed steps,
the trajectory assertion).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Any

from bat_pipeline.engine.agentv_rule import RULE, pass_rule_row
from bat_pipeline.engine.contracts.config import EvalConfig
from bat_pipeline.engine.contracts.episode import Episode, Verdict, VerdictCheck
from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.contracts.tasks import Task
from bat_pipeline.engine.scorers.project import load_project_scorers
from bat_pipeline.engine.scorers.registry import Scorer, ScoringInput, registered
from bat_pipeline.engine.scorers.support import pass_fail

NO_SPANS = "no spans found for this conversation"
SPANS = "spans"
"""The row standing for every scorer that needs the trajectory when there is none."""
ATTEMPT = "attempt"
"""The one row of an episode that could not be checked (the attempt raised, or its task is gone)."""


def score_checks(
    task: Task | None, episode: Episode, project: Collection[str] = (), options: Any = None
) -> list[ScoreRow]:
    """The rows of every deterministic scorer that applies to the task, in scorer order:
    the built-in ones and those of the `project` modules (`evaluation.scorers`).

    An episode whose attempt raised (aux `eval_error`), or whose task is None (no longer
    in the dataset), gets one failed `attempt` row instead. When the conversation has no
    trajectory, the scorers that need one are not run: one failed `spans` row stands for
    them all, where the first of them would be. A scorer that raises (in `applies` or
    when run), or returns something other than its own rows, gets one null, non-gating
    row saying so. `options` reaches the scorers (ScoringInput.options: the script
    graders' runner). An AgentV test ends with its pass rule's gating row
    (engine.agentv_rule); its graders' rows do not gate.
    """
    if episode.eval_error:
        return [attempt_row(episode.eval_error)]
    if task is None:
        return [attempt_row(f"task '{episode.task_id}' is no longer in the dataset")]
    item = ScoringInput(task=task, episode=episode, options=options)
    rows: list[ScoreRow] = []
    missing, stood_for = not item.trajectory.found, False
    for scorer in registered("check", project):
        try:
            applies = scorer.applies(item)
        except Exception as exc:  # noqa: BLE001 - a broken scorer leaves a null row with the reason, as a broken judge does
            rows.append(_broken(scorer, f"its `applies` raised {type(exc).__name__}: {exc}"))
            continue
        if not applies:
            continue
        if scorer.needs_trajectory and missing:
            if not stood_for:
                rows.append(pass_fail(SPANS, SPANS, False, NO_SPANS))
                stood_for = True
            continue
        rows.extend(_run(scorer, item))
    return rows


def agentv_verdict_rows(task: Task | None, episode: Episode, rows: list[ScoreRow]) -> list[ScoreRow]:
    """`rows` with the AgentV pass rule's gating row at the end, for an AgentV test whose
    attempt did not raise; `rows` as they are otherwise."""
    rows = [r for r in rows if r.scorer != RULE]
    if task is None or task.agentv is None or episode.eval_error:
        return rows
    return [*rows, pass_rule_row(task.agentv, rows)]


def attempt_row(message: str) -> ScoreRow:
    """The failed row of an attempt that raised before it could be checked."""
    return pass_fail(ATTEMPT, ATTEMPT, False, f"the attempt did not complete: {message}")


def verdict_from_rows(rows: Iterable[ScoreRow]) -> Verdict:
    """Passed when every gating row passed (a gating row with `passed` null counts as
    failed); no gating rows pass, with an empty reason. The checks are the gating rows,
    named by their criterion, in order."""
    checks = [VerdictCheck(check=r.criterion, passed=r.passed is True, detail=r.reason) for r in rows if r.gating]
    return Verdict(passed=all(c.passed for c in checks), reason=_reason(checks), checks=checks)


def check_partition(
    episodes: Sequence[Episode], tasks: Iterable[Task], config: EvalConfig | None = None, options: Any = None
) -> list[Episode]:
    """Every episode with its deterministic rows and the verdict they give.

    The project's own scorers (`evaluation.scorers` of `config`; none without a config)
    are imported first. Rows already on an episode from other scorers (an LLM scorer's,
    when the verdicts are redone after judging) are kept after the new ones and count
    toward the verdict; earlier rows of the deterministic scorers are replaced.
    `options`: for the scorers (the script graders' runner).
    """
    project: list[str] = []
    if config is not None:
        load_project_scorers(config)
        project = config.evaluation.scorers
    by_id = {t.id: t for t in tasks}
    ours = {s.name for s in registered("check")} | {SPANS, ATTEMPT, RULE}
    checked = []
    for episode in episodes:
        task = by_id.get(episode.task_id)
        rows = score_checks(task, episode, project, options)
        rows += [r for r in episode.scores if r.scorer not in ours]
        rows = agentv_verdict_rows(task, episode, rows)
        checked.append(episode.model_copy(update={"scores": rows, "verdict": verdict_from_rows(rows)}))
    return checked


def verdicts_by_conversation(episodes: Iterable[Episode]) -> dict[str, object]:
    """verdicts.json: conversation id → verdict, for the episodes that have one."""
    return {e.conversation_id: e.verdict.model_dump(mode="json") for e in episodes if e.verdict}


def _run(scorer: Scorer, item: ScoringInput) -> list[ScoreRow]:
    try:
        rows = list(scorer.fn(item))
    except Exception as exc:  # noqa: BLE001 - as above: one broken scorer, one null row
        return [_broken(scorer, f"raised {type(exc).__name__}: {exc}")]
    strays = [r for r in rows if not isinstance(r, ScoreRow) or r.scorer != scorer.name]
    if strays:
        stray = strays[0]
        what = f"a row of scorer '{stray.scorer}'" if isinstance(stray, ScoreRow) else type(stray).__name__
        return [_broken(scorer, f"returned {what}; a scorer returns ScoreRow objects named '{scorer.name}'")]
    return rows


def _broken(scorer: Scorer, why: str) -> ScoreRow:
    return ScoreRow(
        scorer=scorer.name,
        criterion=scorer.name,
        reason=f"scorer failed: {why}",
        details={"module": scorer.fn.__module__},
    )


def _reason(checks: list[VerdictCheck]) -> str:
    return "; ".join(f"{c.check} {'ok' if c.passed else 'FAIL'}: {c.detail}" for c in checks)
