"""The judge's rubrics (SPEC §7): which ones a task gets, their prompts, and reading answers.

Pure: no network, no clock. Each rubric is one question to the judge, answered as
`{"reasoning": str, "score": number 0..1}`; SCORE_FIELDS maps a rubric to its episode field.

Scores outside 0..1 are refused, not clamped: a judge answering 7 has most likely used
another scale (1–10), and clamping it to 1.0 would record a confident wrong number. The
refusal becomes a null score with the reason, like any other unusable answer.
"""

from __future__ import annotations

import json
import math
from typing import Any

from bat_pipeline.engine.contracts import RUBRICS, SCORE_FIELDS, Episode, JudgeSettings, Task
from bat_pipeline.engine.judge_answers import after_thinking, json_objects
from bat_pipeline.engine.judge_view import render_episode_for_judge

__all__ = [
    "JSON_SCHEMA",
    "RUBRICS",
    "SCORE_FIELDS",
    "JudgeAnswerError",
    "answer_object",
    "build_messages",
    "checked_score",
    "parse_answer",
    "rubrics_for",
    "skipped_rubrics",
]

JSON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reasoning": {
            "type": "string",
            "description": "The evidence for the score, citing steps or quotes; a few sentences.",
        },
        "score": {
            "type": "number",
            "description": "From 0 (worst) to 1 (best).",
        },
    },
    "required": ["reasoning", "score"],
    "additionalProperties": False,
}
"""The answer's shape. No `minimum`/`maximum`: OpenAI's strict structured output has not
always accepted them; the range is stated in the prompt and enforced by parse_answer."""

FINAL_ANSWER_LIMIT_SHARE = 0.5
"""The request and the final answer may each take this share of `max_trajectory_chars`."""


class JudgeAnswerError(ValueError):
    """The judge's answer holds no usable score."""


def rubrics_for(task: Task, mode: str) -> list[str]:
    """The rubrics to ask the judge for this task, in RUBRICS order.

    `outcome` mode: only `task_completion`. `full` mode: all four, except `tool_call` when
    the task expects no tool call (see skipped_rubrics)."""
    if mode == "outcome":
        return ["task_completion"]
    return [r for r in RUBRICS if r != "tool_call" or task.expected.tool_calls]


def skipped_rubrics(task: Task, mode: str) -> dict[str, str]:
    """Rubric → why it is not asked for this task (recorded as `skipped: <why>`)."""
    if mode == "outcome":
        return {r: "judge mode is outcome (only task completion is judged)" for r in RUBRICS if r != "task_completion"}
    if not task.expected.tool_calls:
        return {"tool_call": "the task expects no tool calls"}
    return {}


def build_messages(rubric: str, task: Task, episode: Episode, settings: JudgeSettings) -> list[dict[str, str]]:
    """The judge's prompt for one rubric: `[{"role": "system", ...}, {"role": "user", ...}]`.

    The operator's `settings.prompts[rubric]` is appended to the system message as extra
    context. In `outcome` mode task completion is judged from the request and the final
    answer only; the other modes show the trajectory rendered by judge_view within
    `settings.max_trajectory_chars`."""
    if rubric not in RUBRICS:
        raise ValueError(f"unknown rubric '{rubric}' (known: {', '.join(RUBRICS)})")
    outcome = settings.mode == "outcome" and rubric == "task_completion"
    criteria = _OUTCOME_CRITERIA if outcome else _CRITERIA[rubric]
    system = "\n\n".join([criteria, _ANSWER_FORMAT])
    note = (settings.prompts.get(rubric) or "").strip()
    if note:
        system += "\n\n" + _OPERATOR_NOTE + "\n" + note
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": _case(rubric, task, episode, settings, with_steps=not outcome)},
    ]


def parse_answer(text: str) -> tuple[float, str]:
    """`(score, reasoning)` from a judge's answer.

    Reads the last JSON object holding a `score` (at any depth) in the text after the last
    `</think>`; prose, code fences and braces inside strings around it are fine. A numeric
    string score ("0.8") is accepted. Raises JudgeAnswerError when there is no such object
    or the score is not a number within 0..1 (see the module docstring)."""
    found = answer_object(text)
    score = _score(found["score"])
    reasoning = found.get("reasoning")
    if reasoning is None:
        reasoning = ""
    elif not isinstance(reasoning, str):
        reasoning = json.dumps(reasoning, ensure_ascii=False)
    return score, reasoning.strip()


def answer_object(text: str) -> dict[str, Any]:
    """The last JSON object holding a `score` (at any depth) in the text after the last
    `</think>` (parse_answer); JudgeAnswerError when there is none. Its score unchecked."""
    if not isinstance(text, str) or not text.strip():
        raise JudgeAnswerError("the judge's answer is empty")
    said = after_thinking(text)
    found: dict[str, Any] | None = None
    for obj in json_objects(said):
        holder = _score_holder(obj)
        if holder is not None:
            found = holder
    if found is None:
        raise JudgeAnswerError(f"no JSON object with a 'score' in the judge's answer: {_preview(said)}")
    return found


