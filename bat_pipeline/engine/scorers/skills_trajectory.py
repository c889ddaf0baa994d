"""`skills_trajectory`: EvalBench's comparison of a scenario's `expected_skills` with the
skills the agent activated (evalbench/scorers/skillstrajectorymatcher.py), on its 0–100:

- by default the Jaccard similarity of the two name sets × 100 (both empty: 100);
- `enforce_order: true`: (1 − Levenshtein / longer length) × 100 of the sequences;
- `allow_extra_skills: true`: the share of expected skills activated × 100 (none expected: 100);
  both options at once are refused, as EvalBench refuses them;
- `ignore_prefix`: removed from the front of each activated name first.

The activated skills are EvalBench's `accumulated_skills` (engine.evalbench_harness). One row,
not gating (EvalBench gates nothing), passed when the score is 100.
"""

from __future__ import annotations

from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.evalbench_harness import accumulated_skills
from bat_pipeline.engine.scorers.harness_metrics import named
from bat_pipeline.engine.scorers.registry import ScoringInput, check
from bat_pipeline.engine.scorers.support import all_steps
from bat_pipeline.engine.scorers.trajectory_matcher import jaccard, levenshtein

NAME = "skills_trajectory"


def skills_score(
    expected: list[str],
    actual: list[str],
    *,
    enforce_order: bool = False,
    allow_extra_skills: bool = False,
    ignore_prefix: str = "",
) -> tuple[float, str]:
    """(score, explanation) as EvalBench's SkillsTrajectoryMatcher gives them."""
    if enforce_order and allow_extra_skills:
        raise ValueError("Cannot set both 'enforce_order' and 'allow_extra_skills' to True.")
    if ignore_prefix:
        actual = [s[len(ignore_prefix) :] if s.startswith(ignore_prefix) else s for s in actual]
    if not expected and not actual:
        return 100.0, "Both expected and actual skill lists are empty."
    if not expected and allow_extra_skills:
        return 100.0, "No expected skills specified and extra skills are allowed."
    if enforce_order:
        distance = levenshtein(expected, actual)
        longest = max(len(expected), len(actual))
        score = max(0.0, 1.0 - distance / longest) * 100.0
        return score, f"Skills Sequence Alignment: {score:.2f} (Distance: {distance}, Max: {longest})."
    if allow_extra_skills:
        matched = set(expected) & set(actual)
        score = len(matched) / len(set(expected)) * 100.0
        return score, f"Skills Coverage (allow_extra_skills=True): {score:.2f}%. Matched: {sorted(matched)}"
    score = jaccard(expected, actual) * 100.0
    return score, f"Skills Jaccard Similarity: {score:.2f}."


@check(NAME, applies=named(NAME), order=61)
def skills_trajectory(item: ScoringInput) -> list[ScoreRow]:
    scenario = item.task.scenario
    assert scenario is not None
    options = scenario.options(NAME)
    expected = list(scenario.expected_skills or [])
    actual = accumulated_skills(item.episode, all_steps(item.trajectory))
    details = {"expected": expected, "actual": actual}
    try:
        score, reason = skills_score(
            expected,
            actual,
            enforce_order=bool(options.get("enforce_order")),
            allow_extra_skills=bool(options.get("allow_extra_skills")),
            ignore_prefix=str(options.get("ignore_prefix") or ""),
        )
    except ValueError as exc:
        return [ScoreRow(scorer=NAME, criterion=NAME, scale="0..100", reason=str(exc), details={"error": str(exc)})]
    return [
        ScoreRow(
            scorer=NAME,
            criterion=NAME,
            value=score / 100.0,
            raw=score,
            scale="0..100",
            passed=score == 100.0,
            reason=f"{reason} Expected: {expected}, Actual: {actual}",
            details=details,
        )
    ]
