"""What an LLM scorer asks of a judge, and what it gets back: the protocol between the
scorers (plain functions, here in the engine) and the judge client (a resource that does
the HTTP, retries, structured-output fallback, caching and the bound on calls in flight).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class JudgeQuestion(Generic[T]):
    """One question to the judge."""

    purpose: str
    """Names the question's kind (`bat.relevance`, `choice`, ...): the client remembers per
    purpose whether the server refused structured output, and counts calls by it."""
    messages: list[dict[str, str]]
    """Chat messages, `{"role": system|user|assistant, "content": text}`."""
    parse: Callable[[str], T]
    """The answer text (a structured answer as its JSON text) → the value; raises
    ValueError when the answer is unreadable, and the question is asked again while the
    client's retries last."""
    schema: dict[str, Any] | None = None
    """The JSON schema to ask for as structured output; None asks for plain text."""
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
