"""Charts of one evaluation across models and runs, as PNG bytes (SPEC §8).

Every chart is a function from plain rows (dicts, or pydantic models, as the warehouse
returns them) to PNG bytes of about 800×450 pixels, small enough for Dagster metadata.
Missing values (None) are drawn as "n/a" rather than zero; no rows at all give a chart
that says so instead of an exception.

Figures are built with `matplotlib.figure.Figure` and the Agg canvas directly: pyplot
keeps global state (current figure, backend) that other code in the same process may
rely on, and is not safe across threads.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, PercentFormatter
from PIL import Image
from pydantic import BaseModel, Field

from bat_pipeline.engine.contracts.episode import SCORE_FIELDS

WIDTH_IN, HEIGHT_IN, DPI = 8.0, 4.5, 100
MAX_TASKS = 40
"""The per-task chart shows at most this many tasks: those with the lowest pass rate."""
MAX_LABEL_CHARS = 28
_PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94",
)

Row = Mapping[str, Any] | BaseModel
Colors = Mapping[str, str]


class ChartData(BaseModel):
    """What `render_all` draws; each list holds warehouse rows."""

    models: list[dict[str, Any]] = Field(default_factory=list)
    """One row per model (model_metrics): model_key, pass_rate, avg_wall_ms,
    prompt_tokens_total, completion_tokens_total, total_tokens_total, pass_at_k,
    pass_hat_k, k, and the judge score fields (response_relevance, ...)."""
    episodes: list[dict[str, Any]] = Field(default_factory=list)
    """One row per episode: model_key, wall_ms, tokens_in, tokens_out."""
    tasks: list[dict[str, Any]] = Field(default_factory=list)
    """One row per model × task (task_metrics): model_key, task_id, attempts, passed."""
    trend: list[dict[str, Any]] = Field(default_factory=list)
    """One row per model × run (model_trend): model_key, run_id, pass_rate."""
    scores: list[dict[str, Any]] = Field(default_factory=list)
    """One row per model × scorer × criterion (episode_scores): model_key, scorer,
    criterion, mean (the mean value, None when no row has one), first_position (the
    criterion's place among an episode's rows)."""

    def model_keys(self) -> list[str]:
        """Every model named in any list, sorted: the order colours are given in."""
        keys = {str(r["model_key"]) for rows in (self.models, self.episodes, self.tasks, self.trend, self.scores)
                for r in rows if r.get("model_key") is not None}
        return sorted(keys)


def model_colors(model_keys: Iterable[str]) -> dict[str, str]:
    """A stable colour per model (sorted order), so a model looks the same on every chart."""
    return {key: _PALETTE[i % len(_PALETTE)] for i, key in enumerate(sorted(set(model_keys)))}


def pass_rate_chart(models: Sequence[Row], colors: Colors | None = None) -> bytes:
    """Pass rate (0–100 %) per model."""
    return _bar_chart(models, "pass_rate", "Pass rate per model", "pass rate", colors,
                      scale=100.0, fmt="{:.0f}%", ylim=(0, 105))


def avg_time_chart(models: Sequence[Row], colors: Colors | None = None) -> bytes:
    """Average wall time of an episode per model, in seconds."""
    return _bar_chart(models, "avg_wall_ms", "Average time per episode", "seconds", colors,
                      scale=0.001, fmt="{:.1f}s")


def total_tokens_chart(models: Sequence[Row], colors: Colors | None = None) -> bytes:
    """Tokens in + out over the whole run, per model."""
    return _bar_chart(models, "total_tokens_total", "Total tokens per model", "tokens", colors,
                      fmt="{:,.0f}")


def tokens_chart(models: Sequence[Row], colors: Colors | None = None) -> bytes:
    """Prompt and completion tokens per model, stacked."""
    rows = _sorted_by_model(models)
    if not rows:
        return _no_data("Prompt vs completion tokens")
    fig, ax = _figure("Prompt vs completion tokens per model")
    labels = [_label(r["model_key"]) for r in rows]
    prompt = [_num(r.get("prompt_tokens_total")) or 0 for r in rows]
    completion = [_num(r.get("completion_tokens_total")) or 0 for r in rows]
    x = range(len(rows))
    ax.bar(x, prompt, color="#4c72b0", label="prompt")
    bars = ax.bar(x, completion, bottom=prompt, color="#dd8452", label="completion")
    ax.bar_label(bars, labels=[f"{p + c:,.0f}" for p, c in zip(prompt, completion)], fontsize=8, padding=2)
    _model_axis(ax, labels)
    ax.set_ylabel("tokens")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.legend(fontsize=8)
    return _png(fig)


def time_vs_tokens_chart(episodes: Sequence[Row], colors: Colors | None = None) -> bytes:
    """One dot per episode: tokens in + out against wall time, coloured by model."""
    rows = [r for r in _sorted_by_model(episodes) if _num(r.get("wall_ms")) is not None]
    if not rows:
        return _no_data("Time against tokens")
    colors = colors or model_colors(r["model_key"] for r in rows)
    fig, ax = _figure("Time against tokens, per episode")
    for key in dict.fromkeys(r["model_key"] for r in rows):
        mine = [r for r in rows if r["model_key"] == key]
        ax.scatter([(_num(r.get("tokens_in")) or 0) + (_num(r.get("tokens_out")) or 0) for r in mine],
                   [_num(r["wall_ms"]) / 1000 for r in mine],
                   s=14, alpha=0.7, color=colors.get(key), label=_label(key))
    ax.set_xlabel("tokens (in + out)")
    ax.set_ylabel("seconds")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    _legend(ax, len({r["model_key"] for r in rows}))
    return _png(fig)


def judge_scores_chart(models: Sequence[Row], colors: Colors | None = None) -> bytes:
    """Mean judge score per rubric, one bar per model; says so when nothing was judged."""
    rows = _sorted_by_model(models)
    fields = list(SCORE_FIELDS.values())
    if not rows or all(_num(r.get(f)) is None for r in rows for f in fields):
        return _no_data("Judge scores", "no judge scores" if rows else "no data")
    colors = colors or model_colors(r["model_key"] for r in rows)
    fig, ax = _figure("Judge scores per model and rubric")
    width = 0.8 / len(rows)
    unjudged = {f for f in fields if all(_num(r.get(f)) is None for r in rows)}
    for i, row in enumerate(rows):
        xs = [j + (i - (len(rows) - 1) / 2) * width for j in range(len(fields))]
        values = [_num(row.get(f)) for f in fields]
        bars = ax.bar(xs, [v or 0 for v in values], width, color=colors.get(row["model_key"]),
                      label=_label(row["model_key"]))
        if len(rows) <= 4:
            ax.bar_label(bars, labels=["" if f in unjudged else "n/a" if v is None else f"{v:.2f}"
                                       for f, v in zip(fields, values)], fontsize=7, padding=1)
    for j, field in enumerate(fields):
        if field in unjudged:
            ax.text(j, 0.03, "not judged", ha="center", va="bottom", fontsize=8, color="#777777")
    ax.set_xticks(range(len(fields)), list(SCORE_FIELDS), fontsize=9)
    ax.set_ylim(0, 1.1)
    ax.set_ylabel("mean score (0–1)")
    _legend(ax, len(rows))
    return _png(fig)


def pass_at_k_chart(models: Sequence[Row], colors: Colors | None = None) -> bytes:
    """pass@k and pass^k per model, side by side."""
    rows = _sorted_by_model(models)
    if not rows:
        return _no_data("pass@k and pass^k")
    ks = {r.get("k") for r in rows} - {None}
    title = "pass@k and pass^k per model" + (f" (k={ks.pop()})" if len(ks) == 1 else "")
    fig, ax = _figure(title)
    for offset, field, name, color in ((-0.2, "pass_at_k", "pass@k", "#4c72b0"),
                                       (0.2, "pass_hat_k", "pass^k", "#c44e52")):
        values = [_num(r.get(field)) for r in rows]
        bars = ax.bar([i + offset for i in range(len(rows))], [(v or 0) * 100 for v in values], 0.4,
                      color=color, label=name)
        ax.bar_label(bars, labels=["n/a" if v is None else f"{v * 100:.0f}%" for v in values],
                     fontsize=7, padding=1)
    _model_axis(ax, [_label(r["model_key"]) for r in rows])
    ax.set_ylim(0, 110)
    ax.yaxis.set_major_formatter(PercentFormatter())
    ax.legend(fontsize=8)
    return _png(fig)


def task_pass_rate_chart(tasks: Sequence[Row], colors: Colors | None = None) -> bytes:
    """Heatmap of pass rate, tasks × models; at most MAX_TASKS tasks, the weakest."""
    rows = [r for r in (_as_dict(r) for r in tasks) if (_num(r.get("attempts")) or 0) > 0]
    if not rows:
        return _no_data("Pass rate per task")
    models = sorted({str(r["model_key"]) for r in rows})
    rate = {(str(r["model_key"]), str(r["task_id"])): (_num(r.get("passed")) or 0) / _num(r["attempts"])
            for r in rows}
    tasks_all = sorted({str(r["task_id"]) for r in rows})
    mean = {t: sum(v for (_, task), v in rate.items() if task == t)
               / sum(1 for (_, task) in rate if task == t) for t in tasks_all}
    shown = sorted(sorted(tasks_all, key=lambda t: (mean[t], t))[:MAX_TASKS])
    title = "Pass rate per task" + (f" ({len(shown)} weakest of {len(tasks_all)})"
                                    if len(shown) < len(tasks_all) else "")
    fig, ax = _figure(title)
    nan = float("nan")
    grid = [[rate.get((m, t), nan) for m in models] for t in shown]
    image = ax.imshow(grid, cmap="RdYlGn", vmin=0, vmax=1, aspect="auto", interpolation="nearest")
    if len(shown) <= 20 and len(models) <= 12:
        for y, line in enumerate(grid):
            for x, value in enumerate(line):
                ax.text(x, y, "–" if value != value else f"{value * 100:.0f}", ha="center",
                        va="center", fontsize=7)
    ax.set_xticks(range(len(models)), [_label(m) for m in models], rotation=20, ha="right", fontsize=8)
    ax.set_yticks(range(len(shown)), [_label(t) for t in shown], fontsize=max(5, 9 - len(shown) // 10))
    fig.colorbar(image, ax=ax, format=PercentFormatter(1.0), fraction=0.04)
    return _png(fig)


def pass_rate_trend_chart(trend: Sequence[Row], colors: Colors | None = None) -> bytes:
    """Pass rate per model over its last runs, one line per model, runs in id order."""
    rows = [r for r in _sorted_by_model(trend) if r.get("run_id") is not None]
    if not rows:
        return _no_data("Pass rate across runs")
    colors = colors or model_colors(r["model_key"] for r in rows)
    runs = sorted({str(r["run_id"]) for r in rows})
    position = {run: i for i, run in enumerate(runs)}
    fig, ax = _figure("Pass rate across runs")
    for key in dict.fromkeys(r["model_key"] for r in rows):
        points = sorted((position[str(r["run_id"])], _num(r.get("pass_rate"))) for r in rows
                        if r["model_key"] == key)
        points = [(x, y * 100) for x, y in points if y is not None]
        if points:
            ax.plot(*zip(*points), marker="o", markersize=4, color=colors.get(key), label=_label(key))
    step = max(1, len(runs) // 10)
    ax.set_xticks(range(0, len(runs), step), [runs[i] for i in range(0, len(runs), step)],
                  rotation=20, ha="right", fontsize=7)
    ax.set_xlim(-0.5, len(runs) - 0.5)
    ax.set_ylim(-5, 105)
    ax.set_ylabel("pass rate")
    ax.yaxis.set_major_formatter(PercentFormatter())
    _legend(ax, len({r["model_key"] for r in rows}))
    return _png(fig)


CHARTS: dict[str, tuple[str, Callable[..., bytes]]] = {
    "pass_rate": ("models", pass_rate_chart),
    "avg_time": ("models", avg_time_chart),
    "tokens_prompt_completion": ("models", tokens_chart),
    "total_tokens": ("models", total_tokens_chart),
    "time_vs_tokens": ("episodes", time_vs_tokens_chart),
    "judge_scores": ("models", judge_scores_chart),
    "task_pass_rate": ("tasks", task_pass_rate_chart),
    "pass_rate_trend": ("trend", pass_rate_trend_chart),
    "pass_at_k": ("models", pass_at_k_chart),
}
"""Chart name (file `<name>.png`) → (the ChartData list it draws, its function)."""


def render(data: ChartData) -> dict[str, bytes]:
    """Every chart as PNG bytes, in CHARTS order, with one colour per model throughout."""
    colors = model_colors(data.model_keys())
    return {name: chart(getattr(data, field), colors) for name, (field, chart) in CHARTS.items()}


def render_all(data: ChartData, out_dir: str | Path) -> dict[str, Path]:
    """Write every chart to `out_dir/<name>.png` (replacing earlier files); name → path."""
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    written = {}
    for name, png in render(data).items():
        path = folder / f"{name}.png"
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_bytes(png)
        tmp.replace(path)
        written[name] = path
    return written


def _bar_chart(models: Sequence[Row], field: str, title: str, ylabel: str, colors: Colors | None,
               *, scale: float = 1.0, fmt: str = "{:.2f}", ylim: tuple[float, float] | None = None) -> bytes:
    rows = _sorted_by_model(models)
    if not rows:
        return _no_data(title)
    colors = colors or model_colors(r["model_key"] for r in rows)
    values = [_num(r.get(field)) for r in rows]
    fig, ax = _figure(title)
    bars = ax.bar(range(len(rows)), [(v or 0) * scale for v in values],
                  color=[colors.get(r["model_key"], _PALETTE[0]) for r in rows])
    ax.bar_label(bars, labels=["n/a" if v is None else fmt.format(v * scale) for v in values],
                 fontsize=8, padding=2)
    _model_axis(ax, [_label(r["model_key"]) for r in rows])
    ax.set_ylabel(ylabel)
    if ylim:
        ax.set_ylim(*ylim)
    else:
        ax.set_ylim(0, max([(v or 0) * scale for v in values] + [0]) * 1.15 or 1)
    if scale == 100.0:
        ax.yaxis.set_major_formatter(PercentFormatter())
    elif "tokens" in field:
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    return _png(fig)


def _figure(title: str):
    fig = Figure(figsize=(WIDTH_IN, HEIGHT_IN), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_title(title, fontsize=11)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    return fig, ax


def _no_data(title: str, message: str = "no data") -> bytes:
    fig, ax = _figure(title)
    ax.set_axis_off()
    ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=16, color="#777777",
            transform=ax.transAxes)
    return _png(fig)


def _png(fig: Figure) -> bytes:
    """A 256-colour PNG: charts have few colours, and an RGBA PNG of antialiased lines
    is 3–4× larger (over 200 KB for a busy trend chart)."""
    canvas = fig.canvas
    canvas.draw()
    image = Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba()).convert("RGB")
    buffer = io.BytesIO()
    image.quantize(colors=256, method=Image.Quantize.FASTOCTREE).save(buffer, format="png", optimize=True)
    return buffer.getvalue()


def _legend(ax, count: int) -> None:
    """Inside the plot for a few entries, to the right of it for many."""
    if count <= 6:
        ax.legend(fontsize=7, loc="best")
    else:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), ncol=1 + count // 16)


def _model_axis(ax, labels: list[str]) -> None:
    ax.set_xticks(range(len(labels)), labels, rotation=20 if len(labels) > 3 else 0,
                  ha="right" if len(labels) > 3 else "center", fontsize=8)


def _sorted_by_model(rows: Sequence[Row]) -> list[dict[str, Any]]:
    plain = [_as_dict(r) for r in rows]
    return sorted((r for r in plain if r.get("model_key") is not None), key=lambda r: str(r["model_key"]))


def _as_dict(row: Row) -> dict[str, Any]:
    return row.model_dump() if isinstance(row, BaseModel) else dict(row)


def _num(value: Any) -> float | None:
    """A float, or None for missing and NaN."""
    if value is None:
        return None
    number = float(value)
    return None if number != number else number


def _label(text: Any) -> str:
    text = str(text)
    return text if len(text) <= MAX_LABEL_CHARS else text[: MAX_LABEL_CHARS - 1] + "…"
