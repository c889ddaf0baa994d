"""EvalBench's metric scorers of a conversation (its `scorers/`: agentsteps.py,
endtoendlatency.py, toolcalllatency.py, tokenconsumption.py, tokensprocessed.py,
effectivebilledtokens.py), with its formulas, read from each turn's harness output
(engine.evalbench_harness):

- `agent_steps`: Σ per turn `stats.tools.totalCalls`, else the length of `tool_calls`, else 0;
  a turn whose output is no JSON is skipped;
- `end_to_end_latency`: Σ `stats.tools.totalDurationMs` + Σ over models `api.totalLatencyMs` (ms);
- `tool_call_latency`: Σ `stats.tools.totalDurationMs` (ms);
- `token_consumption`: Σ over models `tokens.total`;
- `tokens_processed`: Σ over models `input + candidates + cached + cache_creation`;
- `effective_billed_tokens`: Σ over models `input·1.0 + cached·0.1 + cache_creation·1.25 +
  candidates·5.0`, the weights overridable as `input_weight`, `cached_weight`,
  `cache_write_weight`, `output_weight` (Anthropic Opus price ratios).

One row each, not gating, only where the run config names the scorer: raw = EvalBench's
score, value null (a count or milliseconds, not a quality), reason = EvalBench's explanation.
For an A2A agent the turns come from its spans: tokens and steps as above; end-to-end latency
is the conversation's wall time and tool-call latency has no number (no durations per tool).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.evalbench_harness import HarnessTurn, harness_turns, printed
from bat_pipeline.engine.scorers.registry import ScoringInput, check

WEIGHTS = {"input_weight": 1.0, "cached_weight": 0.1, "cache_write_weight": 1.25, "output_weight": 5.0}
"""effective_billed_tokens' default weights (evalbench/scorers/effectivebilledtokens.py)."""


def named(name: str) -> Callable[[ScoringInput], bool]:
    """Applies where the run config names the scorer (never by default)."""

    def applies(item: ScoringInput) -> bool:
        scenario = item.task.scenario
        return scenario is not None and scenario.scorers is not None and name in scenario.scorers

    return applies


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0
    return float(value)


def _stats(turn: HarnessTurn) -> dict[str, Any]:
    return _dict((turn.payload or {}).get("stats"))


def _models(turn: HarnessTurn) -> list[dict[str, Any]]:
    return [_dict(m) for m in _dict(_stats(turn).get("models")).values()]


def _steps(turn: HarnessTurn) -> int | None:
    if turn.payload is None:
        return None
    tools = _dict(_stats(turn).get("tools"))
    if "totalCalls" in tools:
        try:
            return int(tools["totalCalls"])
        except (TypeError, ValueError):
            pass
    calls = turn.payload.get("tool_calls")
    return len(calls) if isinstance(calls, list) else 0


def agent_steps_score(turns: list[HarnessTurn]) -> tuple[float, str]:
    """(score, explanation) as evalbench/scorers/agentsteps.py gives them."""
    counted = [_steps(t) for t in turns]
    total = sum(c for c in counted if c is not None)
    skipped = sum(c is None for c in counted)
    note = f" Skipped {skipped} turn(s) with unparseable agent payloads." if skipped else ""
    return float(total), f"Agent made {total} tool-call step(s).{note}"


def _tool_ms(turn: HarnessTurn) -> float:
    return _number(_dict(_stats(turn).get("tools")).get("totalDurationMs", 0.0))


def latency_score(turns: list[HarnessTurn]) -> tuple[float, str]:
    """evalbench/scorers/endtoendlatency.py: tool durations plus the models' API latency."""
    total = 0.0
    for turn in turns:
        total += _tool_ms(turn)
        total += sum(_number(_dict(m.get("api")).get("totalLatencyMs", 0.0)) for m in _models(turn))
    return float(total), f"End-to-End latency was {total} ms."


def tool_latency_score(turns: list[HarnessTurn]) -> tuple[float, str]:
    """evalbench/scorers/toolcalllatency.py."""
    total = 0.0
    for turn in turns:
        total += _tool_ms(turn)
    return float(total), f"Tool calls took {total} ms."


def _tokens(turn: HarnessTurn) -> list[dict[str, Any]]:
    return [_dict(m.get("tokens")) for m in _models(turn)]


