"""AgentV graders as scorers and the pass rule (SPEC §12, §13), on hand-made episodes: the
text checks, how a script grader's output is read, and the weighted, required, threshold
rule with its one gating row."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from bat_pipeline.engine.agentv_rule import RULE
from bat_pipeline.engine.contracts import Episode, Task
from bat_pipeline.engine.contracts.agentv import AgentvCase, Assertion, Message
from bat_pipeline.engine.contracts.tasks import Expected
from bat_pipeline.engine.results import index_lines, result_line
from bat_pipeline.engine.scorers.script import read_verdict
from bat_pipeline.engine.verdicts import check_partition


def case(*assertions: Assertion, fmt="seed", threshold=0.8, expected=None) -> AgentvCase:
    return AgentvCase(
        id="t",
        prompt="p",
        input=[Message(role="user", content="p")],
        assertions=list(assertions),
        expected_output=expected or [],
        threshold=threshold,
        format=fmt,
        eval_file=Path("/tmp/e.yaml"),
    )


def grade(answer: str, the_case: AgentvCase, runner=None) -> Episode:
    task = Task(id="t", turns=["p"], expected=Expected(status=None), agentv=the_case)
    episode = Episode(
        model_name="tgt", task_id="t", final_status="completed", final_output=answer, aux={"attempt_index": 0}
    )
    return check_partition([episode], [task], options=runner)[0]


def a(type_: str, value=None, **fields) -> Assertion:
    return Assertion(name=fields.pop("name", type_), type=type_, value=value, **fields)


@pytest.mark.parametrize(
    "assertion, answer, held",
    [
        (a("contains", "CLEAR"), "decision CLEAR", True),
        (a("contains", "clear"), "decision CLEAR", False),
        (a("icontains", "clear"), "decision CLEAR", True),
        (a("contains", "CLEAR", negate=True), "decision CLEAR", False),
        (a("contains-any", ["X", "CLEAR"]), "CLEAR", True),
        (a("contains-all", ["X", "CLEAR"]), "CLEAR", False),
        (a("icontains-all", ["x", "clear"]), "X CLEAR", True),
        (a("starts-with", "dec"), "  decision", True),
        (a("ends-with", "sion"), "decision \n", True),
        (a("regex", r"^dec\w+$"), "decision", True),
        (a("regex", "DEC", options={"flags": "i"}), "decision", True),
        (a("equals", "ok"), " ok\n", True),
        (a("equals", "ok"), "okay", False),
        (a("is-json"), '{"a": 1}', True),
        (a("is-json"), "{a: 1}", False),
        (a("json-subset", {"d": "C", "n": {"x": [1]}}), '{"d": "C", "n": {"x": [1, 2]}, "e": 0}', True),
        (a("json-subset", {"d": "C"}), '{"d": "R"}', False),
    ],
)
def test_text_checks(assertion, answer, held):
    rows = [r for r in grade(answer, case(assertion)).scores if r.scorer == "text"]
    assert len(rows) == 1 and rows[0].passed is held and rows[0].value == (1.0 if held else 0.0), rows[0].reason
    assert rows[0].gating is False


def test_json_subset_defaults_to_the_structured_expected_output():
    expected = [Message(role="assistant", content={"decision": "CLEAR"})]
    episode = grade('{"decision": "CLEAR", "id": 1}', case(a("json-subset"), expected=expected))
    assert episode.verdict.passed


def test_a_bad_regex_is_a_grader_error_not_a_failure():
    episode = grade("x", case(a("regex", "(")))
    rule = episode.scores[-1]
    assert rule.scorer == RULE and rule.gating and rule.passed is None and "invalid regex" in rule.reason
    assert episode.verdict.passed is False
    assert result_line(episode)["error"].startswith("regex: invalid regex")


@pytest.mark.parametrize(
    "graders, answer, score, passed",
    [
        # weighted mean 2/3 < 0.8
        ([a("contains", "a", weight=2), a("contains", "z", name="z")], "a", 2 / 3, False),
        ([a("contains", "a", weight=4), a("contains", "z", name="z")], "a", 0.8, True),
        # a failed required grader makes the score 0
        ([a("contains", "a", weight=9), a("contains", "z", name="z", required=True)], "a", 0.0, False),
        # a numeric required / min_score lowers the bar of that grader only
        ([a("contains", "a", weight=9), a("contains", "z", name="z", required=True, min_score=0.0)], "a", 0.9, True),
    ],
)
def test_the_pass_rule(graders, answer, score, passed):
    episode = grade(answer, case(*graders))
    gating = [r for r in episode.scores if r.gating]
    assert len(gating) == 1 and gating[0].scorer == RULE
    assert gating[0].value == pytest.approx(score) and gating[0].passed is passed
    assert episode.verdict.passed is passed
    line = result_line(episode)
    assert line["pass"] is passed and line["score"] == pytest.approx(score) and len(line["checks"]) == len(graders)


def test_no_graders_score_zero_and_a_missing_scorer_is_an_error():
    assert grade("a", case()).verdict.passed is False
    episode = grade("a", case(a("mystery", name="calls")))
    assert "calls: no scorer graded this mystery assertion" in episode.scores[-1].reason
    assert episode.scores[-1].passed is None and episode.verdict.passed is False


@dataclass
class Ended:
    exit_code: int | None = 0
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    start_error: str | None = None


SCRIPT = a("script", name="s", required=True)


@pytest.mark.parametrize(
    "fmt, ended, value, passed, error",
    [
        ("seed", Ended(stdout='{"pass": true, "score": 1, "reason": "ok", "checks": []}'), 1.0, True, None),
        ("seed", Ended(stdout='{"pass": false, "score": 0.9}'), 0.9, False, None),
        ("seed", Ended(stdout='{"score": 0.5, "assertions": [{"text": "x", "passed": true}]}'), 0.5, False, None),
        ("seed", Ended(stdout='{"score": 0.5, "hits": ["a"], "misses": ["b"], "reasoning": "r"}'), 0.5, False, None),
        (
            "seed",
            Ended(stdout='{"checks": [{"text": "a", "pass": true}, {"text": "b", "pass": false}]}'),
            0.5,
            False,
            None,
        ),
        ("seed", Ended(), 1.0, True, None),
        ("seed", Ended(exit_code=1), 0.0, False, None),
        ("seed", Ended(exit_code=1, stderr="Traceback: boom"), None, None, "boom"),
        ("seed", Ended(stdout="not json"), None, None, "unreadable"),
        ("seed", Ended(timed_out=True, exit_code=None), None, None, "timed out"),
        ("seed", Ended(exit_code=None, start_error="nope: no such file"), None, None, "could not start"),
        ("v4", Ended(stdout='{"pass": false, "score": 0.9}'), 0.9, True, None),  # 4.42 reads only the score
        ("v4", Ended(exit_code=1, stderr="boom"), 0.0, False, None),  # 4.42: non-zero exit scores 0
        ("v4", Ended(stdout='log line\n{"score": 1}'), 1.0, True, None),
    ],
)
def test_script_verdicts(fmt, ended, value, passed, error):
    row = read_verdict(SCRIPT, case(SCRIPT, fmt=fmt), ended)
    assert (row.value, row.passed) == (value, passed), row.reason
    assert (error in row.details.get("error", "")) if error else "error" not in row.details


class Runner:
    def __init__(self, ended: Ended) -> None:
        self.ended, self.calls = ended, []

    def run_script(self, command, *, cwd, stdin, timeout_s):
        self.calls.append((command, cwd, stdin, timeout_s))
        return self.ended


def test_script_grader_gets_both_generations_of_fields():
    import json

    runner = Runner(Ended(stdout='{"pass": true, "score": 1}'))
    grader = a("script", name="s", options={"command": ["python3", "g.py"], "cwd": "sub", "timeout_s": 7})
    episode = grade("answer", case(grader), runner)
    assert episode.verdict.passed
    command, cwd, stdin, timeout = runner.calls[0]
    assert command == ["python3", "g.py"] and cwd == Path("/tmp/sub") and timeout == 7
    sent = json.loads(stdin)
    for field in (
        "test_id",
        "target",
        "input",
        "expected_output",
        "criteria",
        "output",
        "output_messages",
        "tool_calls",
        "tokens",
        "wall_ms",
        "messages",
        "input_files",
        "metadata",
        "trace_summary",
        "token_usage",
        "cost_usd",
        "duration_ms",
        "start_time",
        "end_time",
        "config",
    ):
        assert field in sent, field
    assert sent["output"] == "answer" and sent["target"] == "tgt" and sent["input"][0]["content"] == "p"


def test_index_lines_say_the_execution_status():
    ok = grade("a", case(a("contains", "a")))
    bad = grade("b", case(a("contains", "a")))
    broken = grade("a", case(a("regex", "(")))
    statuses = [line["execution_status"] for line in index_lines([ok, bad, broken], suite="s")]
    assert statuses == ["ok", "quality_failure", "execution_error"]
