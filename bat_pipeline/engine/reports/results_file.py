"""A report of a results file, laid out as agentic-v2-eval 0.3.0's `report RESULTS` lays it
out (its `reporters/`): the records (a list, `{"results": [...]}`, `evaluate`'s scored
output, or one object such as a runtime run file) with a summary of `count` and, per
numeric field in the order first met, `<field>_mean` (JSON: also `_min`, `_max`). JSON:
`{metadata: {generated_at, total_results}, results, summary}`. Markdown: title, timestamp,
table of contents, summary list, one table whose columns are the sorted union of the
records' keys (floats to 4 places, lists and dicts as Python shows them cut at 50
characters, `|` escaped). HTML is this project's page of the same table, numbers in 0..1
coloured."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from html import escape
from typing import Any

from bat_pipeline.engine.reports.html import STYLE

TITLE = "Evaluation Results"
TABLE_ROWS = 100
"""agentic-v2-eval's Markdown table shows at most this many records."""


def summary(records: Sequence[dict[str, Any]], *, min_max: bool = True) -> dict[str, Any]:
    """`count`, then per numeric field (booleans count, as in Python) `_mean` (and `_min`,
    `_max`), fields in the order the records first show them."""
    if not records:
        return {"count": 0}
    fields: dict[str, list[float]] = {}
    for record in records:
        for key, value in record.items():
            if isinstance(value, (int, float)):
                fields.setdefault(key, []).append(float(value))
    found: dict[str, Any] = {"count": len(records)}
    for key, values in fields.items():
        found[f"{key}_mean"] = sum(values) / len(values)
        if min_max:
            found[f"{key}_min"] = min(values)
            found[f"{key}_max"] = max(values)
    return found


def _columns(records: Sequence[dict[str, Any]]) -> list[str]:
    return sorted({key for record in records for key in record})


def _cell(value: Any) -> str:
    """A Markdown table cell as agentic-v2-eval writes it."""
    if isinstance(value, float):
        text = f"{value:.4f}"
    elif isinstance(value, (list, dict)):
        text = str(value)
        text = text[:50] + "..." if len(text) > 50 else text
    else:
        text = str(value)
    return text.replace("|", "\\|")


def _markdown(records: Sequence[dict[str, Any]], now: datetime) -> str:
    lines = [f"# {TITLE}", "", f"*Generated: {now.strftime('%Y-%m-%d %H:%M:%S')}*", ""]
    lines += ["## Table of Contents", "", "- [Summary](#summary)", "- [Results](#results)", ""]
    found = summary(records, min_max=False)
    lines += ["## Summary", "", f"- **Total Results**: {found['count']}"]
    for key, value in found.items():
        if key != "count":
            lines.append(f"- **{key}**: {value:.4f}" if isinstance(value, float) else f"- **{key}**: {value}")
    lines += ["", "## Results", ""]
    if records:
        shown = records[:TABLE_ROWS]
        columns = _columns(shown)
        lines.append("| " + " | ".join(columns) + " |")
        lines.append("| " + " | ".join(["---"] * len(columns)) + " |")
        lines += ["| " + " | ".join(_cell(r.get(c, "")) for c in columns) + " |" for r in shown]
        if len(records) > TABLE_ROWS:
            lines += ["", f"*Showing {TABLE_ROWS} of {len(records)} results*"]
    else:
        lines.append("*No results to display*")
    lines.append("")
    return "\n".join(lines)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _html(records: Sequence[dict[str, Any]], title: str, green: float, amber: float) -> str:
    def cell(value: Any) -> str:
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1:
            colour = "high" if value >= green else "medium" if value >= amber else "low"
            return f'<td class="num score-{colour}">{escape(_text(value))}</td>'
        return f"<td>{escape(_text(value))}</td>"

    columns = _columns(records)
    found = summary(records, min_max=False)
    cards = "".join(
        f"<li><b>{escape(key)}</b> {escape(f'{value:.4f}' if isinstance(value, float) else str(value))}</li>"
        for key, value in found.items()
    )
    head = "".join(f"<th>{escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(cell(r.get(c)) for c in columns) + "</tr>" for r in records)
    return (
        f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>{escape(title)}</title>"
        f"<style>{STYLE}</style></head><body><h1>{escape(title)}</h1>"
        f'<ul data-testid="summary">{cards}</ul>'
        f'<table data-testid="results-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
        "</body></html>\n"
    )


def render_results(
    records: Sequence[dict[str, Any]],
    fmt: str,
    title: str = TITLE,
    *,
    green: float = 0.8,
    amber: float = 0.5,
    now: datetime | None = None,
) -> str:
    """The report of `records` in `fmt` (json, markdown or html); `now` is the timestamp."""
    now = now or datetime.now()
    if fmt == "json":
        report = {
            "metadata": {"generated_at": now.isoformat(), "total_results": len(records)},
            "results": list(records),
            "summary": summary(records),
        }
        return json.dumps(report, indent=2, ensure_ascii=False, default=str)
    if fmt == "markdown":
        return _markdown(records, now)
    return _html(records, title, green, amber)