def consumption_score(turns: list[HarnessTurn]) -> tuple[float, str]:
    """evalbench/scorers/tokenconsumption.py: Σ `tokens.total`."""
    total = 0.0
    for turn in turns:
        total += sum(_number(t.get("total", 0.0)) for t in _tokens(turn))
    return float(total), f"Agent consumed {total} tokens."


def processed_score(turns: list[HarnessTurn]) -> tuple[float, str]:
    """evalbench/scorers/tokensprocessed.py: fresh input, output and both cache tiers."""
    total = 0.0
    for turn in turns:
        for t in _tokens(turn):
            total += (
                _number(t.get("input", 0.0))
                + _number(t.get("candidates", 0.0))
                + _number(t.get("cached", 0.0))
                + _number(t.get("cache_creation", 0.0))
            )
    return float(total), f"Agent processed {total} tokens (incl. cached context)."


def billed_score(turns: list[HarnessTurn], options: dict[str, Any]) -> tuple[float, str]:
    """evalbench/scorers/effectivebilledtokens.py, its weights from the scorer's options."""
    w = {key: float(options.get(key, default)) for key, default in WEIGHTS.items()}
    total = 0.0
    for turn in turns:
        for t in _tokens(turn):
            total += (
                _number(t.get("input", 0.0)) * w["input_weight"]
                + _number(t.get("cached", 0.0)) * w["cached_weight"]
                + _number(t.get("cache_creation", 0.0)) * w["cache_write_weight"]
                + _number(t.get("candidates", 0.0)) * w["output_weight"]
            )
    return float(total), (
        f"Effective billed tokens: {total} (weighted: input={w['input_weight']}, "
        f"cached={w['cached_weight']}, cache_write={w['cache_write_weight']}, output={w['output_weight']})."
    )


def _row(name: str, scale: str, item: ScoringInput, score: float | None, reason: str) -> list[ScoreRow]:
    turns = harness_turns(item.episode)
    return [
        ScoreRow(
            scorer=name,
            criterion=name,
            raw=score,
            scale=scale,
            reason=reason,
            details={"turns": len(turns), "source": "harness" if printed(item.episode) else "spans"},
        )
    ]


@check("agent_steps", applies=named("agent_steps"), order=66)
def agent_steps(item: ScoringInput) -> list[ScoreRow]:
    return _row("agent_steps", "count", item, *agent_steps_score(harness_turns(item.episode)))


@check("end_to_end_latency", applies=named("end_to_end_latency"), order=67)
def end_to_end_latency(item: ScoringInput) -> list[ScoreRow]:
    if not printed(item.episode):
        wall = float(item.episode.trace.wall_ms)
        return _row(
            "end_to_end_latency", "ms", item, wall, f"End-to-End latency was {wall} ms (the conversation's wall time)."
        )
    return _row("end_to_end_latency", "ms", item, *latency_score(harness_turns(item.episode)))


@check("tool_call_latency", applies=named("tool_call_latency"), order=68)
def tool_call_latency(item: ScoringInput) -> list[ScoreRow]:
    if not printed(item.episode):
        return _row("tool_call_latency", "ms", item, None, "an A2A agent's spans carry no durations per tool call")
    return _row("tool_call_latency", "ms", item, *tool_latency_score(harness_turns(item.episode)))


@check("token_consumption", applies=named("token_consumption"), order=69)
def token_consumption(item: ScoringInput) -> list[ScoreRow]:
    return _row("token_consumption", "count", item, *consumption_score(harness_turns(item.episode)))


@check("tokens_processed", applies=named("tokens_processed"), order=70)
def tokens_processed(item: ScoringInput) -> list[ScoreRow]:
    return _row("tokens_processed", "count", item, *processed_score(harness_turns(item.episode)))


@check("effective_billed_tokens", applies=named("effective_billed_tokens"), order=71)
def effective_billed_tokens(item: ScoringInput) -> list[ScoreRow]:
    scenario = item.task.scenario
    options = scenario.options("effective_billed_tokens") if scenario is not None else {}
    try:
        score, reason = billed_score(harness_turns(item.episode), options)
    except (TypeError, ValueError) as exc:
        return [
            ScoreRow(
                scorer="effective_billed_tokens",
                criterion="effective_billed_tokens",
                scale="count",
                reason=f"a weight is not a number: {exc}",
                details={"error": f"a weight is not a number: {exc}"},
            )
        ]
    return _row("effective_billed_tokens", "count", item, score, reason)
