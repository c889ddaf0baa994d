"""What an AgentV target printed, read into episodes (SPEC §9, §12): a CLI answer (text,
or JSON with `text` / `output`), the JSONL of a batch run keyed by test id, and the error
episodes of tests that got no answer.

A record's `output[].tool_calls` (`{tool, input, output}`) become the episode's recorded
tool calls and its trajectory (one turn of tool steps, `aux.trajectory_source = target`),
so scorers that read the trajectory judge them as they judge an A2A agent's spans.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from bat_pipeline.engine.contracts.agentv import AgentvFormat
from bat_pipeline.engine.contracts.episode import Episode, EpisodeTrace, RecordedToolCall
from bat_pipeline.engine.contracts.tasks import Task
from bat_pipeline.engine.contracts.trajectory import ToolStep, Totals, Trajectory, Turn, count
from bat_pipeline.engine.datasets.agentv import content_text

TRAJECTORY_SOURCE = "target"
"""aux `trajectory_source` of an episode whose trajectory its target recorded (no spans)."""


@dataclass
class TargetAnswer:
    """One test's answer as a target gave it."""

    text: str
    """The answer text graders read as `output`."""
    messages: list[dict[str, Any]] = field(default_factory=list)
    """`output` messages as written (role, content, tool_calls)."""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    """Every `{tool, input, output, ...}` of the messages, in order."""
    token_usage: dict[str, Any] | None = None
    cost_usd: float | None = None
    duration_ms: float | None = None


def answer_from_record(record: dict[str, Any], fmt: AgentvFormat) -> TargetAnswer:
    """A JSON record (`text`, `output` or the legacy `output_messages`). The seed's format
    reads `text` first, else the last assistant content; AgentV 4.x reads `output` first
    (its last assistant content), else `text`. Structured content becomes compact JSON."""
    output = record.get("output", record.get("output_messages"))
    messages = [m for m in output if isinstance(m, dict)] if isinstance(output, list) else []
    last = next(
        (m for m in reversed(messages) if m.get("content") is not None and m.get("role", "assistant") == "assistant"),
        None,
    )
    from_messages = content_text(last.get("content")) if last is not None else None
    text = record.get("text")
    text = text if isinstance(text, str) else (content_text(text) if text is not None else None)
    chosen = (
        (text if text is not None else from_messages)
        if fmt == "seed"
        else (from_messages if from_messages is not None else text)
    )
    calls = [c for m in messages for c in (m.get("tool_calls") or []) if isinstance(c, dict)]
    usage = record.get("token_usage")
    return TargetAnswer(
        text=chosen or "",
        messages=messages,
        tool_calls=calls,
        token_usage=usage if isinstance(usage, dict) else None,
        cost_usd=_float(record.get("cost_usd")),
        duration_ms=_float(record.get("duration_ms")),
    )


def answer_from_output(raw: str, fmt: AgentvFormat) -> TargetAnswer:
    """What a per-test command left (OUTPUT_FILE, else stdout): a JSON object with `text`
    or `output` is read as a record; anything else is the answer text (one trailing
    newline dropped)."""
    stripped = raw.strip()
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError:
            data = None
        if isinstance(data, dict) and any(k in data for k in ("text", "output", "output_messages")):
            return answer_from_record(data, fmt)
    return TargetAnswer(text=raw[:-1] if raw.endswith("\n") else raw)


@dataclass
class BatchOutput:
    """A batch run's JSONL, routed to tests."""

    answers: dict[str, TargetAnswer]
    errors: dict[str, str]
    """Test id → why it has no answer (no line, or a duplicate id)."""
    warnings: list[str]
    """Lines for ids that are no test."""


