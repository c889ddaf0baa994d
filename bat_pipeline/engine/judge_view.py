"""What the judge is shown of an episode (SPEC §7): the trajectory as numbered lines
under a legend, or the A2A events when no span was found, within a character budget.

Fitting the budget goes in stages, each tried only if the previous one is too long:
1. shorten long text fields, progressively (FIELD_LIMITS);
2. drop the middle steps of each turn (and of each nested list of steps), keeping as
   many first and last steps as fit: the first steps are where the request is
   understood, the last where the answer is formed; a marker line counts the dropped;
3. first and last step only, fields shortened further (LAST_RESORT_LIMITS);
4. whole lines kept from both ends around a marker line, else a bare prefix.
The legend is the full one when it takes at most a quarter of the budget, else a
one-line form under the same rule, else none: steps matter more than their key.
The result never exceeds `max_chars`, for any `max_chars >= 1`: there is no hard
minimum, but below a hundred characters or so the view is a bare prefix of little use.
Output depends only on the input: no clock, no randomness.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bat_pipeline.engine.contracts.episode import A2AEvent, Episode
from bat_pipeline.engine.contracts.trajectory import (
    AgentStep,
    ErrorStep,
    ModelStep,
    Step,
    ToolStep,
    Trajectory,
)

FIELD_LIMITS: tuple[int | None, ...] = (None, 1000, 500, 250, 120, 60)
"""Longest text field, in characters, tried in turn before any step is dropped."""
LAST_RESORT_LIMITS: tuple[int, ...] = (30, 12)
INDENT = "    "
LEGEND_SHARE = 0.25
"""The legend may take this share of the budget; else its one-line form, else none."""

TRAJECTORY_LEGEND = (
    "How to read the steps below: the conversation is split into turns, each opened by "
    '`Turn N, user: "…"` with the message the user sent, followed by what the agent did '
    'for it, numbered in the order it started. `model <name>: says "…"` is a call to a '
    "language model and the text it produced; `calls a, b` lists the tools it decided to "
    "run; `tokens I in, O out` is what the call consumed. `tool <name>(<arguments>) -> "
    '<result>` is a tool that ran and what it returned. `agent <name>: asked "…" -> "…"` '
    "is a request to another agent and its answer, with that agent's final state. "
    '`error in span "…"` is a failure outside those. `FAILED: …` gives the error of a step '
    "that failed. `@<node>` names the graph node that ran the step. Steps run inside a "
    "tool or agent call are indented under it. A quoted text ending in `…` was shortened, "
    "and a line `… N steps omitted ([a]–[b]) …` stands for steps left out to fit the space."
)
TRAJECTORY_SHORT_LEGEND = "Numbered agent steps per user turn; nested steps indented; `…` = shortened or omitted."

EVENTS_LEGEND = (
    "No spans were recorded for this conversation, so below is what the agent streamed "
    "back over A2A instead of its steps. Each message the user sent opens a block "
    '`User: "…"`; under it, one numbered line per event the agent sent: `[n] +<ms>ms '
    '<task state>: "<text>"`, the time counted from the start of the conversation. A '
    "quoted text ending in `…` was shortened, and a line `… N events omitted ([a]–[b]) …` "
    "stands for events left out to fit the space."
)
EVENTS_SHORT_LEGEND = "A2A events per user message, numbered; `…` = shortened or omitted."

NO_SPANS_TEXT = "No spans were found for this conversation."
NOTHING_TEXT = "No spans and no A2A events were recorded for this conversation."


def render_trajectory(trajectory: Trajectory, *, max_chars: int) -> str:
    """The trajectory as a legend and numbered, indented step lines, at most `max_chars`
    characters. A trajectory that was not found renders as a one-line notice."""
    _check_budget(max_chars)
    if not trajectory.found:
        return _hard_cut(NO_SPANS_TEXT, max_chars)
    return _fit(_trajectory_blocks(trajectory), TRAJECTORY_LEGEND, TRAJECTORY_SHORT_LEGEND, "step", max_chars)


def render_episode_for_judge(episode: Episode, *, max_chars: int) -> str:
    """What the judge sees of the agent's work: the trajectory when its spans were
    found, else the A2A events grouped by user message; at most `max_chars` characters.
    The request, expected outcome and final answer are the prompt's, not part of this."""
    _check_budget(max_chars)
    trajectory = episode.trace.trajectory
    if trajectory.found:
        return render_trajectory(trajectory, max_chars=max_chars)
    if not episode.trace.events:
        return _hard_cut(NOTHING_TEXT, max_chars)
    return _fit(_event_blocks(episode.trace.events), EVENTS_LEGEND, EVENTS_SHORT_LEGEND, "event", max_chars)


