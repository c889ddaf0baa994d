"""The stdin of a script grader in a 4.x file, in the shape AgentV 4.42.4 sends it
(graders/code-grader.ts, trace.ts `buildTraceFromMessages`) and its SDK validates
(packages/sdk/src/schemas.ts `CodeGraderInputSchema`, after turning snake_case keys into
camelCase): a grader built on the SDK parses it or prints "Evaluation failed" and exits 1.

Keys, in AgentV's order, snake_case: `criteria` (text), `expected_output` and `input`
(role/content messages), `output` (the answer text, or null), `messages` (the transcript:
the input messages, then the target's output messages; a target's output that already
holds user or system turns stands alone), `input_files`, `metadata` (null when the test
has none), `trace` (`event_count` = tool calls, `tool_calls` = {name: count},
`error_count`, `llm_call_count` = assistant messages, `tool_durations` when a call has a
duration, `messages`, `events`, `token_usage`, `cost_usd`, `duration_ms`, `start_time`,
`end_time`, `metadata`), `trace_summary` (the trace's first five), `token_usage`
({input, output, cached?} or null), `cost_usd`, `duration_ms`, `start_time`, `end_time`
(ISO, milliseconds, `Z`), `file_changes` and `workspace_path` (null: no workspace here),
`config` (the grader's own keys and its `config:` mapping, or null). A key AgentV leaves
undefined is left out, as JSON.stringify leaves it; null stays null.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from bat_pipeline.engine.contracts.agentv import AgentvCase, Assertion
from bat_pipeline.engine.contracts.episode import Episode

GRADER_KEYS = {
    "name",
    "type",
    "command",
    "script",
    "cwd",
    "weight",
    "target",
    "config",
    "preprocessors",
    "required",
    "min_score",
    "negate",
    "written_type",
    "required_given",
}
"""A code grader's keys AgentV reads itself (and ours); the others are its `config`."""
_TOOL_KEYS = ("tool", "input", "output", "id", "status", "start_time", "end_time", "duration_ms")
_MESSAGE_KEYS = ("start_time", "end_time", "duration_ms", "metadata")


def agentv4_input(case: AgentvCase, episode: Episode, assertion: Assertion) -> dict[str, Any]:
    """The JSON object a 4.x script grader reads on stdin (module docstring)."""
    inputs = [_message(m.role, m.content) for m in case.input]
    outputs = output_messages(episode)
    messages = transcript(inputs, outputs)
    summary = trace_summary(messages)
    usage = token_usage(episode)
    cost = episode.aux.get("cost_usd")
    duration = _number(episode.trace.wall_ms)
    start, end = _times(episode.aux.get("started_at"), episode.trace.wall_ms)
    trace: dict[str, Any] = {
        **summary,
        "messages": messages,
        "events": events(messages, end, episode.final_output),
        **_defined(token_usage=usage, cost_usd=cost, duration_ms=duration, start_time=start, end_time=end),
        "metadata": _defined(provider=_provider(episode), target=episode.model_name, eval_case_id=case.id),
    }
    return {
        "criteria": case.criteria,
        "expected_output": [_message(m.role, m.content) for m in case.expected_output],
        "output": episode.final_output,
        "messages": messages,
        "input_files": list(case.input_files),
        "input": inputs,
        "metadata": case.metadata or None,
        "trace": trace,
        "trace_summary": summary,
        "token_usage": usage,
        "cost_usd": cost,
        "duration_ms": duration,
        "start_time": start,
        "end_time": end,
        "file_changes": None,
        "workspace_path": None,
        "config": grader_config(assertion),
    }


def grader_config(assertion: Assertion) -> dict[str, Any] | None:
    """AgentV's `config` of a code grader: its keys that AgentV does not read itself,
    then its `config:` mapping over them; none: null."""
    config = {k: v for k, v in assertion.options.items() if k not in GRADER_KEYS}
    if assertion.value is not None:
        config = {"value": assertion.value, **config}
    given = assertion.options.get("config")
    if isinstance(given, dict):
        config.update(given)
    return config or None


