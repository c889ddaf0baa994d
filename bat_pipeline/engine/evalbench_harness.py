"""What EvalBench's metric scorers read from a conversation: each turn's harness output as
its conversation history keeps it (`[{user, agent}]`, `agent` the CLI's stdout), parsed as
they parse it, and the tools and skills its generators extract from it.

EvalBench's generators all hand the scorers one envelope per turn (gemini_cli's
`--output-format json`, the others converted to it): `{"response": text, "stats": {"models":
{name: {"api": {"totalLatencyMs"}, "tokens": {"input", "prompt", "candidates", "total",
"cached", "cache_creation"}}}, "tools": {"totalCalls", "totalDurationMs", "byName": {name:
{"count", "durationMs", "parameters": [...]}}}}, "tool_calls": [...]}`. A turn whose output
is no JSON counts as EvalBench counts it (nothing; `agent_steps` skips it).

An A2A agent prints nothing: its turns are given the same shape from the trajectory
rebuilt from its spans (tokens per turn from its model steps, its tool calls), without
durations (the spans carry none per tool) — this project's addition, marked `derived`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from bat_pipeline.engine.contracts.episode import Episode
from bat_pipeline.engine.contracts.trajectory import AgentStep, ModelStep, Step, ToolStep, Turn

SKILL_TOOLS = ("activate_skill", "Skill", "use_skill")
"""The tools through which the harnesses activate a skill (EvalBench's extract_skills)."""
SKILL_KEYS = ("skill_name", "skillName", "skill", "name")


@dataclass(frozen=True)
class HarnessTurn:
    """One turn as EvalBench's scorers see it."""

    payload: dict[str, Any] | None
    """The parsed envelope; None when the output is no JSON object (EvalBench skips it)."""
    derived: bool = False
    """Built from the trajectory (an A2A agent), not printed by a harness."""


def iter_steps(steps: Iterable[Step]) -> Iterable[Step]:
    """Every step, depth first, nested steps of tool and agent calls included."""
    for step in steps:
        yield step
        if isinstance(step, (ToolStep, AgentStep)):
            yield from iter_steps(step.steps)


def parse(output: str | None) -> dict[str, Any] | None:
    """A turn's output as EvalBench's scorers read it: a JSON object, else None."""
    if not output:
        return None
    try:
        value = json.loads(output)
    except (ValueError, TypeError):
        return None
    return value if isinstance(value, dict) else None


def is_envelope(value: Any) -> bool:
    """An output in EvalBench's envelope shape (a `stats` object beside the response)."""
    return isinstance(value, dict) and isinstance(value.get("stats"), dict)


def _derived(turn: Turn) -> dict[str, Any]:
    steps = list(iter_steps(turn.steps))
    models: dict[str, dict[str, Any]] = {}
    for step in steps:
        if isinstance(step, ModelStep):
            tokens = models.setdefault(step.model or "model", {"tokens": {}})["tokens"]
            fresh = max(step.tokens_in - step.tokens_cached, 0)
            for key, add in (
                ("prompt", step.tokens_in),
                ("input", fresh),
                ("cached", step.tokens_cached),
                ("candidates", step.tokens_out),
                ("total", step.tokens_in + step.tokens_out),
            ):
                tokens[key] = tokens.get(key, 0) + add
    calls = [s for s in steps if isinstance(s, ToolStep)]
    by_name: dict[str, dict[str, Any]] = {}
    for call in calls:
        entry = by_name.setdefault(call.name, {"count": 0, "parameters": []})
        entry["count"] += 1
        entry["parameters"].append(call.args)
    return {"stats": {"models": models, "tools": {"totalCalls": len(calls), "byName": by_name}}}


def harness_turns(episode: Episode) -> list[HarnessTurn]:
    """Every turn of the conversation, as EvalBench's history holds it."""
    log = episode.conversation
    turns = log.turns if log is not None else []
    if any(t.harness_output is not None for t in turns):
        return [HarnessTurn(parse(t.harness_output)) for t in turns]
    spans = episode.trace.trajectory.turns
    if not turns and not spans:
        return []
    count = max(len(turns), len(spans))
    return [HarnessTurn(_derived(spans[i]) if i < len(spans) else {}, derived=True) for i in range(count)]


def printed(episode: Episode) -> bool:
    """Whether the harness printed its turns (a CLI agent), rather than derived from spans."""
    log = episode.conversation
    return log is not None and any(t.harness_output is not None for t in log.turns)


def _by_name(payload: dict[str, Any]) -> dict[str, Any]:
    stats = payload.get("stats")
    tools = stats.get("tools") if isinstance(stats, dict) else None
    names = tools.get("byName") if isinstance(tools, dict) else None
    return names if isinstance(names, dict) else {}


def accumulated_tools(episode: Episode) -> list[str] | None:
    """EvalBench's `accumulated_tools`: per turn the envelope's `stats.tools.byName` keys (its
    generators' extract_tools), in order; None when no harness printed the turns."""
    if not printed(episode):
        return None
    return [str(name) for turn in harness_turns(episode) if turn.payload for name in _by_name(turn.payload)]


def _skill(parameters: Any) -> str | None:
    if isinstance(parameters, str):
        try:
            parameters = json.loads(parameters)
        except ValueError:
            return None
    if not isinstance(parameters, dict):
        return None
    for key in SKILL_KEYS:
        if parameters.get(key):
            return str(parameters[key])
    return None


def _turn_skills(payload: dict[str, Any]) -> list[str]:
    found: list[str] = []
    calls = payload.get("tool_calls")
    if isinstance(calls, list):
        for call in calls:
            if isinstance(call, dict) and (call.get("tool_name") or call.get("name")) in SKILL_TOOLS:
                found.append(_skill(call.get("parameters", call.get("args", call.get("input")))) or "")
    if not found:
        entry = _by_name(payload).get("activate_skill")
        params = entry.get("parameters") if isinstance(entry, dict) else None
        found = [_skill(p) or "" for p in params] if isinstance(params, list) else []
    unique: list[str] = []
    for name in found:
        if name and name not in unique:
            unique.append(name)
    return unique


def accumulated_skills(episode: Episode, steps: Iterable[Step] = ()) -> list[str]:
    """EvalBench's `accumulated_skills`: the skills each turn activated (its generators'
    extract_skills: `activate_skill` / `Skill` / `use_skill` calls and their `skill_name`,
    `skillName`, `skill` or `name`), turn after turn; for an A2A agent, its own such tool
    calls."""
    if printed(episode):
        return [s for turn in harness_turns(episode) if turn.payload for s in _turn_skills(turn.payload)]
    return [
        name
        for step in steps
        if isinstance(step, ToolStep) and step.name in SKILL_TOOLS
        for name in [_skill(step.args)]
        if name
    ]


def envelope_answer(payload: dict[str, Any]) -> str:
    """The agent's answer in an envelope: its `response`."""
    response = payload.get("response")
    return response if isinstance(response, str) else "" if response is None else json.dumps(response)


def envelope_steps(payload: dict[str, Any]) -> list[ToolStep]:
    """An envelope's tool calls as tool steps: its `tool_calls` (`tool_name` or `name`, with
    `parameters` / `args` / `input` and `output` / `result`), else one step per `byName` tool."""
    calls = payload.get("tool_calls")
    if isinstance(calls, list) and calls:
        steps = []
        for call in calls:
            if not isinstance(call, dict):
                continue
            result = call.get("output", call.get("result"))
            steps.append(
                ToolStep(
                    name=str(call.get("tool_name") or call.get("name") or call.get("tool") or ""),
                    args=call.get("parameters", call.get("args", call.get("input"))),
                    result=None if result is None else result if isinstance(result, str) else json.dumps(result),
                )
            )
        return steps
    return [ToolStep(name=str(name)) for name in _by_name(payload)]
