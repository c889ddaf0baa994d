"""The report as Markdown sized for a pull-request comment: a summary table per partition,
regressions against the previous run, the worst tasks. GitHub refuses comments over
65,536 characters; the text is kept under MAX_CHARS, the tables cut first."""

from __future__ import annotations

import re

from bat_pipeline.engine.reports.model import PartitionReport, RunReport

MAX_CHARS = 60_000
MARK = {"high": "🟢", "medium": "🟡", "low": "🔴", "none": "⚪"}
HEADLINE_SCORES = 4
"""Judged criteria shown as columns of the summary."""


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.0f}%"


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@+-]*")
"""An id that cannot be Markdown: no emphasis, code, link, HTML or table character, and no
`_` that could open emphasis (only inside a word)."""


def _id(text: str) -> str:
    """An id (task, partition, model, agent, run) as Markdown shows it literally: as it is
    when it is plain (`_PLAIN`), else a code span — fenced with more backticks than it
    holds in a row — in which nothing is markup (`<img …>`, `**x**`, `[a](b)`); a table
    cell's `|` is escaped by `_cell` still."""
    text = " ".join(str(text).splitlines())
    if _PLAIN.fullmatch(text):
        return text
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _escaped(text: str) -> str:
    """Prose that may hold names from the user's files, its Markdown characters escaped."""
    return re.sub(r"([\\`*_\[\]<>&!|#~])", r"\\\1", " ".join(str(text).splitlines()))


def _code(text: str) -> str:
    """`_id`, always in a code span (the heading's agent and run ids)."""
    shown = _id(text)
    return shown if shown.startswith("`") else f"`{shown}`"


def _interval(part: PartitionReport) -> str:
    ci = part.pass_rate_ci
    return "–" if ci is None else f"{ci[0] * 100:.0f}–{ci[1] * 100:.0f}%"


def _versus(part: PartitionReport) -> str:
    v = part.versus_previous
    if v is None:
        return "–"
    if v.difference == 0 and v.low == v.high == 0:
        return "no change"
    text = f"{v.difference * 100:+.0f} pts"
    if v.low is not None and v.high is not None:
        text += f" [{v.low * 100:+.0f}, {v.high * 100:+.0f}]"
    return text + (f" {v.verdict}" if v.significant else " (noise)")


def _headline(partitions: list[PartitionReport]) -> list[tuple[str, str]]:
    """The judged criteria shown as columns: rubric summaries first, then the most scored."""
    seen: dict[tuple[str, str], tuple[bool, int]] = {}
    for part in partitions:
        for s in part.scores:
            if s.mean is not None and s.judged:
                _, count = seen.get((s.scorer, s.criterion), (s.summary, 0))
                seen[(s.scorer, s.criterion)] = (s.summary, count + s.count)
    ranked = sorted(seen.items(), key=lambda kv: (not kv[1][0], -kv[1][1]))
    return [key for key, _ in ranked[:HEADLINE_SCORES]]


def render_markdown(report: RunReport, *, worst: int = 10) -> str:
    heads = _headline(report.partitions)
    lines = [f"## Evaluation of {_code(report.agent_id)} — run {_code(report.run_id)}", ""]
    columns = [
        "partition",
        "model",
        "episodes",
        "pass rate",
        "interval",
        "Δ vs previous (paired)",
        "flaky",
        "p50",
        *[c for _, c in heads],
    ]
    lines += ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for part in report.partitions:
        means = {(s.scorer, s.criterion): s.mean for s in part.scores}
        cells = [
            _id(part.key),
            _id(part.model),
            str(part.episodes),
            f"{MARK[report.colour(part.pass_rate)]} {_pct(part.pass_rate)}",
            _interval(part),
            _versus(part),
            str(len(part.flaky_tasks)),
            "–" if part.p50_ms is None else f"{part.p50_ms / 1000:.1f}s",
            *[f"{MARK[report.colour(means.get(h))]} {_num(means.get(h))}" for h in heads],
        ]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    level = f"{report.partitions[0].confidence:.0%}" if report.partitions else "95%"
    lines += [
        "",
        f"Intervals at {level}, attempts clustered by task; Δ vs previous pairs each task with its own result.",
    ]
    lines.append("")
    flaky = [(p.key, t) for p in report.partitions for t in p.flaky_tasks]
    if flaky:
        lines += ["### Flaky tasks", ""]
        lines += [f"- **{_id(key)}** {_id(t.task_id)}: {t.passed} of {t.attempts} attempts passed" for key, t in flaky]
        lines.append("")
    if report.previous_run_id:
        lines.append(f"### Regressions against run {_code(report.previous_run_id)}")
        lines += [
            f"- **{_id(r.partition)}** {_escaped(r.what)}: {_num(r.before)} → {_num(r.after)}"
            for r in report.regressions
        ] or ["None."]
        lines.append("")
    lines += [
        "### Worst tasks",
        "",
        "Each cell: attempts passed / attempts · the mean judged score (0–1, higher is better).",
        "",
        "| task | " + " | ".join(_cell(_id(p.key)) for p in report.partitions) + " |",
        "|---|" + "---|" * len(report.partitions),
    ]
    for task in report.worst_tasks(worst):
        cells = []
        for part in report.partitions:
            cell = task.cells.get(part.key)
            cells.append(
                "–"
                if cell is None
                else f"{MARK[report.colour(cell.pass_rate)]} {cell.passed}/{cell.attempts}"
                + ("" if cell.mean_score is None else f" · {cell.mean_score:.2f}")
            )
        lines.append(f"| {_cell(_id(task.task_id))} | " + " | ".join(cells) + " |")
    for part in report.partitions:
        found = part.classification
        if found:
            lines += [
                "",
                f"**{_id(part.key)}** classification: accuracy {_pct(found.get('accuracy'))}, "
                f"macro F1 {_num(found.get('macro_f1'))} over {found.get('count')} answers",
            ]
    text = "\n".join(lines) + "\n"
    if len(text) > MAX_CHARS:
        text = text[: MAX_CHARS - 80].rsplit("\n", 1)[0] + "\n\n… (cut to fit a pull-request comment)\n"
    return text
