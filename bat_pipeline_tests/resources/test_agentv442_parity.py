"""A 4.x-format AgentV file graded as AgentV 4.42.4 grades it (SPEC §12: for 4.x files
what AgentV does is the expected result). expected.json is AgentV's own verdict on
bat_pipeline_tests/engine/agentv442/eval.yaml, made by scripts/make-agentv442-fixture;
here the same file runs through our target and graders (real processes, no npm)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bat_pipeline.engine.config.project import load_project, suite_tasks
from bat_pipeline.engine.conversation import plan_attempts
from bat_pipeline.engine.results import result_line
from bat_pipeline.engine.verdicts import check_partition
from bat_pipeline.resources.graders import GraderRunner
from bat_pipeline.resources.targets import collect_target_episodes

CASE = Path(__file__).resolve().parent.parent / "engine" / "agentv442"
EXPECTED = json.loads((CASE / "expected.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def ours(tmp_path_factory) -> dict[str, dict]:
    config = load_project(CASE / "eval.yaml")
    assert config.agentv is not None and config.agentv.format == "v4"
    [model] = config.models
    assert model.partition_key == EXPECTED["target"]
    tasks = suite_tasks(config.agentv)
    episodes = []
    collect_target_episodes(
        model.target,
        config.agentv,
        plan_attempts(tasks, 1, []),
        tmp_path_factory.mktemp("agentv442"),
        concurrency=4,
        on_episode=episodes.append,
        log=print,
    )
    checked = check_partition(episodes, tasks, config, options=GraderRunner())
    return {e.task_id: {"line": result_line(e), "rows": {r.criterion: r.value for r in e.scores}} for e in checked}


def test_same_tests(ours):
    assert sorted(ours) == sorted(EXPECTED["tests"])


@pytest.mark.parametrize("test_id", sorted(EXPECTED["tests"]))
def test_same_pass_and_score_per_test(ours, test_id):
    theirs, line = EXPECTED["tests"][test_id], ours[test_id]["line"]
    assert line["error"] is None
    assert line["pass"] is theirs["pass"], line["reason"]
    assert line["score"] == pytest.approx(theirs["score"]), line["reason"]
    for grader, score in theirs["graders"].items():
        assert ours[test_id]["rows"][grader] == pytest.approx(score), grader