def answer_with(text: str, key: str) -> dict[str, Any]:
    """The last top-level JSON object holding `key` in the text after the last `</think>`;
    JudgeAnswerError when there is none."""
    if not isinstance(text, str) or not text.strip():
        raise JudgeAnswerError("the judge's answer is empty")
    said = after_thinking(text)
    found = [obj for obj in json_objects(said) if key in obj]
    if not found:
        raise JudgeAnswerError(f"no JSON object with '{key}' in the judge's answer: {_preview(said)}")
    return found[-1]


def checked_score(raw: Any) -> float:
    """A judge's score as a number within 0..1, else JudgeAnswerError (module docstring)."""
    return _score(raw)


# --- prompts ---------------------------------------------------------------------------
# The first paragraph of each names the quality judged; the scripted example judge reads
# the rubric from the prompt's opening, so openings avoid naming the other rubrics.

_CRITERIA = {
    "relevance": (
        "You are reviewing a conversation between a user and an AI agent, and you score one "
        "quality of it: RELEVANCE. Does the agent stay on the subject the user raised?\n\n"
        "Look at every reply the agent gave. A relevant reply deals with what the user asked "
        "in that turn: it answers it, works on it, or asks a pertinent question to clarify "
        "it. Drifting to other subjects, padding, or answering a different question than the "
        "one asked lowers the score. Correctness is scored elsewhere: a wrong answer that is "
        "on the subject can still score high here.\n\n"
        "Scale: 1.0 every reply deals directly with the user's request; 0.7 on the subject "
        "with some digressions; 0.4 the request is only partly addressed, or much of the "
        "reply is beside it; 0.0 the request is ignored, the reply is about something else, "
        "or there is no reply at all."
    ),
    "task_completion": (
        "You are reviewing a conversation between a user and an AI agent, and you score one "
        "quality of it: COMPLETION of the task. Was the expected outcome actually reached?\n\n"
        "Check the outcome against the recorded steps of the agent (what its model produced "
        "and what the operations it ran returned), not against what the agent says about "
        "itself: a final answer that claims success without a step backing it up counts as "
        "not done. When no expected outcome is given, judge against what the user asked for. "
        "An answer stopped by an error, or asking the user for something the task already "
        "provided, has not completed the task.\n\n"
        "Scale: 1.0 the expected outcome is fully reached and the steps confirm it; 0.7 "
        "reached with small omissions; 0.4 partly reached, or claimed but only partly "
        "supported by the steps; 0.0 not reached, wrong, or the agent failed."
    ),
    "hallucination": (
        "You are reviewing a conversation between a user and an AI agent, and you score one "
        "quality of it: GROUNDEDNESS (freedom from hallucination). Does every claim the agent "
        "makes come from somewhere?\n\n"
        "Go through the factual statements the agent made to the user, in its final answer "
        "and in earlier replies. A statement is grounded when it can be traced to what the "
        "user said or to a result returned by one of the recorded steps (a tool or another "
        "agent). Common knowledge that needs no source (arithmetic, definitions) is fine. "
        "Specific facts (numbers, names, dates, states, results of actions) found in no step, "
        "and claims that an action was done when no step shows it, are fabricated.\n\n"
        "Scale: 1.0 every claim traces to the user or a step's result (also when the agent "
        "makes no factual claim, e.g. it asks a question); 0.7 one minor unsupported detail; "
        "0.4 several unsupported claims, or a central one; 0.0 the answer is mostly invented."
    ),
    "tool_call": (
        "You are reviewing a conversation between a user and an AI agent, and you score one "
        "quality of it: TOOL CALL APPROPRIATENESS. Did the agent use its tools well?\n\n"
        "Look at the tool calls and the calls to other agents in the recorded steps. Were the "
        "right ones chosen for the request, with correct and complete arguments, in a sensible "
        "order, without needless repeats and without skipping a call the task required? Were "
        "failed calls handled sensibly (retried with a fix, or reported honestly)? The task's "
        "expected calls are given as a reference; an equivalent alternative is acceptable.\n\n"
        "Scale: 1.0 exactly the calls needed, with the right arguments; 0.7 right calls with a "
        "small flaw (a redundant call, an imprecise argument); 0.4 a needed call missing or "
        "clearly wrong arguments; 0.0 no useful call, or calls unrelated to the request."
    ),
}

_OUTCOME_CRITERIA = (
    "You are reviewing a conversation between a user and an AI agent, and you score one "
    "quality of it: COMPLETION of the task, judged from the outcome alone.\n\n"
    "You see the user's request, the expected outcome and the agent's final answer, not the "
    "steps in between. Be lenient: give full credit when the final answer reasonably "
    "delivers the expected outcome, even worded differently or with extra detail, and take "
    "its statements at face value unless they contradict the request or each other. Lower "
    "the score for parts of the outcome that are missing, an answer to another request, a "
    "refusal, or an error.\n\n"
    "Scale: 1.0 the final answer delivers the expected outcome; 0.7 it delivers most of it; "
    "0.4 it delivers a small part; 0.0 it delivers nothing of it, or there is no answer."
)

