"""The episode as the agentic-v2-eval judge kinds see it: the request, the expected
outcome, the agent's steps (engine.judge_view, within the judge's character budget) and
the final answer, each under a label (`Expected outcome:`, `Final answer:`)."""

from __future__ import annotations

from bat_pipeline.engine.contracts import Episode, JudgeSettings, Task
from bat_pipeline.engine.judge_view import render_episode_for_judge

HEAD_CHARS = 16_000
TAIL_CHARS = 1_000
CUT_MARKER = "\n\n[… {n} characters cut …]\n\n"


def cut_long(text: str, head: int = HEAD_CHARS, tail: int = TAIL_CHARS) -> str:
    """A text longer than head + tail + 1,000 characters as its first `head` and last
    `tail` characters around a marker saying how much was cut (agentic-v2-eval's rule for
    the standard judge's input: above 18,000, keep 16,000 + 1,000)."""
    if len(text) <= head + tail + 1_000:
        return text
    return text[:head] + CUT_MARKER.format(n=len(text) - head - tail) + text[-tail:]


def expected_text(task: Task) -> str:
    if task.expected.expected_outcome:
        return task.expected.expected_outcome
    if task.agentv is not None and task.agentv.criteria:
        return task.agentv.criteria
    return "(none stated)"


def episode_view(task: Task, episode: Episode, settings: JudgeSettings | None, *, steps: bool = True) -> str:
    """The labelled view of one episode (module docstring)."""
    request = "\n".join(f"- {turn}" for turn in task.turns)
    parts = [f"Request:\n{request}", f"Expected outcome: {expected_text(task)}"]
    if steps:
        budget = settings.max_trajectory_chars if settings is not None else 24_000
        parts.append("Steps:\n" + render_episode_for_judge(episode, max_chars=budget))
    parts.append(f"Final answer: {cut_long(episode.final_output) or '(empty)'}")
    return "\n\n".join(parts)
