"""`execution_metrics`: AgentV's `execution-metrics` grader (4.x), scored as AgentV 4.42.4
does (graders/execution-metrics.ts): one check per threshold given — `max_tool_calls`
(all tool calls), `max_llm_calls` (assistant messages of the transcript), `max_tokens`
(input + output), `max_cost_usd`, `max_duration_ms`, `target_exploration_ratio` (the share
of AgentV's exploration tools among the calls, within `exploration_tolerance`, default
0.2); a value the run does not have fails its check. Score = the share of checks held.
The thresholds are checked when the file is read (engine.datasets.agentv_graders).
"""

from __future__ import annotations

from typing import Any

from bat_pipeline.engine.contracts.agentv import AgentvCase, Assertion
from bat_pipeline.engine.contracts.episode import Episode
from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.scorers.agentv_payload import run_metrics
from bat_pipeline.engine.scorers.assertions import assertion_row, graders, has_graders
from bat_pipeline.engine.scorers.registry import ScoringInput, check

NAME = "execution_metrics"
TYPES = ("execution-metrics",)
EXPLORATION_TOOLS = ("read", "grep", "glob", "search", "list", "Read", "Grep", "Glob", "WebSearch", "WebFetch")
"""AgentV 4.42.4's DEFAULT_EXPLORATION_TOOLS."""


@check(NAME, applies=has_graders(TYPES), order=64)
def execution_metrics(item: ScoringInput) -> list[ScoreRow]:
    case = item.task.agentv
    assert case is not None
    return [grade(grader, case, item.episode) for grader in graders(item, TYPES)]


def grade(grader: Assertion, case: AgentvCase, episode: Episode) -> ScoreRow:
    checks = metric_checks(grader.options, run_metrics(case, episode))
    held = sum(1 for c in checks if c["pass"])
    score = held / len(checks) if checks else 0.0
    return assertion_row(NAME, grader, case, score, f"{held} of {len(checks)} limits held", checks=checks)


def metric_checks(limits: dict[str, Any], run: dict[str, Any]) -> list[dict[str, Any]]:
    """The checks of the thresholds given, in AgentV's order and words."""
    summary, usage, cost, duration = run["summary"], run["token_usage"], run["cost_usd"], run["duration_ms"]
    checks: list[dict[str, Any]] = []

    def add(text: str, held: bool) -> None:
        checks.append({"text": text, "pass": held, "reason": ""})

    if (most := limits.get("max_tool_calls")) is not None:
        calls = summary["event_count"]
        add(f"Tool calls {calls} {'<=' if calls <= most else '>'} {_num(most)} max", calls <= most)
    if (most := limits.get("max_llm_calls")) is not None:
        calls = summary["llm_call_count"]
        add(f"LLM calls {calls} {'<=' if calls <= most else '>'} {_num(most)} max", calls <= most)
    if (most := limits.get("max_tokens")) is not None:
        if usage is None:
            add("Token usage data not available", False)
        else:
            total = usage["input"] + usage["output"]
            add(f"Total tokens {_num(total)} {'<=' if total <= most else '>'} {_num(most)} max", total <= most)
    if (most := limits.get("max_cost_usd")) is not None:
        if cost is None:
            add("Cost data not available", False)
        else:
            add(f"Cost ${cost:.4f} {'<=' if cost <= most else '>'} ${most:.4f} max", cost <= most)
    if (most := limits.get("max_duration_ms")) is not None:
        if duration is None:
            add("Duration data not available", False)
        else:
            ok = duration <= most
            add(f"Duration {_num(duration)}ms {'<=' if ok else '>'} {_num(most)}ms max", ok)
    if (target := limits.get("target_exploration_ratio")) is not None:
        tolerance = limits.get("exploration_tolerance", 0.2)
        if summary["event_count"] == 0:
            add("Exploration ratio not available (no tool calls)", False)
        else:
            ratio = sum(summary["tool_calls"].get(t, 0) for t in EXPLORATION_TOOLS) / summary["event_count"]
            diff = abs(ratio - target)
            if diff <= tolerance:
                add(f"Exploration ratio {ratio:.2f} within tolerance of target {_num(target)}", True)
            else:
                add(
                    f"Exploration ratio {ratio:.2f} outside tolerance of target {_num(target)} "
                    f"(diff: {diff:.2f}, tolerance: {_num(tolerance)})",
                    False,
                )
    return checks


def _num(value: float) -> str:
    """A number as JavaScript prints it (`10`, not `10.0`)."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))
