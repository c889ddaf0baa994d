"""The report as one self-contained HTML page: styles and charts inline (SVG), no script
and no request to the network, so it opens offline and as a CI artifact. Scores are
coloured by the report's thresholds (≥ green, ≥ amber, else red). Sections: the
partitions (table and charts), per partition its scores, classification and performance,
the tasks, and a drill-down per episode (conversation, trajectory, every score row with
its reason) as collapsible <details>. The report's JSON rides along in a non-executable
`application/json` block, for tools."""

from __future__ import annotations

import json
from html import escape
from typing import Any

from bat_pipeline.engine.judge_samples import MEDIAN
from bat_pipeline.engine.reports.model import EpisodeReport, PartitionReport, RunReport
from bat_pipeline.engine.reports.svg import bars, confusion

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#1d1d1f;max-width:1400px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd}
h3{font-size:15px;margin:18px 0 6px}.muted{color:#666}
table{border-collapse:collapse;margin:6px 0 12px}th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;
vertical-align:top}th{background:#f5f5f5}td.num{text-align:right;font-variant-numeric:tabular-nums}
.score-high{background:#e8f5e9;color:#1b5e20}.score-medium{background:#fff8e1;color:#8d6e00}
.score-low{background:#ffebee;color:#b71c1c}.score-none{color:#888}
.pass{color:#1b5e20;font-weight:600}.fail{color:#b71c1c;font-weight:600}
details{border:1px solid #ddd;border-radius:4px;margin:4px 0;padding:2px 8px}
details[open]{background:#fcfcfc}summary{cursor:pointer;padding:3px 0}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f8fa;padding:8px;border-radius:4px;max-height:420px;
overflow:auto;font-size:12px}.charts{display:flex;flex-wrap:wrap;gap:24px}
.chart-title{font-size:13px;font-weight:600}.chart-label{font-size:11px}
"""


def _cls(report: RunReport, value: float | None) -> str:
    return f"score-{report.colour(value)}"


def _num(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.0f}%"


def _interval(ci: tuple[float, float] | None, percent: bool = False) -> str:
    if ci is None:
        return "–"
    return f"{ci[0] * 100:.0f}–{ci[1] * 100:.0f}%" if percent else f"{ci[0]:.2f}–{ci[1]:.2f}"


def _versus(p: PartitionReport) -> str:
    """The pass rate against the previous run: the paired difference, its interval, and
    whether the interval says it is real."""
    v = p.versus_previous
    if v is None:
        return "–"
    if v.difference == 0 and v.low == v.high == 0:
        return "no change"
    text = f"{v.difference * 100:+.0f} pts"
    if v.low is not None and v.high is not None:
        text += f" [{v.low * 100:+.0f}, {v.high * 100:+.0f}]"
    return text + (f" · {v.verdict}" if v.significant else " · within noise")


def _score_td(report: RunReport, value: float | None, text: str | None = None) -> str:
    return f'<td class="num {_cls(report, value)}">{escape(text if text is not None else _num(value))}</td>'


def _table(test_id: str, head: list[str], rows: list[str]) -> str:
    heads = "".join(f"<th>{escape(h)}</th>" for h in head)
    return f'<table data-testid="{test_id}"><thead><tr>{heads}</tr></thead><tbody>' + "".join(rows) + "</tbody></table>"


def _partitions(report: RunReport) -> str:
    rows = []
    for p in report.partitions:
        rows.append(
            f"<tr><td>{escape(p.key)}</td><td>{escape(p.model)}</td><td class=num>{p.episodes}</td>"
            f"<td class=num>{p.passed}</td>{_score_td(report, p.pass_rate, _pct(p.pass_rate))}"
            f"<td class=num>{escape(_interval(p.pass_rate_ci, percent=True))}</td>"
            f"<td class=num>{escape(_versus(p))}</td>{_score_td(report, p.pass_at_k)}"
            f"<td class=num>{len(p.flaky_tasks)}</td><td class=num>{p.error_episodes}</td>"
            f"<td class=num>{'–' if p.p50_ms is None else f'{p.p50_ms / 1000:.2f}s'}</td>"
            f"<td class=num>{'–' if p.p95_ms is None else f'{p.p95_ms / 1000:.2f}s'}</td></tr>"
        )
    level = f"{report.partitions[0].confidence:.0%}" if report.partitions else "95%"
    table = _table(
        "partitions-table",
        [
            "partition",
            "model",
            "episodes",
            "passed",
            "pass rate",
            f"{level} interval",
            "Δ vs previous (paired)",
            "pass@k",
            "flaky tasks",
            "error episodes",
            "p50",
            "p95",
        ],
        rows,
    )
    chart = bars(
        "Pass rate per partition",
        [(p.key, p.pass_rate) for p in report.partitions],
        report.colour,
        test_id="chart-pass-rate",
        intervals=[p.pass_rate_ci for p in report.partitions],
    )
    note = (
        f"<p class=muted>Intervals: {level}, attempts clustered by task (a task's attempts are not independent); "
        "Δ vs previous pairs each task with its own result in the previous run. "
        "<code>bat-pipeline compare</code> compares any two partitions.</p>"
    )
    return f"<h2>Partitions</h2>{table}{note}<div class=charts>{chart}</div>"


def _scores(report: RunReport, part: PartitionReport) -> str:
    rows = []
    for s in part.scores:
        rows.append(
            f"<tr><td>{escape(s.scorer)}</td><td>{escape(s.criterion)}</td>{_score_td(report, s.mean)}"
            f"<td class=num>{escape(_interval(s.ci))}</td>"
            f"<td class=num>{s.passed}</td><td class=num>{s.failed}</td><td class=num>{s.count}</td>"
            f"<td class=num>{_num(s.spread)}</td><td class=num>{_num(s.agreement)}</td></tr>"
        )
    table = _table(
        f"scores-{part.key}",
        [
            "scorer",
            "criterion",
            "mean",
            f"{part.confidence:.0%} interval",
            "passed",
            "failed",
            "values",
            "spread (N runs)",
            "panel agreement",
        ],
        rows,
    )
    judged = [s for s in part.scores if s.mean is not None][:30]
    chart = bars(
        f"Mean score per criterion — {part.key}",
        [(f"{s.scorer}/{s.criterion}", s.mean) for s in judged],
        report.colour,
        test_id=f"chart-scores-{part.key}",
        intervals=[s.ci for s in judged],
    )
    note = (
        "<p class=muted>Scores are 0–1, higher is better: a hallucination_score of 1 means no "
        "hallucination, an error check's 1 no error.</p>"
    )
    return table + note + f"<div class=charts>{chart}</div>"


def _flaky(part: PartitionReport) -> str:
    if not part.flaky_tasks:
        return ""
    items = "".join(
        f"<li><b>{escape(t.task_id)}</b>: {t.passed} of {t.attempts} attempts passed</li>" for t in part.flaky_tasks
    )
    return (
        f"<h3>Flaky tasks</h3><p class=muted>attempts that disagree: some passed, some failed</p>"
        f'<ul data-testid="flaky-{escape(part.key)}">{items}</ul>'
    )


PROVENANCE_NAMES = (
    ("agent_commit", "agent commit"),
    ("agent_dirty", "uncommitted changes"),
    ("dataset_hash", "dataset"),
    ("config_hash", "evaluation config"),
    ("judge_model", "judge"),
    ("pipeline_version", "bat_pipeline"),
)


def _provenance(part: PartitionReport) -> str:
    found = part.provenance
    if not found:
        return ""
    shown = []
    for name, label in PROVENANCE_NAMES:
        value = found.get(name)
        if value is None or value == "":
            continue
        text = ("yes" if value else "no") if isinstance(value, bool) else str(value)
        shown.append(f"{escape(label)} <code>{escape(text[:12] if name == 'agent_commit' else text)}</code>")
    return f'<p class=muted data-testid="provenance-{escape(part.key)}">' + " · ".join(shown) + "</p>"


def _classification(report: RunReport, part: PartitionReport) -> str:
    found = part.classification
    if not found:
        return ""
    rows = [
        f"<tr><td>{escape(label)}</td>{_score_td(report, s.get('precision'))}{_score_td(report, s.get('recall'))}"
        f"{_score_td(report, s.get('f1'))}<td class=num>{s.get('support')}</td></tr>"
        for label, s in (found.get("per_label") or {}).items()
    ]
    head = (
        f"<h3>Classification</h3><p>accuracy <b>{_pct(found.get('accuracy'))}</b> · macro F1 "
        f"{_num(found.get('macro_f1'))} · {found.get('count')} answers</p>"
    )
    table = _table(f"classification-{part.key}", ["label", "precision", "recall", "F1", "support"], rows)
    chart = confusion(
        f"Confusion matrix — {part.key}",
        found.get("labels") or [],
        found.get("confusion") or {},
        test_id=f"chart-confusion-{part.key}",
    )
    return head + table + f"<div class=charts>{chart}</div>"


def _performance(part: PartitionReport) -> str:
    found = part.performance
    if not found:
        return ""
    names = [
        ("p50_s", "P50 (s)"),
        ("p90_s", "P90 (s)"),
        ("p95_s", "P95 (s)"),
        ("p99_s", "P99 (s)"),
        ("mean_time_score", "time score"),
        ("throughput_per_s", "episodes / s"),
        ("throughput_score", "throughput score"),
    ]
    cells = "".join(f"<td class=num>{_num(found.get(k))}</td>" for k, _ in names)
    return "<h3>Performance</h3>" + _table(f"performance-{part.key}", [n for _, n in names], [f"<tr>{cells}</tr>"])


def _tasks(report: RunReport) -> str:
    keys = [p.key for p in report.partitions]
    rows = []
    for task in report.tasks:
        cells = []
        for key in keys:
            cell = task.cells.get(key)
            if cell is None:
                cells.append("<td class=score-none>–</td>")
                continue
            text = f"{cell.passed}/{cell.attempts}" + ("" if cell.mean_score is None else f" · {cell.mean_score:.2f}")
            cells.append(_score_td(report, cell.pass_rate, text))
        rows.append(f"<tr><td>{escape(task.task_id)}</td>{''.join(cells)}</tr>")
    return "<h2>Tasks</h2><p class=muted>passed / attempts · mean judged score</p>" + _table(
        "tasks-table", ["task", *keys], rows
    )


def _sample(sample: int) -> str:
    return "median" if sample == MEDIAN else str(sample)


def _outcome(passed: bool | None, yes: str, no: str) -> str:
    """`yes` in the pass colour, `no` in the fail colour, `–` when nothing was decided."""
    if passed is None:
        return "–"
    return f"<span class=pass>{yes}</span>" if passed else f"<span class=fail>{no}</span>"


def _rows_table(report: RunReport, episode: EpisodeReport) -> str:
    rows = []
    for r in episode.rows:
        passed = _outcome(r.passed, "pass", "fail")
        rows.append(
            f"<tr><td>{escape(r.scorer)}</td><td>{escape(r.criterion)}</td>"
            f"<td class=num>{_sample(r.sample)}</td><td>{escape(r.judge or '')}</td>"
            f"{_score_td(report, r.value)}<td class=num>{_num(r.raw)}</td>"
            f"<td>{escape(r.scale or '')}</td><td>{passed}</td><td>{'yes' if r.gating else ''}</td>"
            f"<td>{escape(r.reason)}</td></tr>"
        )
    return _table(
        "score-rows",
        ["scorer", "criterion", "sample", "judge", "value", "raw", "scale", "passed", "gating", "reason"],
        rows,
    )


def _conversation(episode: EpisodeReport) -> str:
    turns = "".join(f"<li><b>user:</b> {escape(t)}</li>" for t in episode.turns)
    events = "".join(
        f"<li>+{float(e.get('t_ms') or 0):.0f}ms {escape(str(e.get('task_status', '')))}: "
        f"{escape(str(e.get('content_preview') or ''))}</li>"
        for e in episode.events
    )
    return (
        f'<div data-testid="conversation"><h3>Conversation</h3><ol>{turns}</ol>'
        + (f"<p class=muted>A2A events</p><ol>{events}</ol>" if events else "")
        + f"<p><b>final answer</b> ({escape(episode.final_status)}):</p><pre>{escape(episode.final_output)}</pre>"
        + "</div>"
    )


def _episodes(report: RunReport) -> str:
    parts = []
    for e in report.episodes:
        status = _outcome(e.passed, "passed", "failed")
        error = f"<p class=fail>error: {escape(e.error)}</p>" if e.error else ""
        parts.append(
            f'<details class="episode" data-testid="episode"><summary>{status} <b>{escape(e.task_id)}</b> '
            f"· try {e.attempt} · {escape(e.partition)} · {e.wall_ms / 1000:.2f}s "
            f"<span class=muted>{escape(e.reason[:160])}</span></summary>{error}{_conversation(e)}"
            f'<h3>Trajectory</h3><pre data-testid="trajectory">{escape(e.trajectory or "(none recorded)")}</pre>'
            f"<h3>Score rows</h3>{_rows_table(report, e)}</details>"
        )
    return "<h2>Episodes</h2>" + "".join(parts)


def _regressions(report: RunReport) -> str:
    if not report.previous_run_id:
        return "<p class=muted>No previous run of this agent to compare with.</p>"
    items = (
        "".join(
            f"<li><b>{escape(r.partition)}</b> {escape(r.what)}: {_num(r.before)} → {_num(r.after)}</li>"
            for r in report.regressions
        )
        or "<li>None.</li>"
    )
    return (
        f'<h2>Regressions against run {escape(report.previous_run_id)}</h2><ul data-testid="regressions">{items}</ul>'
    )


def render_html(report: RunReport) -> str:
    """The page (module docstring); the report's JSON is embedded too, for tools."""
    sections = [_partitions(report), _regressions(report)]
    for part in report.partitions:
        sections.append(
            f'<section data-testid="partition-{escape(part.key)}"><h2>{escape(part.key)} '
            f"<span class=muted>{escape(part.model)}</span></h2>{_provenance(part)}{_scores(report, part)}"
            f"{_flaky(part)}{_classification(report, part)}{_performance(part)}</section>"
        )
    sections += [_tasks(report), _episodes(report)]
    data: dict[str, Any] = report.model_dump(mode="json", exclude={"episodes"})
    embedded = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
    return (
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Evaluation {escape(report.agent_id)} · {escape(report.run_id)}</title><style>{STYLE}</style></head>"
        f"<body><h1>Evaluation of {escape(report.agent_id)}</h1><p class=muted>run {escape(report.run_id)} · "
        f"generated {escape(report.generated_at)} · colours: ≥ {report.green:g} green, ≥ {report.amber:g} amber, "
        f"else red</p>{''.join(sections)}"
        f'<script type="application/json" id="report-data">{embedded}</script></body></html>\n'
    )
