"""Script graders of 4.x files get AgentV 4.42.4's stdin (SPEC §12; issue 29 point 2):
a real grader process that validates its stdin as AgentV's SDK does
(agentv_sdk/validating_grader.py) accepts it, for a CLI target's answer with tool calls
and an LLM target's plain answer, and the values are AgentV's (tool counts by name, LLM
calls, the transcript, nulls where AgentV sends null)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from bat_pipeline.engine.contracts import Task
from bat_pipeline.engine.contracts.agentv import AgentvCase, Assertion, Message
from bat_pipeline.engine.contracts.tasks import Expected
from bat_pipeline.engine.scorers.script import grader_input
from bat_pipeline.engine.target_records import TargetAnswer, answered_episode
from bat_pipeline.engine.verdicts import check_partition
from bat_pipeline.resources.graders import GraderRunner

GRADER = Path(__file__).parent / "agentv_sdk" / "validating_grader.py"
CALLS = [
    {"tool": "read_file", "input": {"path": "a"}, "output": "text", "duration_ms": 12},
    {"tool": "search", "input": {"q": "x"}},
    {"tool": "read_file", "input": {"path": "b"}, "output": {"lines": 3}},
]


def case(fmt: str, config: dict) -> AgentvCase:
    grader = Assertion(
        name="sdk",
        type="script",
        options={
            "written_type": "code-grader",
            "required_given": False,
            "command": [sys.executable, str(GRADER)],
            **config,
        },
    )
    return AgentvCase(
        id="t1",
        prompt="Find it",
        input=[Message(role="system", content="be brief"), Message(role="user", content="Find it")],
        expected_output=[Message(role="assistant", content={"found": True})],
        criteria="finds it",
        assertions=[grader],
        threshold=0.8,
        format=fmt,
        eval_file=GRADER.parent / "e.yaml",
    )


def episode(the_case: AgentvCase, answer: TargetAnswer):
    task = Task(id="t1", turns=["Find it"], expected=Expected(status=None), agentv=the_case)
    return task, answered_episode(task, "tgt", 0, answer, wall_ms=41.7, started_at="2026-12-04T13:16:42.772345+00:00")


CLI_ANSWER = TargetAnswer(
    text="found",
    messages=[
        {"role": "assistant", "content": "looking", "tool_calls": CALLS},
        {"role": "assistant", "content": "found"},
    ],
    tool_calls=CALLS,
    token_usage={"input": 30, "output": 4},
)


@pytest.mark.parametrize("fmt", ["v4", "seed"])
def test_a_grader_built_on_the_sdk_accepts_the_stdin(fmt):
    the_case = case(fmt, {"expect_tools": {"read_file": 2, "search": 1}, "expect_llm_calls": 2})
    task, ep = episode(the_case, CLI_ANSWER)
    [graded] = check_partition([ep], [task], options=GraderRunner())
    [row] = [r for r in graded.scores if r.criterion == "sdk"]
    assert (row.value, row.passed) == (1.0, True), row.reason


def test_an_llm_answer_and_the_values_are_agentvs():
    the_case = case("v4", {"expect_tools": {}, "expect_llm_calls": 1})
    task, ep = episode(the_case, TargetAnswer(text="found", token_usage={"prompt_tokens": 10, "completion_tokens": 5}))
    [graded] = check_partition([ep], [task], options=GraderRunner())
    assert [r.value for r in graded.scores if r.criterion == "sdk"] == [1.0]
    sent = grader_input(the_case, ep, the_case.assertions[0])
    assert list(sent) == [
        "criteria",
        "expected_output",
        "output",
        "messages",
        "input_files",
        "input",
        "metadata",
        "trace",
        "trace_summary",
        "token_usage",
        "cost_usd",
        "duration_ms",
        "start_time",
        "end_time",
        "file_changes",
        "workspace_path",
        "config",
    ]
    assert sent["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "Find it"},
        {"role": "assistant", "content": "found"},
    ]
    assert sent["trace_summary"] == {"event_count": 0, "tool_calls": {}, "error_count": 0, "llm_call_count": 1}
    assert (sent["token_usage"], sent["duration_ms"], sent["metadata"], sent["cost_usd"]) == (
        {"input": 10, "output": 5},
        42,
        None,
        None,
    )
    assert (sent["start_time"], sent["end_time"]) == ("2026-12-04T13:16:42.772Z", "2026-12-04T13:16:42.814Z")
    assert sent["config"] == {"expect_tools": {}, "expect_llm_calls": 1}
    assert [e["type"] for e in sent["trace"]["events"]] == ["message", "message", "message", "final_response"]


def test_tool_calls_in_the_trace():
    the_case = case("v4", {})
    _, ep = episode(the_case, CLI_ANSWER)
    sent = grader_input(the_case, ep, the_case.assertions[0])
    summary = sent["trace_summary"]
    assert summary == {
        "event_count": 3,
        "tool_calls": {"read_file": 2, "search": 1},
        "error_count": 0,
        "llm_call_count": 2,
        "tool_durations": {"read_file": [12]},
    }
    assert {k: sent["trace"][k] for k in summary} == summary
    types = [e["type"] for e in sent["trace"]["events"]]
    assert types == [
        "message",
        "message",
        "message",
        "tool_call",
        "tool_result",
        "tool_call",
        "tool_call",
        "tool_result",
        "message",
        "final_response",
    ]
    assert json.dumps(sent)  # all of it is JSON
