"""The rubrics: which ones a task gets, their prompts, and reading the judge's answers."""

from __future__ import annotations

import json

import pytest

from bat_pipeline.engine.contracts import RUBRICS, JudgeSettings
from bat_pipeline.engine.rubrics import (
    JSON_SCHEMA,
    JudgeAnswerError,
    build_messages,
    parse_answer,
    rubrics_for,
    skipped_rubrics,
)
from bat_pipeline_tests.support.judge_server import weather_episode, weather_task


def settings(**over) -> JudgeSettings:
    return JudgeSettings(**{"provider": "openai", "model": "judge-1", **over})


# --- which rubrics ---------------------------------------------------------------------


def test_full_mode_asks_all_four_when_tools_are_expected():
    assert rubrics_for(weather_task(), "full") == list(RUBRICS)
    assert skipped_rubrics(weather_task(), "full") == {}


def test_tool_call_is_skipped_without_expected_tool_calls():
    task = weather_task(tool_calls=False)
    assert "tool_call" not in rubrics_for(task, "full")
    assert skipped_rubrics(task, "full")["tool_call"].startswith("the task expects no tool calls")


def test_outcome_mode_asks_only_task_completion():
    assert rubrics_for(weather_task(), "outcome") == ["task_completion"]
    assert set(skipped_rubrics(weather_task(), "outcome")) == {"relevance", "hallucination", "tool_call"}


# --- prompts ---------------------------------------------------------------------------


def test_messages_hold_the_request_answer_and_steps():
    messages = build_messages("task_completion", weather_task(), weather_episode(), settings())
    assert [m["role"] for m in messages] == ["system", "user"]
    system, user = messages[0]["content"], messages[1]["content"]
    assert "COMPLETION" in system and '"score"' in system
    assert "What is the weather in Paris?" in user
    assert "Expected outcome: Reports that Paris is sunny at 21 C" in user
    assert "Final answer: Paris: sunny, 21 C." in user
    assert "get_weather" in user and "sunny, 21 C" in user  # the rendered trajectory


def test_tool_call_prompt_lists_expected_calls():
    user = build_messages("tool_call", weather_task(), weather_episode(), settings())[1]["content"]
    assert 'get_weather with arguments including {"city": "Paris"}' in user


def test_relevance_prompt_does_not_show_the_expected_outcome():
    user = build_messages("relevance", weather_task(), weather_episode(), settings())[1]["content"]
    assert "Expected outcome" not in user


def test_operator_prompt_is_added_as_context():
    note = "Count an answer in Fahrenheit as complete."
    with_note = build_messages(
        "task_completion", weather_task(), weather_episode(), settings(prompts={"task_completion": note})
    )
    without = build_messages("task_completion", weather_task(), weather_episode(), settings())
    assert note in with_note[0]["content"] and note not in without[0]["content"]
    other = build_messages("relevance", weather_task(), weather_episode(), settings(prompts={"task_completion": note}))
    assert note not in other[0]["content"]


def test_outcome_mode_shows_no_steps_and_is_lenient():
    messages = build_messages("task_completion", weather_task(), weather_episode(), settings(mode="outcome"))
    assert "lenient" in messages[0]["content"]
    assert "Recorded steps" not in messages[1]["content"]
    assert "Final answer: Paris: sunny, 21 C." in messages[1]["content"]


def test_events_are_shown_when_no_spans():
    user = build_messages("hallucination", weather_task(), weather_episode(found=False), settings())[1]["content"]
    assert "completed" in user and "A2A" in user


def test_trajectory_respects_the_budget():
    long = weather_episode(answer_text="sunny " * 5000)
    user = build_messages("hallucination", weather_task(), long, settings(max_trajectory_chars=2000))[1]["content"]
    assert len(user) < 2000 + 1000 + 600


def test_prompts_are_deterministic():
    a = build_messages("relevance", weather_task(), weather_episode(), settings())
    b = build_messages("relevance", weather_task(), weather_episode(), settings())
    assert a == b


def test_unknown_rubric_is_refused():
    with pytest.raises(ValueError, match="unknown rubric"):
        build_messages("style", weather_task(), weather_episode(), settings())


def test_schema_requires_reasoning_and_score():
    assert JSON_SCHEMA["required"] == ["reasoning", "score"]
    assert JSON_SCHEMA["additionalProperties"] is False


# --- answers ---------------------------------------------------------------------------


def test_plain_json():
    assert parse_answer('{"reasoning": "fine", "score": 0.75}') == (0.75, "fine")


def test_prose_fences_and_think():
    text = (
        '<think>maybe {"score": 0.1}</think>\nHere is my verdict:\n```json\n'
        '{"reasoning": "uses {braces} in text", "score": 1}\n```\nThanks.'
    )
    assert parse_answer(text) == (1.0, "uses {braces} in text")


def test_last_object_with_a_score_wins():
    text = '{"score": 0.2, "reasoning": "draft"} then {"note": 1} and finally {"reasoning": "final", "score": 0.9}'
    assert parse_answer(text) == (0.9, "final")


def test_nested_score_object():
    assert parse_answer('{"result": {"reasoning": "deep", "score": "0.5"}}') == (0.5, "deep")


def test_object_inside_broken_braces():
    assert parse_answer('{ oops {"reasoning": "ok", "score": 0.3} ') == (0.3, "ok")


def test_missing_reasoning_is_empty():
    assert parse_answer('{"score": 0}') == (0.0, "")


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "empty"),
        ("I think it is good.", "no JSON object"),
        ('{"reasoning": "x"}', "no JSON object"),
        ('{"reasoning": "x", "score": 7}', "outside 0..1"),
        ('{"reasoning": "x", "score": -0.1}', "outside 0..1"),
        ('{"reasoning": "x", "score": "high"}', "not a number"),
        ('{"reasoning": "x", "score": true}', "not a number"),
        ('{"reasoning": "x", "score": NaN}', "not a number"),
        ('<think>{"score": 0.5}</think> no answer', "no JSON object"),
    ],
)
def test_unusable_answers_raise(text, message):
    with pytest.raises(JudgeAnswerError, match=message):
        parse_answer(text)


def test_schema_answer_round_trips():
    answer = {"reasoning": "r", "score": 0.4}
    assert parse_answer(json.dumps(answer)) == (0.4, "r")
