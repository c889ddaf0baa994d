"""A partition's metrics without an LLM, from its episodes and their rows: classification
(from the `label` rows), performance (episode times, the conversations phase), for
metrics.json (`classification`, `performance`), the warehouse and the report."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bat_pipeline.engine.chart_drawing import figure, label, png
from bat_pipeline.engine.contracts import Episode, MetricsSettings
from bat_pipeline.engine.measures.classification import ClassificationReport, classify
from bat_pipeline.engine.measures.performance import performance


def label_pairs(episodes: Sequence[Episode]) -> list[tuple[str, str]]:
    """(expected, predicted) of every `label` row (sample 0)."""
    return [(str(r.details["expected"]), str(r.details["predicted"])) for e in episodes for r in e.scores
            if r.scorer == "label" and r.sample == 0 and "expected" in r.details]


def partition_measures(episodes: Sequence[Episode], settings: MetricsSettings,
                       timings: dict[str, float]) -> dict[str, Any]:
    """`classification` (null when no task carries a label) and `performance`."""
    pairs = label_pairs(episodes)
    timed = [e.trace.wall_ms / 1000 for e in episodes if not e.eval_error]
    perf = performance(timed, threshold_s=settings.time_threshold_s, penalty=settings.time_penalty,
                       elapsed_s=timings.get("conversations") or None, target_per_s=settings.throughput_target)
    return {"classification": classify(pairs).model_dump(mode="json") if pairs else None,
            "performance": perf.model_dump(mode="json")}


def confusion_png(report: ClassificationReport, title: str) -> bytes:
    """The confusion matrix as a PNG: actual labels down, predicted across, counts in cells,
    shaded by the share of the actual label's row."""
    fig, ax = figure(title)
    labels = report.labels
    grid = [[report.confusion[a][p] / max(1, sum(report.confusion[a].values())) for p in labels] for a in labels]
    image = ax.imshow(grid, cmap="Blues", vmin=0, vmax=1, aspect="auto", interpolation="nearest")
    for y, actual in enumerate(labels):
        for x, predicted in enumerate(labels):
            count = report.confusion[actual][predicted]
            ax.text(x, y, str(count), ha="center", va="center", fontsize=9,
                    color="white" if grid[y][x] > 0.5 else "black")
    ax.set_xticks(range(len(labels)), [label(x) for x in labels], rotation=20, ha="right", fontsize=8)
    ax.set_yticks(range(len(labels)), [label(y) for y in labels], fontsize=8)
    ax.set_xlabel("predicted")
    ax.set_ylabel("actual")
    ax.grid(False)
    fig.colorbar(image, ax=ax, fraction=0.04)
    return png(fig)
