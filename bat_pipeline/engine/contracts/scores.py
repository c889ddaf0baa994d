"""Score rows: every judgement on an episode, deterministic or by an LLM, as one record.

One long table of these rows is what verdicts, metrics, charts, reports and the UI read:
a new scorer's rows show up everywhere without any other change (docs/architecture.md).
Where a row belongs (run, agent, partition, task, attempt) is the episode's; the row
itself says what was judged and how it came out.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

UNIT = "0..1"
"""The scale of a score that is its own raw number."""


class ScoreRow(BaseModel):
    """One criterion of one scorer on one episode."""

    scorer: str
    """The registered name of the scorer that wrote the row (`status`, `tool_calls`,
    `relevance`, ...)."""
    criterion: str
    """What was judged: a check (`status`, `output[0]`, `tool_call:get_weather`), a rubric's
    score field (`response_relevance`), a rubric criterion."""
    value: float | None = None
    """The score in [0, 1]; null when there is none (skipped, or the judge failed)."""
    raw: float | None = None
    """The scorer's own number (a count, 0–5, 0–10, 0–100), when it has one."""
    scale: str | None = None
    """The range of `raw` (`pass/fail`, `0..1`, `count`, `1..5`, `0..100`)."""
    passed: bool | None = None
    """Whether the criterion holds; null when the scorer does not decide (a judge score)."""
    gating: bool = False
    """Counts toward the episode's verdict: the verdict passes when every gating row does."""
    sample: int = 0
    """Which of N runs of an LLM scorer (0 for the first, and for deterministic rows)."""
    judge: str | None = None
    """`provider:model` of the judge, for rows an LLM wrote."""
    reason: str = ""
    """Why, in words: the check's detail, the judge's reasoning, or why there is no value."""
    details: dict[str, Any] = Field(default_factory=dict)
    """Anything else the scorer wants to keep (counts, matched calls, the raw answer)."""

    @classmethod
    def unit(cls, scorer: str, criterion: str, score: float, **fields: Any) -> ScoreRow:
        """A row whose score is a number in [0, 1] and is also its raw number (scale
        `0..1`): a judge's 0..1 score, a weighted mean of graders, a share of checks.
        `fields`: the row's other fields."""
        return cls(scorer=scorer, criterion=criterion, value=score, raw=score, scale=UNIT, **fields)


class RubricScores(BaseModel):
    """The scores of bat-cli's four judge rubrics, as its episode and metrics files name
    them (0..1, null when there is none)."""

    response_relevance: float | None = None
    task_completion_quality: float | None = None
    hallucination_score: float | None = None
    tool_call_appropriateness: float | None = None

    def score(self, rubric: str) -> float | None:
        value: float | None = getattr(self, SCORE_FIELDS[rubric])
        return value


RUBRICS = ("relevance", "task_completion", "hallucination", "tool_call")
"""bat-cli's judge rubrics, in its order (also the names of their LLM scorers)."""
QUALITATIVE_FIELDS = tuple(RubricScores.model_fields)
"""The rubrics' score fields, in rubric order."""
SCORE_FIELDS = dict(zip(RUBRICS, QUALITATIVE_FIELDS, strict=True))
"""Rubric name → its score field."""
