"""AgentV LLM graders (`llm-rubric`, 4.x `llm-grader`, `rubrics`, plain strings) asked through
the real judge client against the test judge server: the question, the answer's reading
with retries, grader errors, and the pass rule computed again after the judge."""

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
from bat_pipeline.resources.judge import JudgeClient, judge_episodes
from bat_pipeline_tests.support.judge_server import Reply, error, serve_judge

ENV = {"OPENAI_API_KEY": "sk-agentv-graders-key-9z8y"}
TARGET = {"provider": "cli", "command": "python3 run.py {PROMPT}"}


def grade_reply(score: float, passed: bool, reasoning: str = "as the criteria ask") -> Reply:
    return Reply(content=json.dumps({"reasoning": reasoning, "score": score, "passed": passed}))


@pytest.fixture(scope="module")
def started():
    with serve_judge() as running:
        yield running


@pytest.fixture
def server(started):
    """The module's judge server, its record cleared, grading 1.0 unless a test says otherwise."""
    started.reset()
    started.script(default=grade_reply(1.0, True))
    return started


def write(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def seed_file(folder: Path, server, graders: list) -> Path:
    return write(
        folder / "e.yaml",
        {
            "providers": {"local": TARGET},
            "judge": {"provider": "openai", "model": "grader-1", "base_url": server.base_url, "max_retries": 2},
            "tests": [
                {
                    "id": "t",
                    "criteria": "Says the decision.",
                    "vars": {
                        "input": "Decide case 7",
                        "expected_output": [{"role": "assistant", "content": {"decision": "CLEAR"}}],
                    },
                    "assert": graders,
                }
            ],
        },
    )


def judged(eval_file: Path, answer: str = '{"decision": "CLEAR"}'):
    """The test's episode checked (deterministic graders), then judged: (before, after)."""
    config = load_project(eval_file)
    tasks = suite_tasks(config.agentv)
    episode = answered_episode(
        tasks[0],
        "local",
        0,
        answer_from_record({"id": "t", "text": answer}, "seed"),
        wall_ms=1.0,
        started_at="2026-01-01T00:00:00Z",
    )
    [checked] = check_partition([episode], tasks, config)
    before = checked.model_copy(deep=True)
    client = JudgeClient(config.judge, environ=ENV, backoff_base_s=0.0)
    result = asyncio.run(judge_episodes(client, [checked], tasks))
    return before, checked, result


def test_the_judge_grades_and_the_verdict_is_computed_after_it(server, tmp_path):
    server.script(grade_reply(0.2, False, "names no decision"), default=grade_reply(1.0, True))
    eval_file = seed_file(tmp_path, server, ["The decision is CLEAR.", {"type": "contains", "value": "CLEAR"}])
    before, after, result = judged(eval_file)
    # Before the judge: the rule waits for it.
    rule = before.scores[-1]
    assert rule.scorer == RULE and rule.passed is None and rule.details["pending"] == ["llm-rubric"]
    assert "waiting for the judge to grade llm-rubric" in rule.reason and not before.verdict.passed
    # After: the judge's row weighs in; a seed grader is required, so a failed one makes it 0.
    [row] = [r for r in after.scores if r.scorer == "llm_grader"]
    assert (row.criterion, row.value, row.passed, row.judge) == ("llm-rubric", 0.2, False, "openai:grader-1")
    assert row.reason == "names no decision" and row.details["assertion"] == "llm-rubric"
    rule = after.scores[-1]
    assert rule.scorer == RULE and rule.value == 0.0 and "required grader failed: llm-rubric" in rule.reason
    assert after.verdict.passed is False and after.qualitative_scores is None
    assert result.rows[0] == [row]
    # The question: our words, the criteria, the input, the expected output, the answer.
    [body] = server.bodies()
    system, user = (m["content"] for m in body["messages"])
    assert "GRADING CRITERIA" in system and '"passed"' in system
    assert user.splitlines() == [
        "Grading criteria: The decision is CLEAR.",
        "Input: Decide case 7",
        'Expected output: {"decision": "CLEAR"}',
        'Answer to grade: {"decision": "CLEAR"}',
    ]
    assert body["response_format"]["json_schema"]["schema"]["required"] == ["reasoning", "score", "passed"]


def test_an_unreadable_answer_is_asked_again(server, tmp_path):
    server.script(Reply(content="I think it is fine."), Reply(content='{"score": 7}'), default=grade_reply(0.9, True))
    _, after, result = judged(seed_file(tmp_path, server, ["Says CLEAR."]))
    [row] = [r for r in after.scores if r.scorer == "llm_grader"]
    assert row.value == 0.9 and len(server.requests) == 3 and result.stats.retries == 2
    assert after.verdict.passed is True and after.scores[-1].value == 0.9


def test_a_judge_that_fails_leaves_a_grader_error(server, tmp_path):
    server.script(default=error(500, "judge down"))
    _, after, result = judged(seed_file(tmp_path, server, ["Says CLEAR.", {"type": "contains", "value": "CLEAR"}]))
    assert result.stats.failures == 1
    [row] = [r for r in after.scores if r.scorer == "llm_grader"]
    assert row.value is None and "the judge gave no grade: HTTP 500" in row.details["error"]
    rule = after.scores[-1]
    assert rule.passed is None and rule.value is None and "llm-rubric: the judge gave no grade" in rule.reason
    assert after.verdict.passed is False


def test_4x_llm_graders_prompt_files_and_rubric_items(server, tmp_path):
    (tmp_path / "rubric.md").write_text("The answer names the decision and the case number.\n", encoding="utf-8")
    judge = {
        "name": "judge",
        "provider": "openai",
        "model": "grader-4",
        "base_url": server.base_url,
        "api_key": "${{ OPENAI_API_KEY }}",
    }
    write(
        tmp_path / ".agentv" / "targets.yaml",
        {"targets": [{"name": "local", **TARGET, "judge_target": "judge"}, judge]},
    )
    eval_file = write(
        tmp_path / "eval.yaml",
        {
            "execution": {"target": "local"},
            "tests": [
                {
                    "id": "t",
                    "input": "Decide case 7",
                    "criteria": "Decides.",
                    "assertions": [
                        {"name": "from-file", "type": "llm-grader", "prompt": "file://rubric.md"},
                        {
                            "name": "items",
                            "type": "rubrics",
                            "criteria": ["Says CLEAR", {"id": "n", "outcome": "Names case 7", "weight": 2}],
                        },
                        {"name": "plain", "type": "llm_grader"},
                    ],
                }
            ],
        },
    )
    config = load_project(eval_file)
    assert config.judge.model == "grader-4" and config.judge.api_key_env == "OPENAI_API_KEY"
    assert config.judge.base_url == server.base_url and config.evaluation.qualitative
    server.script(default=grade_reply(0.85, False))
    tasks = suite_tasks(config.agentv)
    episode = answered_episode(
        tasks[0],
        "local",
        0,
        answer_from_record({"id": "t", "text": "CLEAR"}, "v4"),
        wall_ms=1.0,
        started_at="2026-01-01T00:00:00Z",
    )
    [checked] = check_partition([episode], tasks, config)
    asyncio.run(judge_episodes(JudgeClient(config.judge, environ=ENV), [checked], tasks))
    criteria = sorted(b["messages"][1]["content"].splitlines()[0] for b in server.bodies())
    assert criteria == [
        "Grading criteria: - Says CLEAR",
        "Grading criteria: Decides.",
        "Grading criteria: The answer names the decision and the case number.",
    ]
    assert any("- Names case 7 (weight 2)" in b["messages"][1]["content"] for b in server.bodies())
    # 4.x: a grader passes at its mark, as AgentV decides, whatever the judge's `passed`.
    rows = [r for r in checked.scores if r.scorer == "llm_grader"]
    assert [(r.value, r.passed) for r in rows] == [(0.85, True)] * 3
    assert checked.verdict.passed is True


RANGED = {
    "type": "rubrics",
    "criteria": [
        {
            "id": "factual_accuracy",
            "weight": 2.0,
            "min_score": 0.8,
            "score_ranges": {0: "Major factual errors.", 3: "One clear error.", 8: "Accurate, minor omissions."},
        },
        {
            "id": "brevity",
            "outcome": "Under 50 words",
            "score_ranges": [
                {"score_range": [0, 4], "outcome": "Too long."},
                {"score_range": [5, 10], "outcome": "Short and clear."},
            ],
        },
    ],
}


def checks_reply(accuracy: int, brevity: int) -> Reply:
    checks = [{"id": "factual_accuracy", "score": accuracy, "reasoning": "facts"}, {"id": "brevity", "score": brevity}]
    return Reply(content=json.dumps({"checks": checks, "overall_reasoning": "summed up"}))


@pytest.mark.parametrize(
    ("accuracy", "brevity", "value", "passed"),
    [
        (8, 5, (0.8 * 2 + 0.5) / 3, False),  # below the grader's mark of 0.8
        (7, 10, 0.8, False),  # at the mark, but factual_accuracy is below its min_score
        (9, 9, 0.9, True),
    ],
)
def test_score_ranges_items_are_scored_0_to_10_each(server, tmp_path, accuracy, brevity, value, passed):
    """As AgentV 4.42.4's analytic rubrics: each item 0-10 over its bands, score / 10 weighted."""
    write(tmp_path / ".agentv" / "targets.yaml", {"targets": [{"name": "local", **TARGET, "judge_target": "j"}]})
    judge = {"name": "j", "provider": "openai", "model": "grader-5", "base_url": server.base_url}
    targets = yaml.safe_load((tmp_path / ".agentv" / "targets.yaml").read_text())["targets"] + [judge]
    write(tmp_path / ".agentv" / "targets.yaml", {"targets": targets})
    tests = [{"id": "t", "input": "Summarise", "criteria": "An accurate summary.", "assertions": [RANGED]}]
    config = load_project(write(tmp_path / "eval.yaml", {"execution": {"target": "local"}, "tests": tests}))
    server.script(default=checks_reply(accuracy, brevity))
    tasks = suite_tasks(config.agentv)
    record = answer_from_record({"id": "t", "text": "Ice melts."}, "v4")
    episode = answered_episode(tasks[0], "local", 0, record, wall_ms=1.0, started_at="2026-01-01T00:00:00Z")
    [checked] = check_partition([episode], tasks, config)
    asyncio.run(judge_episodes(JudgeClient(config.judge, environ=ENV), [checked], tasks))
    [row] = [r for r in checked.scores if r.scorer == "llm_grader"]
    assert row.value == pytest.approx(value) and row.passed is passed and row.reason == "summed up"
    texts = [c["text"] for c in row.details["checks"]]
    assert texts[0] == f"[factual_accuracy] factual_accuracy - {accuracy}/10 (" + (
        "Accurate, minor omissions.)" if accuracy >= 8 else "One clear error.)"
    )
    [body] = server.bodies()
    user = body["messages"][1]["content"]
    assert "- factual_accuracy (weight 2) [needs at least 8 of 10]" in user and "    0-2: Major factual errors." in user
    assert "    8-10: Accurate, minor omissions." in user and "- brevity: Under 50 words" in user
    assert body["response_format"]["json_schema"]["schema"]["required"] == ["checks", "overall_reasoning"]


@pytest.mark.parametrize(
    ("ranges", "message"),
    [
        ({3: "a", 5: "b"}, "the score_ranges map starts at 0, got 3"),
        ([{"score_range": [0, 6], "outcome": "a"}], r"the bands leave out 7, 8, 9, 10"),
        ([{"score_range": [0, 6], "outcome": "a"}, {"score_range": [5, 10], "outcome": "b"}], "overlap"),
        ([{"score_range": [0, 10]}], r"the band \[0, 10\] has no outcome"),
    ],
)
def test_score_ranges_that_do_not_cover_0_to_10_are_refused_by_name(tmp_path, ranges, message):
    from bat_pipeline.engine.datasets.agentv import load_suite
    from bat_pipeline.engine.errors import InputError

    write(tmp_path / ".agentv" / "targets.yaml", {"targets": [{"name": "default", **TARGET}]})
    grader = {"type": "rubrics", "criteria": [{"id": "x", "score_ranges": ranges}]}
    path = write(tmp_path / "eval.yaml", {"tests": [{"id": "t", "input": "q", "assertions": [grader]}]})
    with pytest.raises(InputError, match=message) as caught:
        load_suite(path)
    assert caught.value.field.startswith("assertions[0].criteria[0].score_ranges")
    assert "tests[0] (id 't')" in str(caught.value)


def test_the_scripted_example_judge_answers_score_range_questions(tmp_path):
    """The example judge (what the corpus runs against) reads our score-range question and
    answers in the shape the grader reads: a check per item, its terms found in the answer."""
    from bat_pipeline.engine.datasets import agentv_score_ranges as score_ranges
    from bat_pipeline.engine.datasets.agentv import load_suite
    from bat_pipeline.engine.scorers.llm_grader import grading_messages, parse_checks
    from bat_pipeline.example.scripted_llm.judge import ranges_answer

    write(tmp_path / ".agentv" / "targets.yaml", {"targets": [{"name": "default", **TARGET}]})
    tests = [{"id": "t", "input": "Summarise", "criteria": "An accurate summary.", "assertions": [RANGED]}]
    judge = {"provider": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1"}
    [case] = load_suite(write(tmp_path / "eval.yaml", {"judge": judge, "tests": tests})).tests
    [grader] = case.assertions
    question = "\n".join(m["content"] for m in grading_messages(grader, case, "Accurate, minor omissions; Short."))
    checks, _ = parse_checks(json.dumps(ranges_answer(question)))
    assert [c["id"] for c in checks] == ["factual_accuracy", "brevity"]
    score, below, rows = score_ranges.score_checks(grader.options[score_ranges.KEY], checks)
    assert [c["score"] for c in checks] == [10, 3] and score == pytest.approx(2.3 / 3) and not below
    assert [r["pass"] for r in rows] == [True, False]