_ANSWER_FORMAT = (
    "Answer with one JSON object and nothing else:\n"
    '{"reasoning": "<a few sentences naming the evidence: step numbers, quotes>", '
    '"score": <a number from 0 to 1>}\n'
    "Write the reasoning before deciding the score. Any number between the scale's anchors "
    "is fine."
)

_OPERATOR_NOTE = (
    "Context from the people running this evaluation (take it into account; the answer format above still applies):"
)


def _case(rubric: str, task: Task, episode: Episode, settings: JudgeSettings, *, with_steps: bool) -> str:
    limit = max(1, int(settings.max_trajectory_chars * FINAL_ANSWER_LIMIT_SHARE))
    lines = [f"Task: {task.id}", "User messages, in order:"]
    lines += [f"{i}. {_clip(turn, limit)}" for i, turn in enumerate(task.turns, start=1)]
    if rubric in ("task_completion", "tool_call"):
        outcome = task.expected.expected_outcome or episode.expected_outcome
        lines.append(f"Expected outcome: {outcome or '(none given: judge against the user messages)'}")
    if rubric == "tool_call":
        lines.append("Expected calls:")
        lines += [f"- {_expected_call(c.name, c.args_subset, c.times)}" for c in task.expected.tool_calls]
    lines.append(f"Final status: {episode.final_status or 'none (nothing came back)'}")
    if episode.eval_error:
        lines.append(f"The attempt failed before the agent finished: {_clip(episode.eval_error, 1000)}")
    lines.append(f"Final answer: {_clip(episode.final_output, limit) if episode.final_output else '(empty)'}")
    if with_steps:
        lines += [
            "",
            "Recorded steps of the agent:",
            render_episode_for_judge(episode, max_chars=settings.max_trajectory_chars),
        ]
    return "\n".join(lines)


def _expected_call(name: str, args_subset: dict[str, Any], times: int) -> str:
    text = name
    if args_subset:
        text += f" with arguments including {json.dumps(args_subset, ensure_ascii=False, sort_keys=True)}"
    if times > 1:
        text += f", at least {times} times"
    return text


def _clip(text: str, limit: int) -> str:
    """At most `limit` characters, the middle replaced by a marker when cut."""
    if len(text) <= limit:
        return text
    marker = f" […{len(text) - limit} characters cut…] "
    if limit <= len(marker) + 2:
        return text[:limit]
    head = (limit - len(marker)) // 2
    tail = limit - len(marker) - head
    return text[:head] + marker + text[len(text) - tail :]


# --- answers ---------------------------------------------------------------------------


def _score_holder(value: Any) -> dict[str, Any] | None:
    """The object holding `score`: `value` itself, else the last one nested in it."""
    if isinstance(value, dict):
        if "score" in value:
            return value
        children = list(value.values())
    elif isinstance(value, list):
        children = value
    else:
        return None
    holder = None
    for child in children:
        holder = _score_holder(child) or holder
    return holder


def _score(raw: Any) -> float:
    if isinstance(raw, bool):
        raise JudgeAnswerError(f"the judge's score is not a number: {raw!r}")
    if isinstance(raw, str):
        try:
            raw = float(raw.strip())
        except ValueError:
            raise JudgeAnswerError(f"the judge's score is not a number: {_preview(raw)}") from None
    if not isinstance(raw, (int, float)) or not math.isfinite(raw):
        raise JudgeAnswerError(f"the judge's score is not a number: {_preview(str(raw))}")
    if not 0.0 <= raw <= 1.0:
        raise JudgeAnswerError(f"the judge's score {raw} is outside 0..1")
    return float(raw)


def _preview(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return json.dumps(text if len(text) <= limit else text[: limit - 1] + "…", ensure_ascii=False)


# --- a grade: a score from 0 to 1, whether it passes, why -----------------------------------

GRADE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string", "description": "Why, pointing at the parts of the answer that decide it."},
        "score": {"type": "number", "description": "How well the answer meets the criteria, from 0 to 1."},
        "passed": {"type": "boolean", "description": "Whether the answer meets the criteria."},
    },
    "required": ["reasoning", "score", "passed"],
    "additionalProperties": False,
}
"""The answer a grading judge gives (AgentV's LLM graders, ADK's judged metrics): structured
output where the provider takes a schema."""


def parse_grade(text: str) -> tuple[float, bool | None, str]:
    """(score, passed or None when not given, reasoning) from the judge's answer;
    JudgeAnswerError (a ValueError: asked again) when it holds no usable score."""
    found = answer_object(text)
    score = checked_score(found["score"])
    passed = found.get("passed")
    if passed is not None and not isinstance(passed, bool):
        raise JudgeAnswerError(f"`passed` is not true or false: {passed!r}")
    reasoning = found.get("reasoning")
    reasoning = reasoning if isinstance(reasoning, str) else json.dumps(reasoning, ensure_ascii=False)
    return score, passed, (reasoning or "").strip()
