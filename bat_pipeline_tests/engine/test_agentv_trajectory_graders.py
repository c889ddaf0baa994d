"""Trajectory graders inside AgentV eval files (SPEC §12): read from the file, graded by the
`tool_trajectory` scorer on the calls the target recorded, weighed by the pass rule.

The real AgentV 4.42.4 cases of bat_pipeline_tests/fixtures/agentv-trajectory go through a
4.x file end to end here: one test per case, the case's calls as the batch record's
`tool_calls`, the grader's score AgentV's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from bat_pipeline.engine.agentv_rule import RULE
from bat_pipeline.engine.config.project import suite_tasks
from bat_pipeline.engine.datasets.agentv import load_suite
from bat_pipeline.engine.errors import InputError
from bat_pipeline.engine.target_records import answer_from_record, answered_episode
from bat_pipeline.engine.verdicts import check_partition

FIXTURE = Path(__file__).parent.parent / "fixtures" / "agentv-trajectory" / "results.json"
CASES = json.loads(FIXTURE.read_text())["cases"]
TARGET = {"provider": "cli", "command": "python3 run.py {PROMPT}"}


def write(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def v4_file(folder: Path, tests: list[dict]) -> Path:
    write(folder / ".agentv" / "targets.yaml", {"targets": [{"name": "local", **TARGET}]})
    return write(folder / "eval.yaml", {"execution": {"target": "local"}, "tests": tests})


def graded(eval_file: Path, calls: dict[str, list[dict]]):
    suite = load_suite(eval_file)
    tasks = suite_tasks(suite)
    records = {
        t.id: {
            "id": t.id,
            "output": [
                {"role": "assistant", "tool_calls": calls.get(t.id, [])},
                {"role": "assistant", "content": "done"},
            ],
        }
        for t in tasks
    }
    episodes = [
        answered_episode(
            t,
            "local",
            0,
            answer_from_record(records[t.id], suite.format),
            wall_ms=1.0,
            started_at="2026-01-01T00:00:00Z",
        )
        for t in tasks
    ]
    return suite, {e.task_id: e for e in check_partition(episodes, tasks)}


def test_every_agentv442_case_scores_as_agentv_through_a_4x_file(tmp_path):
    tests = [
        {"id": c["id"], "input": "go", "assertions": [{"name": "calls", "type": "tool-trajectory", **c["assertion"]}]}
        for c in CASES
    ]
    suite, episodes = graded(v4_file(tmp_path, tests), {c["id"]: c["calls"] for c in CASES})
    assert suite.format == "v4" and len(episodes) == len(CASES)
    for c in CASES:
        rows = episodes[c["id"]].scores
        [row] = [r for r in rows if r.scorer == "tool_trajectory"]
        assert row.criterion == "calls" and row.value == pytest.approx(c["agentv"]["score"]), c["id"]
        assert row.details["assertion"] == "trajectory" and row.details["agentv4"] is True
        # as AgentV: one grader, the test passes at 0.8
        rule = rows[-1]
        assert rule.scorer == RULE and rule.value == pytest.approx(c["agentv"]["score"])
        assert episodes[c["id"]].verdict.passed is (c["agentv"]["score"] >= 0.8), c["id"]


def test_a_seed_file_reads_exact_as_strict_and_weighs_the_grader(tmp_path):
    grader = {"name": "calls", "type": "trajectory", "mode": "exact", "expected": [{"tool": "a"}], "weight": 3}
    eval_file = write(
        tmp_path / "e.yaml",
        {
            "providers": {"local": TARGET},
            "tests": [
                {"id": "extra", "vars": {"input": "go"}, "assert": [grader, {"type": "contains", "value": "done"}]},
                {"id": "same", "vars": {"input": "go"}, "assert": [grader]},
            ],
        },
    )
    _, episodes = graded(eval_file, {"extra": [{"tool": "a"}, {"tool": "b"}], "same": [{"tool": "a"}]})
    [row] = [r for r in episodes["extra"].scores if r.scorer == "tool_trajectory"]
    # strict outside 4.x files: the extra call is a miss; seed graders are required
    assert row.value == pytest.approx(0.5) and row.passed is False and row.details["required"] is True
    assert any(c["pass"] is False and "extra call" in c["reason"] for c in row.details["checks"])
    assert episodes["extra"].scores[-1].value == 0.0 and not episodes["extra"].verdict.passed
    assert episodes["same"].verdict.passed


def test_newer_trajectory_kinds(tmp_path):
    graders = [
        {"name": "a", "type": "trajectory:tool-used", "min": 1},
        {"name": "seq", "type": "trajectory:tool_sequence", "steps": ["a", {"tool": "b", "args": {"x": 1}}]},
        {"name": "args", "type": "trajectory:tool-args-match", "tool": "b", "args": {"x": 1}},
        {"name": "steps", "type": "trajectory:step-count", "max": 2},
    ]
    eval_file = write(
        tmp_path / "e.yaml",
        {"providers": {"local": TARGET}, "tests": [{"id": "t", "vars": {"input": "go"}, "assert": graders}]},
    )
    calls = [{"tool": "a"}, {"tool": "b", "input": {"x": 1, "y": 2}}]
    _, episodes = graded(eval_file, {"t": calls})
    rows = {r.criterion: r for r in episodes["t"].scores if r.scorer == "tool_trajectory"}
    assert {k: r.value for k, r in rows.items()} == {"a": 1.0, "seq": 0.5, "args": 1.0, "steps": 1.0}
    # in order, arguments compared exactly: {"x": 1, "y": 2} is not {"x": 1}, one of two found
    _, episodes = graded(eval_file, {"t": [{"tool": "a"}, {"tool": "b", "input": {"x": 1}}, {"tool": "c"}]})
    rows = {r.criterion: r for r in episodes["t"].scores if r.scorer == "tool_trajectory"}
    assert {k: r.value for k, r in rows.items()} == {"a": 1.0, "seq": 1.0, "args": 1.0, "steps": 0.0}


def test_4x_leniencies_warn_where_seed_files_refuse(tmp_path):
    lenient = [
        {"name": "loose", "type": "tool_trajectory", "mode": "any_order", "expected": [{"tool": "a"}]},
        {
            "name": "odd",
            "type": "tool-trajectory",
            "mode": "in_order",
            "args_match": "partial",
            "expected": [{"tool": "a", "args": {"x": 1}, "argsMatch": "fuzzy"}],
        },
    ]
    suite, episodes = graded(
        v4_file(tmp_path, [{"id": "t", "input": "go", "assertions": lenient}]),
        {"t": [{"tool": "a", "input": {"x": 1}}]},
    )
    assert [g.name for g in suite.tests[0].assertions] == ["odd"]
    warnings = "\n".join(suite.warnings)
    assert "assertions[0]: left out: any_order needs `minimums`" in warnings
    assert "args_match 'partial'" in warnings and "expected[0].argsMatch 'fuzzy'" in warnings
    [row] = [r for r in episodes["t"].scores if r.scorer == "tool_trajectory"]
    assert row.value == 1.0 and episodes["t"].verdict.passed  # the default, exact, applies
    seed = write(
        tmp_path / "s.yaml",
        {"providers": {"local": TARGET}, "tests": [{"id": "t", "vars": {"input": "go"}, "assert": [lenient[1]]}]},
    )
    with pytest.raises(InputError) as caught:
        load_suite(seed)
    assert caught.value.entry == "tests[0] (id 't')" and caught.value.field == "assert[0].expected[0].argsMatch"


def test_an_agent_without_spans_is_a_grader_error(tmp_path):
    from bat_pipeline.engine.contracts import Episode

    eval_file = write(
        tmp_path / "e.yaml",
        {
            "providers": {"local": TARGET},
            "tests": [{"id": "t", "vars": {"input": "go"}, "assert": [{"type": "trajectory", "max_steps": 1}]}],
        },
    )
    tasks = suite_tasks(load_suite(eval_file))
    episode = Episode(
        model_name="agent", task_id="t", final_status="completed", final_output="x", aux={"attempt_index": 0}
    )
    [checked] = check_partition([episode], tasks)
    rule = checked.scores[-1]
    assert rule.passed is None and "no spans were found" in rule.reason
