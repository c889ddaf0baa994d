"""`script`: an AgentV script grader (`script`, 4.x `code-grader`, older `code-judge`;
SPEC §9, §12). The command reads one JSON object on stdin and prints its verdict.

The process is run by the step's ScriptRunner (resources.graders: minimal environment,
own HOME, timeout); here only what goes in and how what comes out is read.

Stdin: in 4.x files exactly what AgentV 4.42.4 sends (engine.scorers.agentv_payload), so
graders built on its SDK validate it; in seed-format files issue 15's fields (`test_id`,
`target`, `input`, `expected_output`, `criteria`, `output`, `output_messages`,
`tool_calls`, `tokens`, `wall_ms`), AgentV's names (`messages`, `input_files`, `metadata`,
`trace_summary` in its shape, `token_usage`, `cost_usd`, `duration_ms`, `start_time`,
`end_time`, `config`, ...) and the older v1–v2 ones (`question`, `answer`, ...). Stdout: `{pass, score, reason,
checks}`, `{score, assertions: [{text, passed, evidence}]}` or `{score, hits, misses,
reasoning}`. Seed-format files: a bare exit status is pass/fail; a crash (non-zero exit
with stderr or JSON), a timeout or unreadable stdout is a grader error row. 4.x files, as
AgentV 4.42: only `score` (else the share of passed `assertions`) is read, and a non-zero
exit scores 0.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Protocol

from bat_pipeline.engine.contracts.agentv import AgentvCase, Assertion
from bat_pipeline.engine.contracts.episode import Episode
from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.scorers.agentv_payload import agentv4_input, trace_summary
from bat_pipeline.engine.scorers.assertions import assertion_row, grader_error_row, graders, has_graders
from bat_pipeline.engine.scorers.registry import ScoringInput, check
from bat_pipeline.engine.scorers.support import cut

NAME = "script"
TYPES = ("script",)
DEFAULT_TIMEOUT_S = 60.0


class ScriptResult(Protocol):
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    start_error: str | None


class ScriptRunner(Protocol):
    """Runs a grader's command (resources.graders.GraderRunner)."""

    def run_script(self, command: str | list[str], *, cwd: Path, stdin: str, timeout_s: float) -> ScriptResult: ...


@check(NAME, applies=has_graders(TYPES), order=70)
def script(item: ScoringInput) -> list[ScoreRow]:
    case = item.task.agentv
    assert case is not None
    runner = item.options if hasattr(item.options, "run_script") else None
    rows = []
    for assertion in graders(item, TYPES):
        command = assertion.options.get("command", assertion.options.get("script"))
        if not command:
            rows.append(grader_error_row(NAME, assertion, "a script grader needs a `command`"))
            continue
        if runner is None:
            rows.append(grader_error_row(NAME, assertion, "no script runner in this step"))
            continue
        cwd = (case.eval_file.parent / str(assertion.options.get("cwd") or ".")).resolve()
        timeout = float(assertion.options.get("timeout_s", assertion.options.get("timeout_seconds", DEFAULT_TIMEOUT_S)))
        result = runner.run_script(
            command,
            cwd=cwd,
            stdin=json.dumps(grader_input(case, item.episode, assertion), ensure_ascii=False, default=str),
            timeout_s=timeout,
        )
        rows.append(read_verdict(assertion, case, result))
    return rows


