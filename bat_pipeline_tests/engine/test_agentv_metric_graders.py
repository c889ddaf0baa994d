"""`execution-metrics` graders of 4.x files, scored as AgentV 4.42.4 scores them
(issue 29 point 6): the scores and check texts of AgentV's own example
(examples/features/execution-metrics, its recorded baseline), the checks that fail, and
what reading the file leaves out, as AgentV does."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bat_pipeline.engine.contracts import Task
from bat_pipeline.engine.contracts.tasks import Expected
from bat_pipeline.engine.datasets.agentv import load_suite
from bat_pipeline.engine.errors import InputError
from bat_pipeline.engine.target_records import answer_from_record, answered_episode
from bat_pipeline.engine.verdicts import check_partition


def suite(tmp_path: Path, graders: list, fmt: str = "v4"):
    (tmp_path / ".agentv").mkdir(exist_ok=True)
    target = {"name": "t", "provider": "cli", "command": "true {PROMPT}"}
    (tmp_path / ".agentv" / "targets.yaml").write_text(yaml.safe_dump({"targets": [target]}))
    if fmt == "v4":
        data = {"execution": {"target": "t"}, "tests": [{"id": "a", "input": "q", "assertions": graders}]}
    else:
        data = {"providers": {"t": target}, "tests": [{"id": "a", "vars": {"input": "q"}, "assert": graders}]}
    path = tmp_path / "e.yaml"
    path.write_text(yaml.safe_dump(data))
    return load_suite(path)


def graded(tmp_path: Path, graders: list, record: dict):
    loaded = suite(tmp_path, graders)
    case = loaded.tests[0]
    task = Task(id="a", turns=["q"], expected=Expected(status=None), agentv=case)
    episode = answered_episode(task, "t", 0, answer_from_record(record, "v4"), wall_ms=5.0, started_at="")
    return {r.criterion: r for r in check_partition([episode], [task])[0].scores}


def said(text: str, calls=(), **metrics) -> dict:
    message = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [{"tool": c, "input": {}} for c in calls]
    return {"text": text, "output": [message], **metrics}


SIMPLE = said("Hello!", token_usage={"input": 15, "output": 12}, cost_usd=0.0001, duration_ms=245)
RESEARCH = said("found", ["search", "summarize"], token_usage={"input": 450, "output": 380, "cached": 120})
CODE = said("code", ["Read", "Edit"], token_usage={"input": 1200, "output": 850}, cost_usd=0.0125)


@pytest.mark.parametrize(
    "grader, record, score, texts",
    [
        (  # AgentV's baseline: simple-thresholds-pass
            {"max_tool_calls": 10, "max_tokens": 2000, "max_duration_ms": 10000},
            SIMPLE,
            1.0,
            ["Tool calls 0 <= 10 max", "Total tokens 27 <= 2000 max", "Duration 245ms <= 10000ms max"],
        ),
        (  # comprehensive-thresholds
            {
                "max_tool_calls": 15,
                "max_llm_calls": 5,
                "max_tokens": 3000,
                "max_cost_usd": 0.1,
                "max_duration_ms": 30000,
            },
            SIMPLE,
            1.0,
            [
                "Tool calls 0 <= 15 max",
                "LLM calls 1 <= 5 max",
                "Total tokens 27 <= 3000 max",
                "Cost $0.0001 <= $0.1000 max",
                "Duration 245ms <= 30000ms max",
            ],
        ),
        (  # research-with-metrics
            {"max_tool_calls": 20, "max_tokens": 5000},
            RESEARCH,
            1.0,
            ["Tool calls 2 <= 20 max", "Total tokens 830 <= 5000 max"],
        ),
        (  # exploration-ratio-check
            {"target_exploration_ratio": 0.5, "exploration_tolerance": 0.3},
            CODE,
            1.0,
            ["Exploration ratio 0.50 within tolerance of target 0.5"],
        ),
        (
            {"max_tool_calls": 1, "maxTokens": 100, "max_cost_usd": 0.05},
            RESEARCH,
            0.0,
            ["Tool calls 2 > 1 max", "Total tokens 830 > 100 max", "Cost data not available"],
        ),
        (
            {"target_exploration_ratio": 0.9},
            CODE,
            0.0,
            ["Exploration ratio 0.50 outside tolerance of target 0.9 (diff: 0.40, tolerance: 0.2)"],
        ),
        ({"target_exploration_ratio": 0.5, "max_llm_calls": 0}, SIMPLE, 0.0, None),
    ],
)
def test_scores_and_checks_as_agentv(tmp_path, grader, record, score, texts):
    row = graded(tmp_path, [{"name": "m", "type": "execution-metrics", **grader}], record)["m"]
    assert row.value == pytest.approx(score) and row.scorer == "execution_metrics"
    if texts is not None:
        assert [c["text"] for c in row.details["checks"]] == texts


def test_bad_limits_leave_the_grader_out_in_4x_files_and_are_refused_in_seed_files(tmp_path):
    loaded = suite(
        tmp_path,
        [
            {"type": "execution-metrics", "max_tokens": -1},
            {"type": "execution_metrics", "exploration_tolerance": 0.1},
            {"type": "execution-metrics", "max_tool_calls": 3, "weight": 2},
        ],
    )
    [kept] = loaded.tests[0].assertions
    assert (kept.type, kept.weight, kept.options["max_tool_calls"]) == ("execution-metrics", 2.0, 3)
    assert sum("left out: execution-metrics" in w for w in loaded.warnings) == 2
    with pytest.raises(InputError) as caught:
        suite(tmp_path, [{"type": "execution-metrics", "max_tokens": "many"}], fmt="seed")
    assert "max_tokens must be a non-negative finite number" in str(caught.value)
    assert caught.value.field == "assert[0]"
