"""`tool_trajectory`: the trajectory graders of AgentV tests (`tool-trajectory`,
`trajectory`, `trajectory:<kind>`; SPEC §12), checked by the trajectory scorer's rules
(engine.scorers.trajectory) on the episode's tool calls: those its target recorded
(batch records, CLI JSON) or, for an agent, those rebuilt from its spans.

Per grader: one row the pass rule weighs (criterion: the grader's name; value: the
checks' hits over aspects, for 4.x files the score AgentV 4.42.4 gives; details: the
trajectory scorer's summary, and under `checks` each check with its reason). A 4.x grader passes at
its mark (min_score, else the threshold), as AgentV's do; in the seed's format it passes
when every check holds. An episode without a trajectory (an agent whose spans were not
found) gets a grader error.
"""

from __future__ import annotations

from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.contracts.trajectory_assertion import ObservedCall, TrajectoryAssertion
from bat_pipeline.engine.datasets.agentv_graders import TRAJECTORY_KEY
from bat_pipeline.engine.scorers.assertions import assertion_row, grader_error_row, graders, has_graders
from bat_pipeline.engine.scorers.registry import ScoringInput, check
from bat_pipeline.engine.scorers.trajectory import calls_of, trajectory_rows
from bat_pipeline.engine.target_records import TRAJECTORY_SOURCE

NAME = "tool_trajectory"
TYPES = ("trajectory",)


@check(NAME, applies=has_graders(TYPES), order=65)
def tool_trajectory(item: ScoringInput) -> list[ScoreRow]:
    case = item.task.agentv
    assert case is not None
    calls = observed_calls(item)
    agentv4 = case.format == "v4"
    rows: list[ScoreRow] = []
    for grader in graders(item, TYPES):
        if not item.trajectory.found:
            rows.append(grader_error_row(NAME, grader, "no trajectory: no spans were found for this conversation"))
            continue
        assertion = TrajectoryAssertion.model_validate(grader.options[TRAJECTORY_KEY], strict=False)
        summary, *checks = trajectory_rows(
            assertion, calls, agentv4=agentv4, scorer=NAME, criterion=grader.name, gating=False
        )
        checked = [{"text": c.criterion.split(":", 1)[1], "pass": c.passed, "reason": c.reason} for c in checks]
        rows.append(
            assertion_row(
                NAME,
                grader,
                case,
                summary.value or 0.0,
                summary.reason,
                passed=None if agentv4 else summary.passed,
                checks=checked,
                **summary.details,
            )
        )
    return rows


def observed_calls(item: ScoringInput) -> list[ObservedCall]:
    """The episode's tool calls; those a target recorded keep their `duration_ms` (read
    from its output messages, as AgentV reads them), so `max_duration_ms` is checked."""
    calls = calls_of(item.trajectory)
    if item.episode.aux.get("trajectory_source") != TRAJECTORY_SOURCE:
        return calls
    messages = item.episode.aux.get("output_messages") or []
    recorded = [c for m in messages if isinstance(m, dict) for c in m.get("tool_calls") or [] if isinstance(c, dict)]
    if len(recorded) != len(calls):
        return calls
    return [
        call.model_copy(update={"duration_ms": _number(raw.get("duration_ms"))})
        for call, raw in zip(calls, recorded, strict=True)
    ]


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
