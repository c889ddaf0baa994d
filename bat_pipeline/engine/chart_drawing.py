"""How every chart is drawn: figure size, colours per model, bars, heatmaps, labels,
"no data" panels and the PNG encoding (charts.py says what each chart shows).

Figures are built with `matplotlib.figure.Figure` and the Agg canvas directly: pyplot
keeps global state (current figure, backend) that other code in the same process may
rely on, and is not safe across threads.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, PercentFormatter
from PIL import Image
from pydantic import BaseModel

WIDTH_IN, HEIGHT_IN, DPI = 8.0, 4.5, 100
MAX_LABEL_CHARS = 28
PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
    "#aec7e8",
    "#ffbb78",
    "#98df8a",
    "#ff9896",
    "#c5b0d5",
    "#c49c94",
)

Row = Mapping[str, Any] | BaseModel
Colors = Mapping[str, str]


def model_colors(model_keys: Iterable[str]) -> dict[str, str]:
    """A stable colour per model (sorted order), so a model looks the same on every chart."""
    return {key: PALETTE[i % len(PALETTE)] for i, key in enumerate(sorted(set(model_keys)))}


def bar_chart(
    models: Sequence[Row],
    field: str,
    title: str,
    ylabel: str,
    colors: Colors | None,
    *,
    scale: float = 1.0,
    fmt: str = "{:.2f}",
    ylim: tuple[float, float] | None = None,
    interval: tuple[str, str] | None = None,
) -> bytes:
    """One bar per model of `field`; `interval` names the fields of its low and high
    bounds, drawn as error bars where both are known."""
    rows = sorted_by_model(models)
    if not rows:
        return no_data(title)
    colors = colors or model_colors(r["model_key"] for r in rows)
    values = [num(r.get(field)) for r in rows]
    fig, ax = figure(title)
    bars = ax.bar(
        range(len(rows)),
        [(v or 0) * scale for v in values],
        color=[colors.get(r["model_key"], PALETTE[0]) for r in rows],
    )
    ax.bar_label(bars, labels=["n/a" if v is None else fmt.format(v * scale) for v in values], fontsize=8, padding=2)
    if interval is not None:
        error_bars(ax, list(range(len(rows))), rows, values, interval, scale)
    model_axis(ax, [label(r["model_key"]) for r in rows])
    ax.set_ylabel(ylabel)
    if ylim:
        ax.set_ylim(*ylim)
    else:
        ax.set_ylim(0, max([(v or 0) * scale for v in values] + [0]) * 1.15 or 1)
    if scale == 100.0:
        ax.yaxis.set_major_formatter(PercentFormatter())
    elif "tokens" in field:
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    return png(fig)


def error_bars(
    ax: Axes,
    xs: Sequence[float],
    rows: Sequence[dict[str, Any]],
    values: Sequence[float | None],
    fields: tuple[str, str],
    scale: float,
) -> None:
    """Error bars from each row's `fields` (low, high) around its value; rows without
    both bounds or a value get none."""
    drawn = [
        (x, v * scale, (v - low) * scale, (high - v) * scale)
        for x, r, v in zip(xs, rows, values, strict=True)
        if v is not None
        for low, high in [(num(r.get(fields[0])), num(r.get(fields[1])))]
        if low is not None and high is not None
    ]
    if drawn:
        x, y, below, above = zip(*drawn, strict=True)
        ax.errorbar(
            x,
            y,
            yerr=[[max(b, 0) for b in below], [max(a, 0) for a in above]],
            fmt="none",
            ecolor="#212121",
            elinewidth=1.4,
            capsize=6,
            capthick=1.4,
            zorder=3,
        )


def heatmap(title: str, row_labels: list[str], models: list[str], grid: list[list[float]], *, percent: bool) -> bytes:
    """Values 0–1 (NaN for none, shown "–") as red-to-green cells, rows × models, as
    percentages or as they are; the value in each cell when there are few."""
    fig, ax = figure(title)
    image = ax.imshow(grid, cmap="RdYlGn", vmin=0, vmax=1, aspect="auto", interpolation="nearest")
    if len(row_labels) <= 20 and len(models) <= 12:
        for y, line in enumerate(grid):
            for x, value in enumerate(line):
                text = "–" if value != value else f"{value * 100:.0f}" if percent else f"{value:.2f}"
                ax.text(x, y, text, ha="center", va="center", fontsize=7)
    ax.set_xticks(range(len(models)), [label(m) for m in models], rotation=20, ha="right", fontsize=8)
    ax.set_yticks(range(len(row_labels)), row_labels, fontsize=max(5, 9 - len(row_labels) // 10))
    fig.colorbar(image, ax=ax, format=PercentFormatter(1.0) if percent else None, fraction=0.04)
    return png(fig)


def figure(title: str) -> tuple[Figure, Axes]:
    fig = Figure(figsize=(WIDTH_IN, HEIGHT_IN), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_title(title, fontsize=11)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    return fig, ax


def no_data(title: str, message: str = "no data") -> bytes:
    fig, ax = figure(title)
    ax.set_axis_off()
    ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=16, color="#777777", transform=ax.transAxes)
    return png(fig)


def png(fig: Figure) -> bytes:
    """A 256-colour PNG: charts have few colours, and an RGBA PNG of antialiased lines
    is 3–4× larger (over 200 KB for a busy trend chart)."""
    canvas = fig.canvas
    assert isinstance(canvas, FigureCanvasAgg)  # figure() attaches one
    canvas.draw()
    image = Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba()).convert("RGB")
    buffer = io.BytesIO()
    image.quantize(colors=256, method=Image.Quantize.FASTOCTREE).save(buffer, format="png", optimize=True)
    return buffer.getvalue()


def legend(ax: Axes, count: int) -> None:
    """Inside the plot for a few entries, to the right of it for many."""
    if count <= 6:
        ax.legend(fontsize=7, loc="best")
    else:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), ncol=1 + count // 16)


def model_axis(ax: Axes, labels: list[str]) -> None:
    ax.set_xticks(
        range(len(labels)),
        labels,
        rotation=20 if len(labels) > 3 else 0,
        ha="right" if len(labels) > 3 else "center",
        fontsize=8,
    )


def sorted_by_model(rows: Sequence[Row]) -> list[dict[str, Any]]:
    plain = [as_dict(r) for r in rows]
    return sorted((r for r in plain if r.get("model_key") is not None), key=lambda r: str(r["model_key"]))


def as_dict(row: Row) -> dict[str, Any]:
    return row.model_dump() if isinstance(row, BaseModel) else dict(row)


def num(value: Any) -> float | None:
    """A float, or None for missing and NaN."""
    if value is None:
        return None
    number = float(value)
    return None if number != number else number


def label(value: Any, limit: int = MAX_LABEL_CHARS) -> str:
    text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
