"""A script grader that validates its stdin as AgentV 4.42.4's SDK does (README.md), then
grades: score 1 when the trace summary's tool counts are the config's `expect_tools`
(and, with `expect_llm_calls`, the LLM call count), else 0."""

import json
import re
import sys

ROLES = ("assistant", "user", "system", "tool")
EVENT_TYPES = ("message", "model_turn", "tool_call", "tool_result", "final_response", "error")
TOOL_STATUSES = ("ok", "error", "timeout", "cancelled", "unknown")


class Invalid(Exception):
    pass


def camel(value):
    if isinstance(value, list):
        return [camel(v) for v in value]
    if isinstance(value, dict):
        return {
            (k if re.match(r"^[A-Z]", k) else re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), k)): camel(v)
            for k, v in value.items()
        }
    return value


def number(v, where, minimum=None, integer=False):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise Invalid(f"{where}: Expected number, received {type(v).__name__}")
    if integer and v != int(v):
        raise Invalid(f"{where}: Expected integer")
    if minimum is not None and v < minimum:
        raise Invalid(f"{where}: Number must be greater than or equal to {minimum}")


def string(v, where):
    if not isinstance(v, str):
        raise Invalid(f"{where}: Expected string, received {type(v).__name__}")


def record(v, where, item=None):
    if not isinstance(v, dict):
        raise Invalid(f"{where}: Expected object, received {type(v).__name__}")
    for k, x in v.items():
        if item is not None:
            item(x, f"{where}.{k}")


def array(v, where, item):
    if not isinstance(v, list):
        raise Invalid(f"{where}: Expected array, received {type(v).__name__}")
    for i, x in enumerate(v):
        item(x, f"{where}[{i}]")


def enum(values):
    def check(v, where):
        if v not in values:
            raise Invalid(f"{where}: Invalid enum value. Expected {' | '.join(values)}, received {v!r}")

    return check


def boolean(v, where):
    if not isinstance(v, bool):
        raise Invalid(f"{where}: Expected boolean, received {type(v).__name__}")


def anything(v, where):
    return None


def obj(fields):
    """fields: name -> (check, mode), mode 'required' | 'optional' (absent ok, null not) |
    'nullable' (absent or null ok). Unknown keys are stripped, as zod does."""

    def check(v, where):
        record(v, where)
        for name, (inner, mode) in fields.items():
            if name not in v:
                if mode == "required":
                    raise Invalid(f"{where}.{name}: Required")
                continue
            if v[name] is None and mode == "nullable":
                continue
            if v[name] is None and inner is not anything:
                raise Invalid(f"{where}.{name}: Expected a value, received null")
            inner(v[name], f"{where}.{name}")

    return check


REQ, OPT, NUL = "required", "optional", "nullable"
token_usage = obj(
    {"input": (number, REQ), "output": (number, REQ), "cached": (number, OPT), "reasoning": (number, OPT)}
)
summary_fields = {
    "eventCount": (number, REQ),
    "toolCalls": (lambda v, w: record(v, w, number), REQ),
    "errorCount": (number, REQ),
    "toolDurations": (lambda v, w: record(v, w, lambda x, ww: array(x, ww, number)), OPT),
    "llmCallCount": (number, OPT),
}
trace_summary = obj(summary_fields)
tool_call = obj(
    {
        "tool": (string, REQ),
        "input": (anything, OPT),
        "output": (anything, OPT),
        "id": (string, OPT),
        "startTime": (string, OPT),
        "endTime": (string, OPT),
        "durationMs": (number, OPT),
    }
)


def content(v, where):
    if isinstance(v, str):
        return
    if isinstance(v, list):
        return array(v, where, lambda x, w: record(x, w))
    record(v, where)


message = obj(
    {
        "role": (enum(ROLES), REQ),
        "content": (content, OPT),
        "toolCalls": (lambda v, w: array(v, w, tool_call), OPT),
        "name": (string, OPT),
        "startTime": (string, OPT),
        "endTime": (string, OPT),
        "durationMs": (number, OPT),
        "metadata": (record, OPT),
    }
)


def messages(v, w):
    return array(v, w, message)


trace_error = obj(
    {
        "message": (string, REQ),
        "name": (string, OPT),
        "code": (string, OPT),
        "stack": (string, OPT),
        "metadata": (record, OPT),
    }
)
trace_event = obj(
    {
        "eventId": (string, REQ),
        "parentEventId": (string, OPT),
        "ordinal": (lambda v, w: number(v, w, 0, True), REQ),
        "type": (enum(EVENT_TYPES), REQ),
        "timestamp": (string, OPT),
        "durationMs": (lambda v, w: number(v, w, 0), OPT),
        "durationInferred": (boolean, OPT),
        "turnIndex": (lambda v, w: number(v, w, 0, True), OPT),
        "message": (
            obj(
                {
                    "role": (string, REQ),
                    "name": (string, OPT),
                    "content": (anything, OPT),
                    "tokenUsage": (token_usage, OPT),
                    "metadata": (record, OPT),
                }
            ),
            OPT,
        ),
        "tool": (
            obj(
                {
                    "name": (string, REQ),
                    "callId": (string, OPT),
                    "input": (anything, OPT),
                    "output": (anything, OPT),
                    "status": (enum(TOOL_STATUSES), OPT),
                    "error": (trace_error, OPT),
                    "metadata": (record, OPT),
                }
            ),
            OPT,
        ),
        "error": (trace_error, OPT),
        "metadata": (record, OPT),
    }
)
trace = obj(
    {
        **summary_fields,
        "messages": (messages, REQ),
        "events": (lambda v, w: array(v, w, trace_event), REQ),
        "tokenUsage": (token_usage, OPT),
        "costUsd": (number, OPT),
        "durationMs": (number, OPT),
        "startTime": (string, OPT),
        "endTime": (string, OPT),
        "metadata": (record, OPT),
    }
)
grader_input = obj(
    {
        "criteria": (string, REQ),
        "expectedOutput": (messages, REQ),
        "output": (string, NUL),
        "messages": (messages, OPT),
        "outputPath": (string, OPT),
        "inputFiles": (lambda v, w: array(v, w, string), REQ),
        "input": (messages, REQ),
        "metadata": (record, NUL),
        "trace": (trace, NUL),
        "traceSummary": (trace_summary, NUL),
        "tokenUsage": (token_usage, NUL),
        "costUsd": (number, NUL),
        "durationMs": (number, NUL),
        "startTime": (string, NUL),
        "endTime": (string, NUL),
        "fileChanges": (string, NUL),
        "workspacePath": (string, NUL),
        "config": (record, NUL),
    }
)


def main():
    try:
        data = camel(json.loads(sys.stdin.read()))
        grader_input(data, "input")
    except (Invalid, ValueError) as exc:
        print(json.dumps({"score": 0, "assertions": [{"text": f"Evaluation failed: {exc}", "passed": False}]}))
        sys.exit(1)
    config = data.get("config") or {}
    summary = data.get("traceSummary") or {}
    checks = []
    if "expectTools" in config:
        checks.append(
            {"text": f"tools {summary.get('toolCalls')}", "passed": summary.get("toolCalls") == config["expectTools"]}
        )
    if "expectLlmCalls" in config:
        checks.append({"text": "llm calls", "passed": summary.get("llmCallCount") == config["expectLlmCalls"]})
    score = sum(c["passed"] for c in checks) / len(checks) if checks else 1.0
    print(json.dumps({"score": score, "assertions": checks}))


main()