Limit = int | None
"""Longest text field in characters; None: no shortening."""


@dataclass(frozen=True)
class _Line:
    number: int
    body: Callable[[Limit], str]
    children: tuple[_Line, ...] = ()

    @property
    def last_number(self) -> int:
        """Numbers run depth first, so a line and its descendants are contiguous."""
        line = self
        while line.children:
            line = line.children[-1]
        return line.number


@dataclass(frozen=True)
class _Block:
    header: Callable[[Limit], str]
    lines: tuple[_Line, ...]
    empty: str


class _TooLong(Exception):
    pass


def _fit(blocks: list[_Block], legend: str, short_legend: str, noun: str, max_chars: int) -> str:
    head = next((text for text in (legend, short_legend) if len(text) <= max_chars * LEGEND_SHARE), None)

    def render(limit: Limit, keep: int | None) -> str | None:
        try:
            return _render(blocks, head, limit, keep, noun, max_chars)
        except _TooLong:
            return None

    # Shorter fields never make a longer text: when the tightest limit does not fit
    # with every step shown, no looser one will.
    tightest = FIELD_LIMITS[-1]
    if render(tightest, None) is not None:
        for limit in FIELD_LIMITS:
            text = render(limit, None)
            if text is not None:
                return text

    # The length grows with `keep` (up to a digit in a marker's count), so a binary
    # search finds the most steps that fit; only renders measured to fit are returned.
    widest = max((len(lines) for lines in _all_lists(blocks)), default=0)
    best: str | None = None
    low, high = 2, widest - 1
    while low <= high:
        keep = (low + high) // 2
        text = render(tightest, keep)
        if text is not None:
            best, low = text, keep + 1
        else:
            high = keep - 1
    if best is not None:
        return best

    for limit in LAST_RESORT_LIMITS:
        text = render(limit, 2)
        if text is not None:
            return text
    return _hard_cut(_render(blocks, head, LAST_RESORT_LIMITS[-1], 2, noun, None), max_chars)


def _render(
    blocks: list[_Block], legend: str | None, limit: Limit, keep: int | None, noun: str, budget: int | None
) -> str:
    """The view; raises _TooLong as soon as it exceeds `budget` (None: no budget)."""
    out: list[str] = []
    size = -1  # no line break before the first line

    def add(line: str) -> None:
        nonlocal size
        size += len(line) + 1
        if budget is not None and size > budget:
            raise _TooLong
        out.append(line)

    def emit(lines: Sequence[_Line], depth: int) -> None:
        pad = INDENT * depth
        for item in _thin(lines, keep):
            if isinstance(item, _Line):
                add(f"{pad}[{item.number}] {item.body(limit)}")
                emit(item.children, depth + 1)
            else:
                first, last = item
                count = last - first + 1
                plural = noun if count == 1 else f"{noun}s"
                span = f"[{first}]" if first == last else f"[{first}]–[{last}]"
                add(f"{pad}… {count} {plural} omitted ({span}) …")

    if legend:
        add(legend)
        add("")
    for block in blocks:
        add(block.header(limit))
        if block.lines:
            emit(block.lines, 1)
        else:
            add(f"{INDENT}{block.empty}")
    return "\n".join(out)


def _thin(lines: Sequence[_Line], keep: int | None) -> list[_Line | tuple[int, int]]:
    """The lines to show: all of them, or the first and last ones around a marker
    `(first dropped number, last dropped number)`, nested steps included."""
    if keep is None or len(lines) <= keep:
        return list(lines)
    tail = keep // 2
    head = keep - tail
    dropped = lines[head : len(lines) - tail]
    marker = (dropped[0].number, dropped[-1].last_number)
    return [*lines[:head], marker, *lines[len(lines) - tail :]]


def _all_lists(blocks: list[_Block]) -> list[tuple[_Line, ...]]:
    found: list[tuple[_Line, ...]] = []

    def walk(lines: tuple[_Line, ...]) -> None:
        found.append(lines)
        for line in lines:
            walk(line.children)

    for block in blocks:
        walk(block.lines)
    return found


def _trajectory_blocks(trajectory: Trajectory) -> list[_Block]:
    counter = itertools.count(1)

    def lines(steps: Sequence[Step]) -> tuple[_Line, ...]:
        made = []
        for step in steps:
            number = next(counter)
            nested = step.steps if isinstance(step, (ToolStep, AgentStep)) else []
            made.append(_Line(number, _step_body(step), lines(nested)))
        return tuple(made)

    return [
        _Block(
            header=_user_header(f"Turn {i}, user: ", turn.user),
            lines=lines(turn.steps),
            empty="(no step recorded for this turn)",
        )
        for i, turn in enumerate(trajectory.turns, start=1)
    ]


