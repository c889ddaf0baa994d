"""Charts of the HTML report as inline SVG (no script, no network): horizontal bars of 0..1
values coloured by the report's thresholds, and the confusion matrix as a grid."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape

COLOURS = {"high": "#2e7d32", "medium": "#f9a825", "low": "#c62828", "none": "#9e9e9e"}
BAR_H, LABEL_W, BAR_W = 22, 260, 360


def bars(
    title: str,
    items: Sequence[tuple[str, float | None]],
    colour: Callable[[float | None], str],
    *,
    test_id: str,
    intervals: Sequence[tuple[float, float] | None] = (),
) -> str:
    """One bar per (label, value 0..1); a missing value is drawn as an empty grey bar.
    `intervals`, one per item where given: an error bar (class `error-bar`) from low to
    high across the bar, its figures in the bar's tooltip and beside the value."""
    height = 30 + BAR_H * len(items)
    parts = [
        f'<svg class="chart" data-testid="{escape(test_id)}" role="img" aria-label="{escape(title)}" '
        f'width="{LABEL_W + BAR_W + (150 if intervals else 70)}" height="{height}" xmlns="http://www.w3.org/2000/svg">',
        f'<text x="0" y="16" class="chart-title">{escape(title)}</text>',
    ]
    for i, (label, value) in enumerate(items):
        y = 26 + i * BAR_H
        width = 0 if value is None else max(1, round(BAR_W * min(max(value, 0.0), 1.0)))
        shown = "–" if value is None else f"{value:.2f}"
        interval = intervals[i] if i < len(intervals) else None
        if interval is not None and value is not None:
            shown += f" [{interval[0]:.2f}, {interval[1]:.2f}]"
        parts.append(
            f'<text x="{LABEL_W - 6}" y="{y + 15}" text-anchor="end" class="chart-label">{escape(label[:40])}</text>'
        )
        parts.append(f'<rect x="{LABEL_W}" y="{y + 3}" width="{BAR_W}" height="{BAR_H - 6}" fill="#eeeeee"/>')
        parts.append(
            f'<rect class="bar" x="{LABEL_W}" y="{y + 3}" width="{width}" height="{BAR_H - 6}" '
            f'fill="{COLOURS[colour(value)]}"><title>{escape(label)}: {shown}</title></rect>'
        )
        if interval is not None and value is not None:
            low, high = (LABEL_W + BAR_W * min(max(x, 0.0), 1.0) for x in interval)
            mid = y + BAR_H / 2
            parts.append(
                f'<path class="error-bar" d="M{low:.1f} {mid - 5:.1f}V{mid + 5:.1f}M{low:.1f} {mid:.1f}H{high:.1f}'
                f'M{high:.1f} {mid - 5:.1f}V{mid + 5:.1f}" stroke="#212121" stroke-width="1.5" fill="none">'
                f"<title>{escape(label)}: interval {interval[0]:.2f} to {interval[1]:.2f}</title></path>"
            )
        parts.append(f'<text x="{LABEL_W + BAR_W + 6}" y="{y + 15}" class="chart-label">{shown}</text>')
    parts.append("</svg>")
    return "".join(parts)


def confusion(title: str, labels: Sequence[str], matrix: dict[str, dict[str, int]], *, test_id: str) -> str:
    """Actual labels down, predicted across; each cell shaded by its share of the row."""
    cell, left, top = 48, 140, 70
    size_w, size_h = left + cell * len(labels) + 10, top + cell * len(labels) + 10
    parts = [
        f'<svg class="chart" data-testid="{escape(test_id)}" role="img" aria-label="{escape(title)}" '
        f'width="{size_w}" height="{size_h}" xmlns="http://www.w3.org/2000/svg">',
        f'<text x="0" y="16" class="chart-title">{escape(title)}</text>',
        f'<text x="{left}" y="34" class="chart-label">predicted →</text>',
        f'<text x="0" y="{top - 6}" class="chart-label">actual ↓</text>',
    ]
    for j, label in enumerate(labels):
        parts.append(
            f'<text x="{left + j * cell + cell / 2}" y="{top - 6}" text-anchor="middle" '
            f'class="chart-label">{escape(label[:8])}</text>'
        )
    for i, actual in enumerate(labels):
        row = matrix.get(actual, {})
        total = max(1, sum(row.values()))
        parts.append(
            f'<text x="{left - 6}" y="{top + i * cell + cell / 2 + 4}" text-anchor="end" '
            f'class="chart-label">{escape(actual[:16])}</text>'
        )
        for j, predicted in enumerate(labels):
            count = row.get(predicted, 0)
            share = count / total
            fill = f"rgba(25, 118, 210, {0.08 + 0.9 * share:.2f})"
            ink = "#ffffff" if share > 0.5 else "#111111"
            x, y = left + j * cell, top + i * cell
            parts.append(
                f'<rect class="cell" x="{x}" y="{y}" width="{cell - 2}" height="{cell - 2}" fill="{fill}">'
                f"<title>{escape(actual)} → {escape(predicted)}: {count}</title></rect>"
            )
            parts.append(
                f'<text x="{x + cell / 2 - 1}" y="{y + cell / 2 + 4}" text-anchor="middle" fill="{ink}" '
                f'class="chart-label">{count}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)
