"""Charts of one partition, written beside its metrics: the confusion matrix when the
tasks carry expected labels (engine.measures.partition)."""

from __future__ import annotations

from typing import Any

from bat_pipeline.engine.measures.classification import ClassificationReport
from bat_pipeline.storage import PartitionRef

CONFUSION = "confusion_matrix.png"


def write_partition_charts(ref: PartitionRef, classification: dict[str, Any] | None) -> dict[str, str]:
    """Write the partition's charts; returns chart name → path, for the step's metadata."""
    if not classification:
        return {}
    from bat_pipeline.engine.measures.confusion_chart import confusion_png  # matplotlib: only to draw

    report = ClassificationReport.model_validate(classification)
    path = ref.file(CONFUSION)
    tmp = path.with_name(f".{CONFUSION}.tmp")
    tmp.write_bytes(confusion_png(report, f"Confusion matrix — {ref.model_name}"))
    tmp.replace(path)
    return {"confusion_matrix": str(path)}
