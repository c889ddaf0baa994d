"""Charts of one evaluation across models and runs, as PNG bytes (SPEC §8).

Every chart is a function from plain rows (dicts, or pydantic models, as the warehouse
returns them) to PNG bytes of about 800×450 pixels, small enough for Dagster metadata.
Missing values (None) are drawn as "n/a" rather than zero; no rows at all give a chart
that says so instead of an exception. Score rows of any scorer (`ChartData.scores`) show
in the `scores` chart with no other change. How charts are drawn: chart_drawing.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from matplotlib.ticker import FuncFormatter, PercentFormatter
from pydantic import BaseModel, Field

from bat_pipeline.engine import chart_drawing as draw
from bat_pipeline.engine.chart_drawing import Colors, Row, model_colors
from bat_pipeline.engine.contracts.scores import QUALITATIVE_FIELDS, SCORE_FIELDS

MAX_TASKS = 40
"""The per-task chart shows at most this many tasks: those with the lowest pass rate."""
MAX_CRITERIA = 40
"""The scores chart shows at most this many criteria: those with the lowest mean."""


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
        keys = {
            str(r["model_key"])
            for rows in (self.models, self.episodes, self.tasks, self.trend, self.scores)
            for r in rows
            if r.get("model_key") is not None
        }
        return sorted(keys)


def pass_rate_chart(models: Sequence[Row], colors: Colors | None = None) -> bytes:
    """Pass rate (0–100 %) per model, with its confidence interval (attempts clustered by
    task) as error bars where the warehouse holds one."""
    return draw.bar_chart(
        models,
        "pass_rate",
        "Pass rate per model" + _interval_note(models),
        "pass rate",
        colors,
        scale=100.0,
        fmt="{:.0f}%",
        ylim=(0, 105),
        interval=("pass_rate_ci_low", "pass_rate_ci_high"),
    )


def avg_time_chart(models: Sequence[Row], colors: Colors | None = None) -> bytes:
    """Average wall time of an episode per model, in seconds."""
    return draw.bar_chart(
        models, "avg_wall_ms", "Average time per episode", "seconds", colors, scale=0.001, fmt="{:.1f}s"
    )


def total_tokens_chart(models: Sequence[Row], colors: Colors | None = None) -> bytes:
    """Tokens in + out over the whole run, per model."""
    return draw.bar_chart(models, "total_tokens_total", "Total tokens per model", "tokens", colors, fmt="{:,.0f}")


def tokens_chart(models: Sequence[Row], colors: Colors | None = None) -> bytes:
    """Prompt and completion tokens per model, stacked."""
    rows = draw.sorted_by_model(models)
    if not rows:
        return draw.no_data("Prompt vs completion tokens")
    fig, ax = draw.figure("Prompt vs completion tokens per model")
    labels = [draw.label(r["model_key"]) for r in rows]
    prompt = [draw.num(r.get("prompt_tokens_total")) or 0 for r in rows]
    completion = [draw.num(r.get("completion_tokens_total")) or 0 for r in rows]
    x = range(len(rows))
    ax.bar(x, prompt, color="#4c72b0", label="prompt")
    bars = ax.bar(x, completion, bottom=prompt, color="#dd8452", label="completion")
    ax.bar_label(bars, labels=[f"{p + c:,.0f}" for p, c in zip(prompt, completion, strict=True)], fontsize=8, padding=2)
    draw.model_axis(ax, labels)
    ax.set_ylabel("tokens")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.legend(fontsize=8)
    return draw.png(fig)


def time_vs_tokens_chart(episodes: Sequence[Row], colors: Colors | None = None) -> bytes:
    """One dot per episode: tokens in + out against wall time, coloured by model."""
    rows = [r for r in draw.sorted_by_model(episodes) if draw.num(r.get("wall_ms")) is not None]
    if not rows:
        return draw.no_data("Time against tokens")
    colors = colors or model_colors(r["model_key"] for r in rows)
    fig, ax = draw.figure("Time against tokens, per episode")
    for key in dict.fromkeys(r["model_key"] for r in rows):
        mine = [r for r in rows if r["model_key"] == key]
        ax.scatter(
            [(draw.num(r.get("tokens_in")) or 0) + (draw.num(r.get("tokens_out")) or 0) for r in mine],
            [(draw.num(r["wall_ms"]) or 0) / 1000 for r in mine],
            s=14,
            alpha=0.7,
            color=colors.get(key),
            label=draw.label(key),
        )
    ax.set_xlabel("tokens (in + out)")
    ax.set_ylabel("seconds")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    draw.legend(ax, len({r["model_key"] for r in rows}))
    return draw.png(fig)


def judge_scores_chart(scores: Sequence[Row], colors: Colors | None = None) -> bytes:
    """Mean score of each of bat-cli's judge rubrics, one bar per model (every model with
    score rows, judged or not); says so when nothing was judged."""
    rows = _judge_means(scores)
    fields = list(QUALITATIVE_FIELDS)
    if not rows or all(draw.num(r.get(f)) is None for r in rows for f in fields):
        return draw.no_data("Judge scores", "no judge scores" if rows else "no data")
    colors = colors or model_colors(r["model_key"] for r in rows)
    fig, ax = draw.figure("Judge scores per model and rubric (0–1, higher is better; hallucination: 1 = none)")
    width = 0.8 / len(rows)
    unjudged = {f for f in fields if all(draw.num(r.get(f)) is None for r in rows)}
    for i, row in enumerate(rows):
        xs = [j + (i - (len(rows) - 1) / 2) * width for j in range(len(fields))]
        values = [draw.num(row.get(f)) for f in fields]
        bars = ax.bar(
            xs, [v or 0 for v in values], width, color=colors.get(row["model_key"]), label=draw.label(row["model_key"])
        )
        if len(rows) <= 4:
            ax.bar_label(
                bars,
                labels=[
                    "" if f in unjudged else "n/a" if v is None else f"{v:.2f}"
                    for f, v in zip(fields, values, strict=True)
                ],
                fontsize=7,
                padding=1,
            )
    for j, field in enumerate(fields):
        if field in unjudged:
            ax.text(j, 0.03, "not judged", ha="center", va="bottom", fontsize=8, color="#777777")
    ax.set_xticks(range(len(fields)), list(SCORE_FIELDS), fontsize=9)
    ax.set_ylim(0, 1.1)
    ax.set_ylabel("mean score (0–1)")
    draw.legend(ax, len(rows))
    return draw.png(fig)


def pass_at_k_chart(models: Sequence[Row], colors: Colors | None = None) -> bytes:
    """pass@k and pass^k per model, side by side, each with its interval as error bars."""
    rows = draw.sorted_by_model(models)
    if not rows:
        return draw.no_data("pass@k and pass^k")
    ks = {r.get("k") for r in rows} - {None}
    title = "pass@k and pass^k per model" + (f" (k={ks.pop()})" if len(ks) == 1 else "") + _interval_note(rows)
    fig, ax = draw.figure(title)
    for offset, field, name, color in (
        (-0.2, "pass_at_k", "pass@k", "#4c72b0"),
        (0.2, "pass_hat_k", "pass^k", "#c44e52"),
    ):
        values = [draw.num(r.get(field)) for r in rows]
        xs = [i + offset for i in range(len(rows))]
        bars = ax.bar(xs, [(v or 0) * 100 for v in values], 0.4, color=color, label=name)
        ax.bar_label(bars, labels=["n/a" if v is None else f"{v * 100:.0f}%" for v in values], fontsize=7, padding=1)
        draw.error_bars(ax, xs, rows, values, (f"{field}_ci_low", f"{field}_ci_high"), 100.0)
    draw.model_axis(ax, [draw.label(r["model_key"]) for r in rows])
    ax.set_ylim(0, 110)
    ax.yaxis.set_major_formatter(PercentFormatter())
    ax.legend(fontsize=8)
    return draw.png(fig)


def task_pass_rate_chart(tasks: Sequence[Row], colors: Colors | None = None) -> bytes:
    """Heatmap of pass rate, tasks × models; at most MAX_TASKS tasks, the weakest."""
    rows = [r for r in (draw.as_dict(r) for r in tasks) if (draw.num(r.get("attempts")) or 0) > 0]
    if not rows:
        return draw.no_data("Pass rate per task")
    models = sorted({str(r["model_key"]) for r in rows})
    rate = {
        (str(r["model_key"]), str(r["task_id"])): (draw.num(r.get("passed")) or 0) / (draw.num(r["attempts"]) or 1)
        for r in rows
    }
    tasks_all = sorted({str(r["task_id"]) for r in rows})
    mean = {
        t: sum(v for (_, task), v in rate.items() if task == t) / sum(1 for (_, task) in rate if task == t)
        for t in tasks_all
    }
    shown = sorted(sorted(tasks_all, key=lambda t: (mean[t], t))[:MAX_TASKS])
    title = "Pass rate per task" + (
        f" ({len(shown)} weakest of {len(tasks_all)})" if len(shown) < len(tasks_all) else ""
    )
    nan = float("nan")
    grid = [[rate.get((m, t), nan) for m in models] for t in shown]
    return draw.heatmap(title, [draw.label(t) for t in shown], models, grid, percent=True)


def scores_chart(scores: Sequence[Row], colors: Colors | None = None) -> bytes:
    """Heatmap of the mean value (0–1) of every scorer and criterion, criteria × models
    (`score_grid`). A criterion whose rows have no value (a judge that failed everywhere)
    shows "–"."""
    labels, models, grid, total = score_grid(scores)
    title = "Mean score per scorer and criterion"
    if not labels:
        return draw.no_data(title)
    if len(labels) < total:
        title += f" ({len(labels)} weakest of {total})"
    return draw.heatmap(title, labels, models, grid, percent=False)


def score_grid(scores: Sequence[Row]) -> tuple[list[str], list[str], list[list[float]], int]:
    """(criterion labels, models, mean per criterion × model with NaN for none, criteria
    in all) of score-mean rows. Criteria come in the order episodes hold them
    (`first_position`); at most MAX_CRITERIA, those with the lowest mean in any model
    (no value counts as lowest). A label is `scorer: criterion`, or the scorer's name when
    both are the same."""
    rows = [r for r in (draw.as_dict(r) for r in scores) if r.get("model_key") is not None]
    models = sorted({str(r["model_key"]) for r in rows})
    mean: dict[tuple[str, str, str], float | None] = {}
    place: dict[tuple[str, str], float] = {}
    lowest: dict[tuple[str, str], float] = {}
    for r in rows:
        criterion = (str(r["scorer"]), str(r["criterion"]))
        value = draw.num(r.get("mean"))
        mean[(str(r["model_key"]), *criterion)] = value
        place[criterion] = min(place.get(criterion, float("inf")), draw.num(r.get("first_position")) or 0)
        lowest[criterion] = min(lowest.get(criterion, 2.0), -1.0 if value is None else value)
    weakest = set(sorted(place, key=lambda c: (lowest[c], c))[:MAX_CRITERIA])
    shown = sorted(weakest, key=lambda c: (place[c], c))
    grid = [[_or_nan(mean.get((m, *c))) for m in models] for c in shown]
    labels = [
        draw.label(scorer if scorer == criterion else f"{scorer}: {criterion}", draw.MAX_LABEL_CHARS + 12)
        for scorer, criterion in shown
    ]
    return labels, models, grid, len(place)


def pass_rate_trend_chart(trend: Sequence[Row], colors: Colors | None = None) -> bytes:
    """Pass rate per model over its last runs, one line per model, runs in id order."""
    rows = [r for r in draw.sorted_by_model(trend) if r.get("run_id") is not None]
    if not rows:
        return draw.no_data("Pass rate across runs")
    colors = colors or model_colors(r["model_key"] for r in rows)
    runs = sorted({str(r["run_id"]) for r in rows})
    position = {run: i for i, run in enumerate(runs)}
    fig, ax = draw.figure("Pass rate across runs")
    for key in dict.fromkeys(r["model_key"] for r in rows):
        points = sorted(
            (position[str(r["run_id"])], draw.num(r.get("pass_rate"))) for r in rows if r["model_key"] == key
        )
        points = [(x, y * 100) for x, y in points if y is not None]
        if points:
            ax.plot(*zip(*points, strict=True), marker="o", markersize=4, color=colors.get(key), label=draw.label(key))
    step = max(1, len(runs) // 10)
    ax.set_xticks(
        range(0, len(runs), step), [runs[i] for i in range(0, len(runs), step)], rotation=20, ha="right", fontsize=7
    )
    ax.set_xlim(-0.5, len(runs) - 0.5)
    ax.set_ylim(-5, 105)
    ax.set_ylabel("pass rate")
    ax.yaxis.set_major_formatter(PercentFormatter())
    draw.legend(ax, len({r["model_key"] for r in rows}))
    return draw.png(fig)


CHARTS: dict[str, tuple[str, Callable[..., bytes]]] = {
    "pass_rate": ("models", pass_rate_chart),
    "avg_time": ("models", avg_time_chart),
    "tokens_prompt_completion": ("models", tokens_chart),
    "total_tokens": ("models", total_tokens_chart),
    "time_vs_tokens": ("episodes", time_vs_tokens_chart),
    "judge_scores": ("scores", judge_scores_chart),
    "scores": ("scores", scores_chart),
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


def _judge_means(scores: Sequence[Row]) -> list[dict[str, Any]]:
    """One row per model with a score row: model_key and each rubric's mean by its score
    field (absent when the rubric has no row)."""
    by_model: dict[str, dict[str, Any]] = {}
    for r in (draw.as_dict(r) for r in scores):
        if r.get("model_key") is None:
            continue
        row = by_model.setdefault(str(r["model_key"]), {"model_key": r["model_key"]})
        if SCORE_FIELDS.get(str(r.get("scorer"))) == r.get("criterion"):
            row[str(r["criterion"])] = r.get("mean")
    return [by_model[key] for key in sorted(by_model)]


def _interval_note(models: Sequence[Row]) -> str:
    """`, error bars: 95% intervals` when the rows hold one confidence level, else nothing."""
    levels = {draw.num(draw.as_dict(r).get("confidence")) for r in models} - {None}
    return f", error bars: {levels.pop():.0%} intervals" if len(levels) == 1 else ""


def _or_nan(value: float | None) -> float:
    return float("nan") if value is None else value
