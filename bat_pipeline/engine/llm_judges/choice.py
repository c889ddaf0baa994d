"""The choice-anchored judge: the judge answers 1–5 on an anchored scale, mapped to 0,
0.25, 0.5, 0.75, 1 (asked at temperature 0). Reading the answer (SPEC §12): the last
non-empty line, when it is exactly a label; else the lowest label contained in the last
three lines; else no choice — score 0, not passed, the raw answer kept."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bat_pipeline.engine.judge_answers import after_thinking

CHOICES: dict[str, float] = {"1": 0.0, "2": 0.25, "3": 0.5, "4": 0.75, "5": 1.0}
"""Label → score."""
SCALE = "1..5"

ANSWER_RULE = (
    "Think it through in a few sentences, then give your grade on the last line: a single digit "
    "from 1 to 5 and nothing else."
)
"""Closes every choice prompt. `Answer format: choice 1-5` after it tells the scripted
example judge which kind of question this is."""


@dataclass(frozen=True)
class Choice:
    """A read answer: the label (None when none was found) and its score."""

    label: str | None
    how: str
    """`last line`, `last three lines` or `none`."""

    @property
    def score(self) -> float:
        return CHOICES[self.label] if self.label is not None else 0.0

    @property
    def passed(self) -> bool:
        return self.score > 0


def parse_choice(text: str) -> Choice:
    """The choice in a judge's answer (module docstring); never raises. Text before a
    final `</think>` is not read."""
    said = after_thinking(text or "")
    lines = [line.strip() for line in said.splitlines() if line.strip()]
    if lines and lines[-1] in CHOICES:
        return Choice(lines[-1], "last line")
    tail = "\n".join(lines[-3:])
    for label in CHOICES:
        if label in tail:
            return Choice(label, "last three lines")
    return Choice(None, "none")


def choice_messages(subject: str, question: str, anchors: Sequence[str], view: str) -> list[dict[str, str]]:
    """A choice question: `subject` names what is graded, `question` asks it, `anchors`
    are the five grades' meanings (1 first), `view` is the episode as the judge sees it."""
    scale = "\n".join(f"{i}: {text}" for i, text in enumerate(anchors, start=1))
    system = f"You grade one aspect of an AI agent's work: {subject}.\n{question}\n\nGrades:\n{scale}\n\n{ANSWER_RULE}"
    return [{"role": "system", "content": system}, {"role": "user", "content": f"{view}\n\nAnswer format: choice 1-5"}]


def anchors_for_levels(levels: dict[float, str], low: float, high: float) -> list[str]:
    """Five anchors for a criterion: from its levels when it has them (the level nearest
    each grade's point of the range), else generic ones."""
    if not levels:
        return [
            "does not meet the criterion at all",
            "meets it poorly",
            "meets it partly",
            "meets it well",
            "meets it fully",
        ]
    anchors = []
    for grade in range(5):
        point = low + grade / 4 * (high - low)
        nearest = min(levels, key=lambda level: abs(level - point))
        anchors.append(f"{levels[nearest]} (level {nearest:g})")
    return anchors