def read_batch(text: str, test_ids: list[str], fmt: AgentvFormat, file: str = "the output") -> BatchOutput:
    """Each line `{"id", "text", "output": [...]}` becomes that test's answer. A test with
    no line is an error, saying which lines could not be read (line numbers); an id on
    two lines is an error for that test (both lines named); an unknown id is a warning."""
    wanted = set(test_ids)
    lines: dict[str, list[int]] = {}
    records: dict[str, dict[str, Any]] = {}
    malformed: list[str] = []
    warnings: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            malformed.append(f"line {number} is not JSON ({exc.msg})")
            continue
        if not isinstance(record, dict) or not isinstance(record.get("id"), (str, int)):
            malformed.append(f"line {number} has no `id`")
            continue
        test_id = str(record["id"])
        if test_id not in wanted:
            warnings.append(f"{file}: line {number}: id '{test_id}' is no test of the file; ignored")
            continue
        lines.setdefault(test_id, []).append(number)
        records[test_id] = record
    answers: dict[str, TargetAnswer] = {}
    errors: dict[str, str] = {}
    unread = f" ({'; '.join(malformed)})" if malformed else ""
    for test_id in test_ids:
        numbers = lines.get(test_id, [])
        if not numbers:
            errors[test_id] = f"no record for this test in {file}{unread}"
        elif len(numbers) > 1:
            errors[test_id] = f"id '{test_id}' appears on lines {', '.join(map(str, numbers))} of {file}"
        else:
            answers[test_id] = answer_from_record(records[test_id], fmt)
    return BatchOutput(answers=answers, errors=errors, warnings=warnings)


def answered_episode(
    task: Task, target: str, attempt: int, answer: TargetAnswer, *, wall_ms: float, started_at: str
) -> Episode:
    """A completed episode: the answer as the final output, its tool calls as the
    recorded tool calls and trajectory."""
    steps = [
        ToolStep(
            name=str(c.get("tool") or c.get("name") or ""),
            args=c.get("input", c.get("args")),
            result=None if c.get("output") is None else content_text(c.get("output")),
            error=c.get("error") if isinstance(c.get("error"), str) else None,
        )
        for c in answer.tool_calls
    ]
    user = task.agentv.prompt if task.agentv is not None else task.turns[0]
    trajectory = Trajectory(
        found=True,
        turns=[Turn(user=user, steps=list(steps))],
        totals=Totals(tool_calls=len(steps), errors=sum(1 for s in steps if s.error), **_tokens(answer.token_usage)),
    )
    trace = EpisodeTrace(
        wall_ms=answer.duration_ms if answer.duration_ms is not None else wall_ms,
        tool_calls=[RecordedToolCall(name=s.name, args=s.args, error=s.error) for s in steps],
        trajectory=trajectory,
    )
    aux: dict[str, Any] = {
        "attempt_index": attempt,
        "started_at": started_at,
        "target": target,
        "trajectory_source": TRAJECTORY_SOURCE,
        "output_messages": answer.messages,
    }
    if answer.token_usage is not None:
        aux["token_usage"] = answer.token_usage
    if answer.cost_usd is not None:
        aux["cost_usd"] = answer.cost_usd
    return Episode(
        model_name=target,
        task_id=task.id,
        expected_outcome=task.expected.expected_outcome,
        final_status="completed",
        final_output=answer.text,
        aux=aux,
        trace=trace,
    )


def error_episode(
    task: Task, target: str, attempt: int, message: str, *, started_at: str, wall_ms: float = 0.0, output: str = ""
) -> Episode:
    """An episode the target gave no answer for: `eval_error` says why; `output` keeps what
    the target printed (a failed healthcheck's output)."""
    aux: dict[str, Any] = {"attempt_index": attempt, "started_at": started_at, "target": target, "eval_error": message}
    if output:
        aux["target_output"] = output
    return Episode(
        model_name=target,
        task_id=task.id,
        expected_outcome=task.expected.expected_outcome,
        final_status="error",
        aux=aux,
        trace=EpisodeTrace(wall_ms=wall_ms),
    )


def _tokens(usage: dict[str, Any] | None) -> dict[str, int]:
    if not usage:
        return {}
    tokens_in = usage.get("input", usage.get("prompt_tokens", usage.get("input_tokens", 0)))
    tokens_out = usage.get("output", usage.get("completion_tokens", usage.get("output_tokens", 0)))
    return {"tokens_in": count(tokens_in), "tokens_out": count(tokens_out)}


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
