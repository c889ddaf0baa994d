"""Classification metrics over (expected, predicted) label pairs, and reading the labels.

The expected label of a task is `expected.expected_label`, else the field named by
`metrics.label_field` inside a structured `expected.expected_output`. The predicted label
is that same field of the final answer when the answer is a JSON object, else the final
answer's text (without surrounding whitespace and a final full stop) when it is a known
label (case-insensitively, then written as that label), else the known label the text
names first as a whole word, else the text itself when short (one line, at most 40
characters), else `(other)`. The known labels are every expected label of the dataset."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from bat_pipeline.engine.contracts import Task

SHORT = 40
OTHER = "(other)"


class LabelStats(BaseModel):
    precision: float | None
    """Of the answers predicting this label, the share that were right; null when none did."""
    recall: float | None
    """Of the tasks expecting this label, the share answered with it; null when none did."""
    f1: float
    """Harmonic mean of precision and recall; 0 without a true positive."""
    support: int
    """Tasks expecting this label."""


class ClassificationReport(BaseModel):
    count: int
    accuracy: float | None
    labels: list[str]
    """Expected labels first (sorted), then labels only ever predicted (sorted)."""
    per_label: dict[str, LabelStats] = Field(default_factory=dict)
    confusion: dict[str, dict[str, int]] = Field(default_factory=dict)
    """`confusion[actual][predicted]`: how many times."""
    macro_f1: float | None = None


def expected_label(task: Task, label_field: str | None) -> str | None:
    if task.expected.expected_label is not None:
        return task.expected.expected_label
    structured = task.expected.expected_output
    if label_field and isinstance(structured, dict) and structured.get(label_field) is not None:
        return str(structured[label_field])
    return None


def predicted_label(answer: str, label_field: str | None, labels: Iterable[str] = ()) -> str:
    text = answer.strip()
    if label_field:
        try:
            parsed: Any = json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and parsed.get(label_field) is not None:
            text = str(parsed[label_field]).strip()
    text = text.removesuffix(".").strip()
    labels = list(labels)
    exact = next((label for label in labels if label.lower() == text.lower()), None)
    if exact is not None:
        return exact
    named = [
        (m.start(), label)
        for label in labels
        for m in [re.search(rf"(?<!\w){re.escape(label)}(?!\w)", text, re.IGNORECASE)]
        if m
    ]
    if named:
        return min(named)[1]
    return text if len(text) <= SHORT and "\n" not in text else OTHER


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def classify(pairs: Sequence[tuple[str, str]]) -> ClassificationReport:
    """The report of (expected, predicted) pairs; precision, recall and F1 per label are
    one-vs-rest, `macro_f1` their mean over every label expected or predicted."""
    expected = sorted({a for a, _ in pairs})
    labels = expected + sorted({p for _, p in pairs} - set(expected))
    confusion = {a: dict.fromkeys(labels, 0) for a in labels}
    for actual, predicted in pairs:
        confusion[actual][predicted] += 1
    per_label: dict[str, LabelStats] = {}
    for label in labels:
        true_pos = confusion[label][label]
        predicted_as = sum(confusion[a][label] for a in labels)
        support = sum(confusion[label].values())
        precision, recall = _ratio(true_pos, predicted_as), _ratio(true_pos, support)
        # A label never predicted has no precision, one never expected no recall; their F1 is
        # 0, as it is for any label with no true positive.
        f1 = 2 * precision * recall / (precision + recall) if precision and recall else 0.0
        per_label[label] = LabelStats(precision=precision, recall=recall, f1=f1, support=support)
    f1s = [s.f1 for s in per_label.values()]
    correct = sum(1 for a, p in pairs if a == p)
    return ClassificationReport(
        count=len(pairs),
        accuracy=_ratio(correct, len(pairs)),
        labels=labels,
        per_label=per_label,
        confusion=confusion,
        macro_f1=sum(f1s) / len(f1s) if f1s else None,
    )
