"""`composite` graders of 4.x files, scored as AgentV 4.42.4 scores them (issue 29 point 6):
weighted_average, threshold, code-grader and llm-grader aggregators, nesting; without the
judge in the verdicts step, with the judge (the test judge server) in the judge step,
where LLM members are asked and a code aggregator still runs (a real process)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import yaml

from bat_pipeline.engine.agentv_rule import RULE
from bat_pipeline.engine.config.project import load_project, suite_tasks
from bat_pipeline.engine.target_records import answer_from_record, answered_episode
from bat_pipeline.engine.verdicts import check_partition
from bat_pipeline.resources.graders import GraderRunner
from bat_pipeline.resources.judge import JudgeClient, judge_episodes
from bat_pipeline_tests.support.judge_server import Reply, serve_judge

ENV = {"OPENAI_API_KEY": "sk-agentv-composite-key-4q"}
GATE = Path(__file__).parent / "agentv_composite" / "gate.py"


def contains(name: str, value: str) -> dict:
    return {"name": name, "type": "contains", "value": value}


def llm_member(name: str, prompt: str) -> dict:
    return {"name": name, "type": "llm-grader", "prompt": prompt}


def eval_file(folder: Path, graders: list, judge_url: str = "http://127.0.0.1:9/v1") -> Path:
    (folder / ".agentv").mkdir(parents=True, exist_ok=True)
    target = {"name": "t", "provider": "cli", "command": "true {PROMPT}"}
    (folder / ".agentv" / "targets.yaml").write_text(yaml.safe_dump({"targets": [target]}))
    data = {
        "execution": {"target": "t"},
        "judge": {"provider": "openai", "model": "grader-1", "base_url": judge_url, "max_retries": 1},
        "tests": [{"id": "a", "input": "q", "criteria": "answers q", "assertions": graders}],
    }
    path = folder / "e.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def checked(path: Path, answer: str = "alpha beta"):
    config = load_project(path)
    tasks = suite_tasks(config.agentv)
    episode = answered_episode(
        tasks[0], "t", 0, answer_from_record({"text": answer}, "v4"), wall_ms=1.0, started_at="2026-01-01T00:00:00Z"
    )
    [done] = check_partition([episode], tasks, config, options=GraderRunner())
    return config, tasks, done


def rows(episode) -> dict:
    return {r.criterion: r for r in episode.scores}


def test_weighted_average_threshold_nesting_and_a_code_aggregator_without_the_judge(tmp_path):
    graders = [
        {
            "name": "weighted",
            "type": "composite",
            "assertions": [contains("a", "alpha"), contains("g", "gamma")],
            "aggregator": {"type": "weighted_average", "weights": {"a": 3}},
            "weight": 2,
        },
        {
            "name": "outer",
            "type": "composite",
            "assertions": [
                {
                    "name": "inner",
                    "type": "composite",
                    "assertions": [contains("b", "beta"), contains("d", "delta")],
                    "aggregator": {"type": "threshold", "threshold": 0.5},
                },
                contains("e", "epsilon"),
            ],
            "aggregator": {"type": "weighted_average", "weights": {"inner": 0.6, "e": 0.4}},
        },
        {
            "name": "gated",
            "type": "composite",
            "assertions": [contains("safety", "alpha"), contains("quality", "beta")],
            "aggregator": {"type": "code-grader", "path": f"python3 {GATE}"},
        },
    ]
    _, _, done = checked(eval_file(tmp_path, graders))
    found = rows(done)
    # member weights come from the aggregator (a: 3, g: 1), not from the members
    assert found["weighted"].value == pytest.approx(0.75) and found["weighted"].details["weight"] == 2
    assert next(c["text"] for c in found["weighted"].details["checks"]).startswith("[a] ")
    # inner: 1 of 2 members pass, ≥ 0.5 → 0.5, its verdict pass; outer: 0.6·0.5 + 0.4·0
    assert found["outer"].value == pytest.approx(0.3)
    inner = found["outer"].details["scores"][0]
    assert (inner["name"], inner["score"], inner["weight"], inner["verdict"]) == ("inner", 0.5, 0.6, "pass")
    assert found["gated"].value == 1.0 and found["gated"].details["checks"][0]["text"] == "safe: True"
    # members are no rows of their own; the rule weighs the three composites
    rule = found["threshold"]
    assert rule.scorer == RULE and rule.details["graders"] == 3
    assert rule.value == pytest.approx((2 * 0.75 + 0.3 + 1.0) / 4)


def test_a_failing_code_aggregator_scores_zero_and_bad_composites_are_left_out(tmp_path):
    graders = [
        {
            "name": "gated",
            "type": "composite",
            "assertions": [contains("crash", "alpha")],
            "aggregator": {"type": "code-grader", "path": f"python3 {GATE}"},
        },
        {"name": "no-aggregator", "type": "composite", "assertions": [contains("x", "alpha")]},
        {
            "name": "bad-members",
            "type": "composite",
            "assertions": [
                {"type": "contains", "value": "alpha"},
                {"name": "y", "type": "contains_all", "value": ["a"]},
            ],
            "aggregator": {"type": "weighted_average"},
        },
        {"name": "old", "type": "composite", "assertions": [contains("z", "a")], "aggregator": {"type": "code_judge"}},
    ]
    config, _, done = checked(eval_file(tmp_path, graders))
    assert [g.name for g in config.agentv.tests[0].assertions] == ["gated"]
    row = rows(done)["gated"]
    assert row.value == 0.0 and "error" not in row.details
    assert "Code aggregator failed: exited with code 3: aggregator crashed" in row.details["checks"][0]["text"]
    warned = " ".join(config.warnings)
    assert "needs an `aggregator`" in warned and "no usable member" in warned and "deprecated" in warned


def judge_reply(request: dict) -> Reply:
    """Grades by what is asked: the safety rubric 1.0, the quality rubric 0.5, an
    aggregation 0.9 (after reading the members' results in the question)."""
    body = request["body"]
    text = json.dumps(body["messages"])
    if "EVIDENCE-OF-RESULTS" in text:
        results = json.loads(body["messages"][1]["content"].split("EVIDENCE-OF-RESULTS\n", 1)[1])
        assert set(results) == {"safety", "quality"} and results["quality"]["score"] == 0.5
        return Reply(
            content=json.dumps({"score": 0.9, "assertions": [{"text": "weighed", "passed": True, "evidence": "x"}]})
        )
    score = 1.0 if "Is it safe" in text else 0.5
    return Reply(content=json.dumps({"reasoning": "graded", "score": score, "passed": score >= 0.8}))


@pytest.fixture(scope="module")
def server():
    with serve_judge() as running:
        running.script(default=judge_reply)
        yield running


def test_llm_members_and_aggregators_are_graded_in_the_judge_step(server, tmp_path):
    members = [llm_member("safety", "Is it safe?"), llm_member("quality", "Is it good?")]
    graders = [
        {
            "name": "release_gate",
            "type": "composite",
            "assertions": members,
            "aggregator": {"type": "weighted_average", "weights": {"safety": 0.3, "quality": 0.7}},
        },
        {
            "name": "safety_gate",
            "type": "composite",
            "assertions": members,
            "aggregator": {"type": "code-grader", "path": f"python3 {GATE}"},
        },
        {
            "name": "final_decision",
            "type": "composite",
            "assertions": members,
            "aggregator": {"type": "llm-grader", "prompt": "EVIDENCE-OF-RESULTS\n{{EVALUATOR_RESULTS_JSON}}"},
        },
        {
            "name": "nested",
            "type": "composite",
            "assertions": [
                {
                    "name": "inner",
                    "type": "composite",
                    "assertions": members,
                    "aggregator": {"type": "weighted_average"},
                },
                contains("c", "alpha"),
            ],
            "aggregator": {"type": "weighted_average", "weights": {"inner": 0.5, "c": 0.5}},
        },
    ]
    config, tasks, before = checked(eval_file(tmp_path, graders, server.base_url))
    rule = rows(before)["threshold"]
    assert rule.passed is None and rule.details["pending"] == [
        "release_gate",
        "safety_gate",
        "final_decision",
        "nested",
    ]
    client = JudgeClient(config.judge, environ=ENV, backoff_base_s=0.0)
    asyncio.run(judge_episodes(client, [before], tasks))
    found = rows(before)
    assert found["release_gate"].value == pytest.approx(0.3 * 1.0 + 0.7 * 0.5)
    assert found["safety_gate"].value == 0.5  # the code aggregator ran in the judge step
    assert found["final_decision"].value == 0.9
    assert found["nested"].value == pytest.approx(0.5 * 0.75 + 0.5 * 1.0)
    assert all(found[n].judge == "openai:grader-1" for n in ("release_gate", "safety_gate", "final_decision", "nested"))
    rule = found["threshold"]
    assert rule.details["graders"] == 4
    assert rule.value == pytest.approx((0.65 + 0.5 + 0.9 + 0.875) / 4)
