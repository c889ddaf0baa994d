"""The verdict of an AgentV test (SPEC §12, §13): one gating row from its graders' rows.

Score = the weighted mean of the graders' scores; a failed grader marked `required`
makes it 0; the test passes at score ≥ its threshold (the test's, `--threshold`, the
file's, 0.8). A grader that could not grade (grader error), or one that wrote no row,
makes the row's value and verdict null, with the error: the test did not pass, and
did not fail on quality either. LLM graders are graded in the judge step, after the
deterministic ones: until their rows are there the row waits for the judge (value and
verdict null, `details.pending`), and the judge step computes it again with them
(SPEC §13: a peer file's final verdict comes after the LLM scorers).
"""

from __future__ import annotations

from collections.abc import Sequence

from bat_pipeline.engine.contracts.agentv import AgentvCase
from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.datasets.agentv_judge import asks_judge

RULE = "agentv"
"""The scorer name of the gating row."""
CRITERION = "threshold"


def graded_rows(rows: Sequence[ScoreRow]) -> list[ScoreRow]:
    """The rows of the test's graders (engine.scorers.assertions), in order."""
    return [r for r in rows if "assertion" in r.details and r.scorer != RULE]


def pass_rule_row(case: AgentvCase, rows: Sequence[ScoreRow]) -> ScoreRow:
    """The gating row of the test from its graders' rows (module docstring)."""
    threshold = case.threshold if case.threshold is not None else 0.8
    graded = graded_rows(rows)
    written = {r.criterion for r in graded}
    errors = [f"{r.criterion}: {r.details['error']}" for r in graded if r.details.get("error")]
    missing = [a for a in case.assertions if a.name not in written]
    errors += [f"{a.name}: no scorer graded this {a.type} assertion" for a in missing if not asks_judge(a)]
    pending = [a.name for a in missing if asks_judge(a)]
    details = {"threshold": threshold, "graders": len(graded)}
    if errors:
        return ScoreRow(
            scorer=RULE,
            criterion=CRITERION,
            gating=True,
            reason="grader error: " + "; ".join(errors),
            details={**details, "error": "; ".join(errors)},
        )
    if pending:
        return ScoreRow(
            scorer=RULE,
            criterion=CRITERION,
            gating=True,
            reason=f"waiting for the judge to grade {', '.join(pending)}",
            details={**details, "pending": pending},
        )
    required_failed = [
        r.criterion for r in graded if r.details.get("required") not in (False, None) and r.passed is False
    ]
    total = sum(float(r.details.get("weight", 1.0)) for r in graded)
    mean = sum(float(r.details.get("weight", 1.0)) * (r.value or 0.0) for r in graded) / total if total > 0 else 0.0
    score = 0.0 if required_failed else mean
    passed = score >= threshold
    if required_failed:
        reason = f"required grader failed: {', '.join(required_failed)}; score 0"
    elif not graded:
        reason = "no graders: score 0"
    else:
        reason = f"weighted score {score:.3f} {'≥' if passed else '<'} threshold {threshold:g}"
    return ScoreRow.unit(
        RULE,
        CRITERION,
        score,
        passed=passed,
        gating=True,
        reason=reason,
        details={**details, "required_failed": required_failed},
    )
