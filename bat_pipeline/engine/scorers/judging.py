"""What an LLM scorer asks of a judge, and what it gets back: the protocol between the
scorers (plain functions, here in the engine) and the judge client (a resource that does
the HTTP, retries, structured-output fallback, caching and the bound on calls in flight).

Also what every LLM scorer writes when there is no value, so rows read alike whichever
scorer wrote them: `skipped: …` (nothing to judge here), `judge failed: …` (the judge or
the prompt failed; `details.error` says why) and `not judged: …` (the episode cannot be
judged: its attempt failed). `cannot_judge` says when an episode is not to be sent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.contracts.tasks import Task
from bat_pipeline.engine.scorers.registry import ScoringInput

T = TypeVar("T")
"""What a question's parse makes of the answer, and so the answer's value."""


@dataclass(frozen=True)
class JudgeQuestion(Generic[T]):
    """One question to the judge."""

    purpose: str
    """Names the question's kind (`relevance`, `choice`, ...): the client remembers per
    purpose whether the server refused structured output; part of the cache key. One
    purpose, one answer shape."""
    messages: list[dict[str, str]]
    """Chat messages, `{"role": system|user|assistant, "content": text}`."""
    parse: Callable[[str], T]
    """The answer text (a structured answer as its JSON text) → the value; raises
    ValueError when the answer is unreadable, and the question is asked again while the
    client's retries last."""
    schema: dict[str, Any] | None = None
    """The JSON schema to ask for as structured output (OpenAI's strict mode: every
    property required, `additionalProperties: false`); None asks for plain text. A server
    refusing structured output gets the question in plain text, so the prompt must state
    the answer's shape too."""
    sample: int = 0
    """Which of N askings of the same question (part of the cache key)."""
    temperature: float | None = 0.0
    """None leaves the server's default."""


@dataclass
class JudgeAnswer(Generic[T]):
    """The judge's answer to one question, or why there is none."""

    value: T | None = None
    text: str | None = None
    """The raw answer, kept for the record."""
    error: str | None = None
    """Why there is no value (HTTP error, unreadable after retries, ...), redacted."""
    cached: bool = False
    details: dict[str, Any] = field(default_factory=dict)


class Judge(Protocol):
    """A judge model the LLM scorers ask."""

    @property
    def name(self) -> str:
        """`provider:model`."""

    async def ask(self, question: JudgeQuestion[T]) -> JudgeAnswer[T]:
        """The answer; never raises for a failed call (the answer's `error` says why)."""


SKIPPED = "skipped: "
FAILED = "judge failed: "
NOT_JUDGED = "not judged: "

MISSING_TASK = "bat_pipeline/missing_task"
"""Marks the stand-in task of an episode whose task is no longer in the dataset."""


def stand_in_task(task_id: str) -> Task:
    """What the judge step gives scorers for an episode whose task left the dataset: they
    can still say which rows they would write (`cannot_judge` holds)."""
    return Task(id=task_id, turns=["(this task is no longer in the dataset)"], meta={MISSING_TASK: True})


def cannot_judge(item: ScoringInput) -> str | None:
    """Why this episode is not to be sent to the judge, as a row's reason, else None: its
    attempt failed (`not judged: …`: its conversation is incomplete), or its task left the
    dataset (`judge failed: …`)."""
    if item.episode.eval_error:
        return f"{NOT_JUDGED}the attempt failed ({item.episode.eval_error})"
    if item.task.meta.get(MISSING_TASK):
        return f"{FAILED}task '{item.task.id}' is not in the dataset"
    return None


def null_row(scorer: str, criterion: str, judge: str, reason: str, **fields: Any) -> ScoreRow:
    """A row without a value: `reason` starts with SKIPPED, FAILED or NOT_JUDGED; a
    FAILED row keeps the cause (what follows the prefix) in `details.error`."""
    row = ScoreRow(scorer=scorer, criterion=criterion, judge=judge, reason=reason, **fields)
    if reason.startswith(FAILED):
        row.details = {**row.details, "error": reason[len(FAILED) :]}
    return row