def output_messages(episode: Episode) -> list[dict[str, Any]]:
    """The target's output messages as AgentV keeps them (a CLI target's `output`, its
    content text or a list of parts — a mapping is dropped — and its tool calls); a
    target that gave only text: one assistant message with it."""
    written = [m for m in episode.aux.get("output_messages") or [] if isinstance(m, dict)]
    if not written:
        return [{"role": "assistant", "content": episode.final_output}] if episode.final_output is not None else []
    out = []
    for raw in written:
        content = raw.get("content")
        message = _message(str(raw.get("role") or "assistant"), content if isinstance(content, (str, list)) else None)
        if isinstance(raw.get("name"), str):
            message = {
                "role": message["role"],
                "name": raw["name"],
                **{k: v for k, v in message.items() if k != "role"},
            }
        calls = raw.get("tool_calls")
        if isinstance(calls, list):
            message["tool_calls"] = [
                {k: c[k] for k in _TOOL_KEYS if c.get(k) is not None} for c in calls if isinstance(c, dict)
            ]
        message.update({k: raw[k] for k in _MESSAGE_KEYS if raw.get(k) is not None})
        out.append(message)
    return out


def transcript(inputs: list[dict[str, Any]], outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """AgentV's `buildTraceMessages`: the output alone when it has user or system turns or
    repeats the only input message first; else the input, then the output."""
    if not outputs:
        return inputs
    if any(m.get("role") in ("user", "system") for m in outputs):
        return outputs
    if len(inputs) == 1 and _same(inputs[0], outputs[0]):
        return outputs
    return [*inputs, *outputs]


def trace_summary(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """AgentV's `computeTraceSummary` over the transcript."""
    counts: dict[str, int] = {}
    durations: dict[str, list[float]] = {}
    for message in messages:
        for call in message.get("tool_calls") or []:
            name = str(call.get("tool", ""))
            counts[name] = counts.get(name, 0) + 1
            duration = call.get("duration_ms")
            if duration is None and call.get("start_time") and call.get("end_time"):
                duration = _ms_between(call["start_time"], call["end_time"])
            if isinstance(duration, (int, float)) and not isinstance(duration, bool):
                durations.setdefault(name, []).append(duration)
    summary: dict[str, Any] = {
        "event_count": sum(counts.values()),
        "tool_calls": counts,
        "error_count": 0,
        "llm_call_count": sum(1 for m in messages if m.get("role") == "assistant"),
    }
    if durations:
        summary["tool_durations"] = durations
    return summary


def events(messages: list[dict[str, Any]], end_time: str | None, answer: str | None) -> list[dict[str, Any]]:
    """The trace's events: each message, each of its tool calls (and results), then the
    final response (the last assistant message, with the answer as its content)."""
    out: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        event_id = f"message-{index}"
        body = _defined(
            role=message["role"],
            name=message.get("name"),
            content=message.get("content"),
            metadata=message.get("metadata"),
        )
        out.append(
            _defined(
                event_id=event_id,
                ordinal=len(out),
                type="message",
                timestamp=message.get("start_time"),
                duration_ms=message.get("duration_ms"),
                message=body,
                metadata={"message_index": index},
            )
        )
        for t, call in enumerate(message.get("tool_calls") or []):
            tool_id = f"{event_id}-tool-{t}"
            where = {"message_index": index, "tool_index": t}
            tool = _defined(
                name=call.get("tool"),
                call_id=call.get("id"),
                input=call.get("input"),
                output=call.get("output"),
                status=call.get("status") or "ok",
            )
            out.append(
                _defined(
                    event_id=tool_id,
                    parent_event_id=event_id,
                    ordinal=len(out),
                    type="tool_call",
                    timestamp=call.get("start_time"),
                    duration_ms=call.get("duration_ms"),
                    tool=tool,
                    metadata=where,
                )
            )
            if "output" in call:
                result = {k: v for k, v in tool.items() if k != "input"}
                out.append(
                    _defined(
                        event_id=f"{tool_id}-result",
                        parent_event_id=tool_id,
                        ordinal=len(out),
                        type="tool_result",
                        timestamp=call.get("end_time"),
                        tool=result,
                        metadata=where,
                    )
                )
    last = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "assistant"), None)
    if last is not None:
        final = messages[last]
        out.append(
            _defined(
                event_id="final-response",
                parent_event_id=f"message-{last}",
                ordinal=len(out),
                type="final_response",
                timestamp=final.get("end_time") or final.get("start_time") or end_time,
                message=_defined(
                    role=final["role"],
                    name=final.get("name"),
                    content=answer if answer is not None else final.get("content"),
                    metadata=final.get("metadata"),
                ),
                metadata={"message_index": last},
            )
        )
    return out