def grader_input(case: AgentvCase, episode: Episode, assertion: Assertion) -> dict[str, Any]:
    """The JSON object a script grader reads on stdin: a 4.x file's exactly as AgentV
    4.42.4 sends it (engine.scorers.agentv_payload); a seed-format file's with issue 15's
    fields, AgentV's names and the older ones (module docstring)."""
    if case.format == "v4":
        return agentv4_input(case, episode, assertion)
    messages = episode.aux.get("output_messages") or (
        [{"role": "assistant", "content": episode.final_output}] if episode.final_output else []
    )
    calls = [{"tool": c.name, "input": c.args, "error": c.error} for c in episode.trace.tool_calls]
    totals = episode.trace.trajectory.totals
    usage = episode.aux.get("token_usage") or {"input": totals.tokens_in, "output": totals.tokens_out}
    inputs = [m.model_dump(mode="json") for m in case.input]
    expected = [m.model_dump(mode="json") for m in case.expected_output]
    config = {k: v for k, v in assertion.options.items() if k not in ("written_type", "required_given")}
    return {
        "test_id": case.id,
        "target": episode.model_name,
        "attempt": episode.attempt_index,
        "input": inputs,
        "expected_output": expected,
        "criteria": case.criteria,
        "output": episode.final_output,
        "output_messages": messages,
        "tool_calls": calls,
        "tokens": usage,
        "wall_ms": episode.trace.wall_ms,
        # AgentV 4.42's names for the same and more
        "messages": messages,
        "input_files": case.input_files,
        "metadata": case.metadata,
        "trace": None,
        "trace_summary": trace_summary([*inputs, *[m for m in messages if isinstance(m, dict)]]),
        "token_usage": usage,
        "cost_usd": episode.aux.get("cost_usd"),
        "duration_ms": episode.trace.wall_ms,
        "start_time": episode.aux.get("started_at"),
        "end_time": None,
        "file_changes": None,
        "workspace_path": None,
        "config": config,
        # older AgentV (v1–v2)
        "question": case.prompt,
        "answer": episode.final_output,
        "candidate_answer": episode.final_output,
        "expected_outcome": case.criteria,
    }


def read_verdict(assertion: Assertion, case: AgentvCase, result: ScriptResult) -> ScoreRow:
    """The grader's row from how its process ended (module docstring)."""
    stderr = cut(result.stderr.strip(), 2000)
    if result.start_error:
        return grader_error_row(NAME, assertion, f"could not start: {result.start_error}")
    if result.timed_out:
        return grader_error_row(NAME, assertion, f"timed out{': ' + stderr if stderr else ''}")
    stdout = result.stdout.strip()
    if case.format == "v4" and result.exit_code != 0:
        return assertion_row(
            NAME,
            assertion,
            case,
            0.0,
            f"exited with status {result.exit_code}" + (f": {stderr}" if stderr else ""),
            exit_code=result.exit_code,
        )
    if case.format == "seed" and not stdout:
        if result.exit_code != 0 and stderr:
            return grader_error_row(NAME, assertion, f"exited with status {result.exit_code}: {stderr}")
        held = result.exit_code == 0
        return assertion_row(
            NAME,
            assertion,
            case,
            1.0 if held else 0.0,
            f"exit status {result.exit_code}",
            passed=held,
            exit_code=result.exit_code,
        )
    if result.exit_code != 0:
        return grader_error_row(
            NAME,
            assertion,
            f"exited with status {result.exit_code}" + (f": {stderr}" if stderr else " and printed a verdict"),
        )
    data = _json_object(stdout)
    if data is None:
        return grader_error_row(NAME, assertion, f"unreadable stdout: {cut(stdout, 300)!r}")
    checks = _checks(data)
    score = data.get("score")
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        score = None
    if score is None and checks:
        score = sum(1 for c in checks if c["pass"]) / len(checks)
    passed = data.get("pass", data.get("passed")) if case.format == "seed" else None
    if score is None and isinstance(passed, bool):
        score = 1.0 if passed else 0.0
    if score is None:
        return grader_error_row(NAME, assertion, f"no score in stdout: {cut(stdout, 300)!r}")
    reason = str(data.get("reason") or data.get("reasoning") or f"score {float(score):.2f}")
    return assertion_row(
        NAME, assertion, case, float(score), reason, passed=passed if isinstance(passed, bool) else None, checks=checks
    )


def _json_object(stdout: str) -> dict[str, Any] | None:
    """The stdout as a JSON object, else the first `{...}` in it (graders that log a line first)."""
    for text in (stdout, *(m.group(0) for m in [re.search(r"\{[\s\S]*\}", stdout)] if m)):
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict):
            return data
    return None


def _checks(data: dict[str, Any]) -> list[dict[str, Any]]:
    """`checks` / `assertions` / `hits` + `misses` as `{text, pass, reason}`."""
    out = []
    for item in data.get("checks") or data.get("assertions") or []:
        if isinstance(item, dict):
            out.append(
                {
                    "text": str(item.get("text", "")),
                    "pass": bool(item.get("pass", item.get("passed"))),
                    "reason": str(item.get("reason", item.get("evidence")) or ""),
                }
            )
    if not out:
        out += [{"text": str(h), "pass": True, "reason": ""} for h in data.get("hits") or []]
        out += [{"text": str(m), "pass": False, "reason": ""} for m in data.get("misses") or []]
    return out
