"""`label`: whether the answer names the task's expected label (engine.measures.classification
says how both are read). One informative row per episode: criterion `label`, pass/fail,
details `expected` and `predicted` — what the partition's classification metrics and
confusion matrix are counted from. `metrics.label_field` and the dataset's labels reach it
through the verdicts step's options (`metrics`, `labels`)."""

from __future__ import annotations

from bat_pipeline.engine.contracts.scores import ScoreRow
from bat_pipeline.engine.measures.classification import expected_label, predicted_label
from bat_pipeline.engine.scorers.registry import ScoringInput, check
from bat_pipeline.engine.scorers.support import PASS_FAIL


def _label_field(item: ScoringInput) -> str | None:
    field = getattr(getattr(item.options, "metrics", None), "label_field", None)
    return field if isinstance(field, str) else None


def _applies(item: ScoringInput) -> bool:
    return expected_label(item.task, _label_field(item)) is not None and not item.episode.eval_error


@check("label", applies=_applies, order=700)
def label(item: ScoringInput) -> list[ScoreRow]:
    field = _label_field(item)
    expected = expected_label(item.task, field) or ""
    known = getattr(item.options, "labels", None) or [expected]
    predicted = predicted_label(item.episode.final_output, field, [*known, expected])
    right = predicted == expected
    return [
        ScoreRow(
            scorer="label",
            criterion="label",
            value=float(right),
            raw=float(right),
            scale=PASS_FAIL,
            passed=right,
            reason=f"expected '{expected}', answered '{predicted[:80]}'",
            details={"expected": expected, "predicted": predicted},
        )
    ]
