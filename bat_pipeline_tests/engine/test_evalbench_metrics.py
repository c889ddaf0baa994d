"""EvalBench's metric scorers with its formulas (SPEC §12), on turns a harness printed in
EvalBench's envelope and on an A2A agent's spans: agent steps, the latencies, the three token
measures with effective_billed_tokens' price weights, skills_trajectory. Each expected figure
is worked out by hand from EvalBench's scorer named beside it."""

from __future__ import annotations

import json

import pytest

from bat_pipeline.engine.contracts import Episode, Task, ToolStep, Trajectory, Turn
from bat_pipeline.engine.contracts.scenario import ConversationLog, ConversationTurn, Scenario
from bat_pipeline.engine.contracts.trajectory import ModelStep
from bat_pipeline.engine.scorers.harness_metrics import (
    agent_steps,
    effective_billed_tokens,
    end_to_end_latency,
    token_consumption,
    tokens_processed,
    tool_call_latency,
)
from bat_pipeline.engine.scorers.registry import ScoringInput
from bat_pipeline.engine.scorers.skills_trajectory import skills_score, skills_trajectory
from bat_pipeline.engine.scorers.trajectory_matcher import trajectory_matcher

TURN_1 = {
    "response": "Two instances.",
    "stats": {
        "models": {
            "main": {
                "api": {"totalLatencyMs": 1200},
                "tokens": {"input": 100, "candidates": 20, "cached": 500, "total": 620},
            },
            "helper": {
                "api": {"totalLatencyMs": 300},
                "tokens": {"input": 10, "candidates": 5, "cache_creation": 40, "total": 55},
            },
        },
        "tools": {"totalCalls": 3, "totalDurationMs": 450, "byName": {"Read": {}, "cloud-sql__list_instances": {}}},
    },
    "tool_calls": [{"tool_name": "Read"}, {"tool_name": "cloud-sql__list_instances"}, {"tool_name": "Read"}],
}
TURN_2 = {
    "response": "It is RUNNABLE.",
    "stats": {
        "models": {"main": {"api": {"totalLatencyMs": 800}, "tokens": {"input": 50, "candidates": 10, "total": 60}}},
        "tools": {"totalDurationMs": 50, "byName": {"cloud-sql__get_instance": {}}},
    },
    "tool_calls": [{"tool_name": "cloud-sql__get_instance"}],
}
NAMED = {
    name: {}
    for name in (
        "agent_steps",
        "end_to_end_latency",
        "tool_call_latency",
        "token_consumption",
        "tokens_processed",
        "effective_billed_tokens",
        "trajectory_matcher",
    )
}


def printed(*outputs: str, scorers=NAMED, **scenario) -> ScoringInput:
    log = ConversationLog(
        turns=[ConversationTurn(user=f"u{i}", agent="", harness_output=o) for i, o in enumerate(outputs)]
    )
    episode = Episode(model_name="m", task_id="t", aux={"conversation": log.model_dump()})
    return ScoringInput(
        task=Task(id="t", turns=["u0"], scenario=Scenario(scorers=scorers, **scenario)), episode=episode
    )


def raw(rows):
    [row] = rows
    assert row.value is None and not row.gating
    return row.raw, row.reason


def test_the_metrics_of_printed_turns():
    item = printed(json.dumps(TURN_1), "plain text, no JSON", json.dumps(TURN_2))
    # agentsteps.py: totalCalls 3 (turn 1), skipped (turn 2 is no JSON), len(tool_calls) 1 (turn 3).
    assert raw(agent_steps(item)) == (
        4.0,
        "Agent made 4 tool-call step(s). Skipped 1 turn(s) with unparseable agent payloads.",
    )
    # endtoendlatency.py: 450 + 1200 + 300, then 50 + 800.
    assert raw(end_to_end_latency(item)) == (2800.0, "End-to-End latency was 2800.0 ms.")
    assert raw(tool_call_latency(item)) == (500.0, "Tool calls took 500.0 ms.")  # toolcalllatency.py
    assert raw(token_consumption(item)) == (735.0, "Agent consumed 735.0 tokens.")  # 620 + 55 + 60
    # tokensprocessed.py: (100 + 20 + 500) + (10 + 5 + 40) + (50 + 10).
    assert raw(tokens_processed(item))[0] == 735.0
    # effectivebilledtokens.py: 100 + 500·0.1 + 20·5 = 250; 10 + 40·1.25 + 5·5 = 85; 50 + 10·5 = 100.
    assert raw(effective_billed_tokens(item)) == (
        435.0,
        "Effective billed tokens: 435.0 (weighted: input=1.0, cached=0.1, cache_write=1.25, output=5.0).",
    )
    weighted = printed(
        json.dumps(TURN_2), scorers={"effective_billed_tokens": {"output_weight": 2, "input_weight": 0.5}}
    )
    assert raw(effective_billed_tokens(weighted))[0] == 45.0  # 50·0.5 + 10·2


def test_the_trajectory_is_evalbenchs_accumulated_tools():
    """The byName names of each turn (its generators' extract_tools), native tools dropped
    by filter_native_tools' default: expected == actual, Jaccard 100."""
    item = printed(
        json.dumps(TURN_1),
        json.dumps(TURN_2),
        expected_trajectory=["cloud-sql__list_instances", "cloud-sql__get_instance"],
    )
    [main, *_] = trajectory_matcher(item)
    assert main.raw == 100.0 and main.details["actual"] == ["cloud-sql__list_instances", "cloud-sql__get_instance"]


