"""The confusion matrix as a PNG (matplotlib, through engine.chart_drawing): imported only
when there is one to draw, as the charts are."""

from __future__ import annotations

from bat_pipeline.engine.chart_drawing import figure, label, png
from bat_pipeline.engine.measures.classification import ClassificationReport


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
            ax.text(
                x, y, str(count), ha="center", va="center", fontsize=9, color="white" if grid[y][x] > 0.5 else "black"
            )
    ax.set_xticks(range(len(labels)), [label(x) for x in labels], rotation=20, ha="right", fontsize=8)
    ax.set_yticks(range(len(labels)), [label(y) for y in labels], fontsize=8)
    ax.set_xlabel("predicted")
    ax.set_ylabel("actual")
    ax.grid(False)
    fig.colorbar(image, ax=ax, fraction=0.04)
    return png(fig)