def token_usage(episode: Episode) -> dict[str, Any] | None:
    """`{input, output, cached?}` as the target reported it; null when it did not."""
    usage = episode.aux.get("token_usage")
    if isinstance(usage, dict):
        read = {
            "input": usage.get("input", usage.get("prompt_tokens", usage.get("input_tokens"))),
            "output": usage.get("output", usage.get("completion_tokens", usage.get("output_tokens"))),
            "cached": usage.get("cached"),
        }
        if all(_is_number(read[k]) for k in ("input", "output")):
            return {k: v for k, v in read.items() if _is_number(v)}
    totals = episode.trace.trajectory.totals
    if totals.tokens_in is not None and totals.tokens_out is not None:
        return {"input": totals.tokens_in, "output": totals.tokens_out}
    return None


def _message(role: str, content: Any) -> dict[str, Any]:
    """A role/content message; no content: the role alone (AgentV leaves it undefined)."""
    return {"role": role, "content": content} if content is not None else {"role": role}


def _same(first: dict[str, Any], second: dict[str, Any]) -> bool:
    return first.get("role") == second.get("role") and first.get("content") == second.get("content")


def _provider(episode: Episode) -> str | None:
    llm = episode.aux.get("llm")
    return str(llm).split(":", 1)[0] if llm else None


def _times(started_at: Any, wall_ms: float | None) -> tuple[str | None, str | None]:
    """Start and end as JavaScript's toISOString writes them."""
    if not isinstance(started_at, str) or not started_at:
        return None, None
    try:
        start = datetime.fromisoformat(started_at)
    except ValueError:
        return None, None
    start = start.astimezone(UTC) if start.tzinfo else start.replace(tzinfo=UTC)
    end = start + timedelta(milliseconds=wall_ms or 0)
    return _iso(start), _iso(end)


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _ms_between(start: Any, end: Any) -> float | None:
    try:
        first = datetime.fromisoformat(str(start).replace("Z", "+00:00"))
        last = datetime.fromisoformat(str(end).replace("Z", "+00:00"))
    except ValueError:
        return None
    return (last - first).total_seconds() * 1000


def _number(value: float | None) -> int | None:
    """Milliseconds as AgentV counts them: whole ones."""
    return None if value is None else round(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _defined(**values: Any) -> dict[str, Any]:
    """The values that are not None (AgentV's undefined keys, left out by JSON.stringify)."""
    return {k: v for k, v in values.items() if v is not None}


def run_metrics(case: AgentvCase, episode: Episode) -> dict[str, Any]:
    """What AgentV 4.42.4's metric graders read of a run: the trace summary (over the
    transcript), `token_usage`, `cost_usd`, `duration_ms` (None when unknown)."""
    inputs = [_message(m.role, m.content) for m in case.input]
    return {
        "summary": trace_summary(transcript(inputs, output_messages(episode))),
        "token_usage": token_usage(episode),
        "cost_usd": episode.aux.get("cost_usd"),
        "duration_ms": _number(episode.trace.wall_ms),
    }