def _step_body(step: Step) -> Callable[[Limit], str]:
    def body(limit: Limit) -> str:
        if isinstance(step, ModelStep):
            text = _model_line(step, limit)
        elif isinstance(step, ToolStep):
            outcome = (
                f"FAILED: {_cut(step.error, limit)}"
                if step.error
                else _quoted(step.result, limit)
                if step.result is not None
                else "(no result)"
            )
            text = f"tool {step.name}({_cut(_args(step.args), limit)}) -> {outcome}"
        elif isinstance(step, AgentStep):
            text = f"agent {step.agent or '(unnamed)'}: asked {_quoted(step.asked or '', limit)}"
            if step.error:
                text += f" -> FAILED: {_cut(step.error, limit)}"
            else:
                text += f" -> {_quoted(step.answered or '', limit)}"
            if step.status:
                text += f" (state {step.status})"
        else:
            assert isinstance(step, ErrorStep)
            text = f"error in span {_quoted(step.span, limit)}: {_cut(step.error, limit)}"
        return text + (f"  @{step.node}" if step.node else "")

    return body


def _model_line(step: ModelStep, limit: Limit) -> str:
    parts = []
    if step.said:
        parts.append(f"says {_quoted(step.said, limit)}")
    if step.called:
        parts.append(f"calls {_cut(', '.join(step.called), limit)}")
    if step.error:
        parts.append(f"FAILED: {_cut(step.error, limit)}")
    if not parts:
        parts.append("no text and no tool call")
    tokens = f"tokens {step.tokens_in} in, {step.tokens_out} out"
    if step.tokens_cached:
        tokens += f", {step.tokens_cached} cached"
    if step.reasoning_tokens:
        tokens += f", {step.reasoning_tokens} reasoning"
    return f"model {step.model or '(unknown)'}: {'; '.join(parts)} | {tokens}"


def _event_blocks(events: Sequence[A2AEvent]) -> list[_Block]:
    """One block per user message, opened by the event that carries it."""
    blocks: list[_Block] = []
    header: Callable[[Limit], str] = _before_first_user
    current: list[_Line] = []
    for number, event in enumerate(events, start=1):
        if event.user_input is not None:
            if current:
                blocks.append(_Block(header, tuple(current), ""))
            header = _user_header("User: ", event.user_input)
            current = []
        current.append(_Line(number, _event_body(event)))
    if current:
        blocks.append(_Block(header, tuple(current), ""))
    return blocks


def _event_body(event: A2AEvent) -> Callable[[Limit], str]:
    def body(limit: Limit) -> str:
        text = f"+{event.t_ms:.0f}ms {event.task_status}"
        if event.content_preview:
            text += f": {_quoted(event.content_preview, limit)}"
        return text

    return body


def _args(args: Any) -> str:
    if args is None:
        return ""
    if isinstance(args, dict):
        return ", ".join(f"{key}={_json(value)}" for key, value in args.items())
    return _json(args)


def _before_first_user(limit: Limit) -> str:
    return "Before the first user message:"


def _user_header(prefix: str, user: str | None) -> Callable[[Limit], str]:
    """A block header: `prefix`, then the user's message quoted and cut to the limit."""
    return lambda limit: f"{prefix}{_quoted(user, limit)}"


def _quoted(text: str | None, limit: Limit) -> str:
    return json.dumps(_cut(text or "", limit), ensure_ascii=False)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _cut(text: str, limit: Limit) -> str:
    if limit is None or len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)] + "…"


def _hard_cut(text: str, max_chars: int) -> str:
    """Whole lines from both ends around a marker (the start holds the request, the end
    the answer); a bare prefix when not even one line fits beside the marker."""
    if len(text) <= max_chars:
        return text
    lines = text.split("\n")
    marker_room = len(_cut_marker(len(lines))) + 2  # and its two line breaks
    head: list[str] = []
    tail: list[str] = []
    used = marker_room
    low, high = 0, len(lines) - 1
    take_head = True
    while low <= high:
        line = lines[low] if take_head else lines[high]
        if used + len(line) + 1 > max_chars:
            break
        used += len(line) + 1
        if take_head:
            head.append(line)
            low += 1
        else:
            tail.insert(0, line)
            high -= 1
        take_head = not take_head
    if not head:
        return text[:max_chars]
    return "\n".join([*head, _cut_marker(high - low + 1), *tail])


def _cut_marker(lines: int) -> str:
    return f"… ({lines} line{'s' if lines != 1 else ''} cut here to fit the space) …"


def _check_budget(max_chars: int) -> None:
    if max_chars < 1:
        raise ValueError(f"max_chars must be at least 1, got {max_chars}")
