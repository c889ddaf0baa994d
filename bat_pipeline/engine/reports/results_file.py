"""A report of a results file, as agentic-v2-eval's `report RESULTS` makes one: the records
(a list, `{"results": [...]}`, or `evaluate`'s scored output) as one table whose columns
are the sorted union of their keys, with the count and mean/min/max of every numeric field.
Nested values are shown as JSON; numbers in 0..1 are coloured in HTML."""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from typing import Any

from bat_pipeline.engine.reports.html import STYLE


def summary(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """`total`, then per numeric field (booleans excluded) its mean, min and max."""
    fields: dict[str, list[float]] = {}
    for record in records:
        for key, value in record.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                fields.setdefault(key, []).append(float(value))
    return {
        "total": len(records),
        **{k: {"mean": sum(v) / len(v), "min": min(v), "max": max(v)} for k, v in sorted(fields.items())},
    }


def _columns(records: Sequence[dict[str, Any]]) -> list[str]:
    return sorted({key for record in records for key in record})


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def render_results(
    records: Sequence[dict[str, Any]], fmt: str, title: str, *, green: float = 0.8, amber: float = 0.5
) -> str:
    found = summary(records)
    columns = _columns(records)
    if fmt == "json":
        return json.dumps({"summary": found, "results": list(records)}, indent=2, ensure_ascii=False) + "\n"
    if fmt == "markdown":
        lines = [f"## {title}", "", f"{found['total']} results", ""]
        numeric = [k for k in found if k != "total"]
        if numeric:
            lines += ["| field | mean | min | max |", "|---|---|---|---|"]
            lines += [
                f"| {k} | {found[k]['mean']:.4g} | {found[k]['min']:.4g} | {found[k]['max']:.4g} |" for k in numeric
            ]
            lines.append("")
        lines += ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        lines += [
            "| " + " | ".join(_text(r.get(c)).replace("|", "\\|").replace("\n", " ") for c in columns) + " |"
            for r in records
        ]
        return "\n".join(lines) + "\n"

    def cell(value: Any) -> str:
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1:
            colour = "high" if value >= green else "medium" if value >= amber else "low"
            return f'<td class="num score-{colour}">{escape(_text(value))}</td>'
        return f"<td>{escape(_text(value))}</td>"

    head = "".join(f"<th>{escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(cell(r.get(c)) for c in columns) + "</tr>" for r in records)
    return (
        f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>{escape(title)}</title>"
        f"<style>{STYLE}</style></head><body><h1>{escape(title)}</h1><p>{found['total']} results</p>"
        f'<table data-testid="results-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
        "</body></html>\n"
    )