def test_an_a2a_agents_turns_come_from_its_spans():
    turns = [
        Turn(
            user="a", steps=[ModelStep(model="gpt", tokens_in=100, tokens_out=10, tokens_cached=40), ToolStep(name="t")]
        ),
        Turn(user="b", steps=[ModelStep(model="gpt", tokens_in=30, tokens_out=5)]),
    ]
    log = ConversationLog(turns=[ConversationTurn(user="a"), ConversationTurn(user="b")])
    episode = Episode(model_name="m", task_id="t", aux={"conversation": log.model_dump()})
    episode.trace.trajectory = Trajectory(found=True, turns=turns)
    episode.trace.wall_ms = 1234.5
    item = ScoringInput(task=Task(id="t", turns=["a"], scenario=Scenario(scorers=NAMED)), episode=episode)
    assert raw(agent_steps(item))[0] == 1.0
    assert raw(token_consumption(item))[0] == 145.0  # (100 + 10) + (30 + 5)
    assert raw(tokens_processed(item))[0] == 145.0  # fresh 60 + cached 40 + out 10, then 30 + 5
    assert raw(end_to_end_latency(item))[0] == 1234.5  # the conversation's wall time
    assert raw(tool_call_latency(item))[0] is None


def test_metrics_run_only_where_a_run_config_names_them():
    from bat_pipeline.engine.scorers.registry import registered

    scorer = next(s for s in registered() if s.name == "token_consumption")
    assert scorer.applies(printed("x"))
    assert not scorer.applies(printed("x", scorers={"turn_count": {}}))
    assert not scorer.applies(printed("x", scorers=None))


@pytest.mark.parametrize(
    ("expected", "actual", "options", "score"),
    [
        (["a"], ["a", "b"], {}, 50.0),  # Jaccard
        (["a"], ["a", "b"], {"allow_extra_skills": True}, 100.0),  # coverage
        (["a", "b"], ["b"], {"allow_extra_skills": True}, 50.0),
        (["a", "b"], ["b", "a"], {"enforce_order": True}, 0.0),  # two substitutions of two
        ([], [], {}, 100.0),
        ([], ["x"], {"allow_extra_skills": True}, 100.0),
        (["a"], ["pre-a"], {"ignore_prefix": "pre-"}, 100.0),
    ],
)
def test_skills_score(expected, actual, options, score):
    assert skills_score(expected, actual, **options)[0] == pytest.approx(score)


def test_skills_trajectory_reads_the_activated_skills():
    """gemini_cli's activate_skill parameters (stats.tools.byName) and claude's Skill calls."""
    gemini = {
        "response": "",
        "stats": {"tools": {"byName": {"activate_skill": {"parameters": [{"skill_name": "lifecycle"}]}}}},
    }
    claude = {"response": "", "stats": {}, "tool_calls": [{"tool_name": "Skill", "parameters": {"skill": "data"}}]}
    item = printed(
        json.dumps(gemini), json.dumps(claude), scorers={"skills_trajectory": {}}, expected_skills=["lifecycle", "data"]
    )
    [row] = skills_trajectory(item)
    assert row.raw == 100.0 and row.details["actual"] == ["lifecycle", "data"] and row.passed
    both = printed("x", scorers={"skills_trajectory": {"enforce_order": True, "allow_extra_skills": True}})
    [refused] = skills_trajectory(both)
    assert refused.raw is None and "Cannot set both" in refused.details["error"]


@pytest.mark.parametrize(
    ("answer", "passed"),
    [
        ('{"rubric_passed": true, "reasoning": "it did"}', True),
        ('{"rubric_passed": false, "reasoning": "no"}', False),
        ("1/1 The agent reported the state.\nmore", True),  # binaryrubricscorer.py: (\d+)/1 on the first line
        ("0/1 It did not.", False),
        ("PASS: all good", True),
        ("Verdict: fail", False),
    ],
)
def test_binary_rubric_answers(answer, passed):
    from bat_pipeline.engine.scorers.evalbench_llm import parse_verdict

    assert parse_verdict(answer)[0] is passed


def test_a_scenario_without_a_rubric_passes_unasked():
    import asyncio

    from bat_pipeline.engine.scorers.evalbench_llm import binary_rubric_scorer

    [row] = asyncio.run(binary_rubric_scorer(printed("x", scorers={"binary_rubric_scorer": {}}), judge=None))
    assert (row.criterion, row.raw) == ("binary_rubric_scorer_0", 100.0)
    assert row.reason == "No rubric defined for this scenario. Defaulting to PASS."


def test_skills_best_practices_grades_are_read_whole_and_clamped():
    from bat_pipeline.engine.scorers.skills_best_practices import parse_grade

    answer = json.dumps(
        {
            "score": 130,
            "clarity": {"score": 20, "comment": "ok"},
            "progressive_disclosure": {"score": 5, "comment": "x"},
        }
    )
    score, text = parse_grade(answer)
    assert score == 100.0 and "progressive_disclosure: 5/20" in text  # the whole answer, not a category
    with pytest.raises(ValueError):
        parse_grade('{"score": "high", "progressive_disclosure": {}}')


def test_skills_best_practices_finds_skill_md_in_any_case(tmp_path):
    from bat_pipeline.engine.scorers.skills_best_practices import find_skill_md

    (tmp_path / "My-Skill").mkdir()
    (tmp_path / "My-Skill" / "SKILL.md").write_text("x")
    assert find_skill_md("my-skill", tmp_path) == tmp_path / "My-Skill" / "SKILL.md"
    assert find_skill_md("other", tmp_path) is None and find_skill_md("x", None) is None
