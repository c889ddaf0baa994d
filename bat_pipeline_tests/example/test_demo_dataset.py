"""The shipped demo dataset against both personas: competent passes, sloppy fails in many ways."""

from __future__ import annotations

import json
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import yaml

from bat_pipeline_tests.support.example_agent import Agent, converse
from bat_pipeline_tests.support.paths import EXAMPLE_AGENT
from bat_pipeline_tests.support.spans import roots, totals, wait_for_spans

pytestmark = pytest.mark.slow(seconds=6)

TASKS = json.loads((EXAMPLE_AGENT / "eval" / "input" / "tasks.json").read_text())
EXPECTATIONS = {
    "status",
    "expected_outcome",
    "output_must_contain",
    "tool_calls",
    "agent_calls",
    "max_model_calls",
    "max_tokens",
    "no_errors",
    "expected_label",
}
STATES = {
    "working": "working",
    "input-required": "input-required",
    "completed": "completed",
    "failed": "error",
    "canceled": "error",
    "rejected": "error",
}


def contains(actual: Any, subset: Any) -> bool:
    if isinstance(subset, dict):
        return isinstance(actual, dict) and all(k in actual and contains(actual[k], v) for k, v in subset.items())
    return actual == subset


def failed_checks(task: dict[str, Any], exchanges: list, facts: dict[str, Any]) -> list[str]:
    """A rough stand-in for the pipeline's verdict (SPEC §6), enough to tell the personas apart."""
    expected, failures = task["expected"], []
    status = STATES.get(exchanges[-1].state, exchanges[-1].state)
    if expected.get("status", "completed") is not None and status != expected.get("status", "completed"):
        failures.append(f"status {status}")
    failures += [f"missing {p!r}" for p in expected.get("output_must_contain", []) if p not in exchanges[-1].text]
    for call in expected.get("tool_calls", []):
        hits = sum(
            1 for name, args in facts["tools"] if name == call["name"] and contains(args, call.get("args_subset", {}))
        )
        if hits < call.get("times", 1):
            failures.append(f"tool {call['name']}")
    for call in expected.get("agent_calls", []):
        if facts["agent_calls"].count(call["agent"]) < call.get("times", 1):
            failures.append(f"agent {call['agent']}")
    if expected.get("max_model_calls") is not None and facts["model_calls"] > expected["max_model_calls"]:
        failures.append("model calls")
    if expected.get("max_tokens") is not None and facts["tokens"] > expected["max_tokens"]:
        failures.append("tokens")
    if expected.get("no_errors") and facts["errors"]:
        failures.append("errors")
    return failures


def run_tasks(agent: Agent, tasks: list[dict[str, Any]]) -> list[tuple[list, dict[str, Any]]]:
    """Converse every task, then read the spans once (the exporter flushes in batches)."""
    ids = [f"{task['id']}__{uuid.uuid4().hex[:6]}" for task in tasks]
    exchanges = [converse(agent, task["turns"], cid) for task, cid in zip(tasks, ids, strict=True)]
    spans = wait_for_spans(
        agent.spans_file,
        lambda s: all(len(roots(s, cid)) >= len(task["turns"]) for task, cid in zip(tasks, ids, strict=True)),
    )
    return [(ex, totals(spans, cid)) for ex, cid in zip(exchanges, ids, strict=True)]


def test_dataset_uses_every_expectation_and_eval_yaml_points_at_the_demo() -> None:
    used = {key for task in TASKS for key in task["expected"]}
    assert used == EXPECTATIONS and len(TASKS) >= 10
    statuses = {task["expected"].get("status", "completed") for task in TASKS}
    assert {"completed", "input-required", None} <= statuses
    assert any(len(task["turns"]) > 1 for task in TASKS)
    config = yaml.safe_load((EXAMPLE_AGENT / "eval" / "eval.yaml").read_text())
    assert config["agent"]["command"] == ["{python}", "-m", "bat_pipeline.example.agent"]
    assert config["evaluation"]["qualitative"] and config["judge"]["model"] == "judge"
    shipped = yaml.safe_load((EXAMPLE_AGENT / "config.yaml").read_text())
    assert config["evaluation"]["extra_spans"] == [shipped["sub_agent"]["telemetry_file"]]


def test_competent_passes_everything_and_sloppy_fails_in_several_ways(agents: dict[str, Agent]) -> None:
    with ThreadPoolExecutor() as pool:
        runs = {persona: pool.submit(run_tasks, agent, TASKS) for persona, agent in agents.items()}
    outcome = {
        persona: {t["id"]: failed_checks(t, *result) for t, result in zip(TASKS, run.result(), strict=True)}
        for persona, run in runs.items()
    }
    assert {task: f for task, f in outcome["competent"].items() if f} == {}
    sloppy_failed = {task: f for task, f in outcome["sloppy"].items() if f}
    assert len(sloppy_failed) >= 8, outcome["sloppy"]
    kinds = {check.split(" ")[0] for checks in sloppy_failed.values() for check in checks}
    assert {"status", "missing", "tool", "agent", "model", "tokens", "errors"} <= kinds, sloppy_failed


def test_answers_and_token_counts_are_deterministic(agents: dict[str, Agent]) -> None:
    task = next(t for t in TASKS if t["id"] == "three_turn_mixed")
    for agent in agents.values():
        first, second = run_tasks(agent, [task, task])
        assert [e.text for e in first[0]] == [e.text for e in second[0]]
        assert first[1] == second[1]
