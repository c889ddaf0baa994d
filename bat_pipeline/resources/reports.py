"""Reports of past runs from the storage root: which run a RUN argument names (a run id or
a unique prefix of one; default the latest), its partitions and the run before it of the
same agent, and the report files written beside the run (`runs/<run id>/report.*`).
With the root on an object store, the runs' records and the reported runs' files are
fetched from there first (remote_root)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from bat_pipeline.engine.contracts import ReportSettings
from bat_pipeline.engine.errors import InputError
from bat_pipeline.engine.reports.build import PartitionInput, build_report
from bat_pipeline.engine.reports.html import render_html
from bat_pipeline.engine.reports.markdown import render_markdown
from bat_pipeline.engine.reports.model import RunReport
from bat_pipeline.remote_root import pull_tree
from bat_pipeline.storage import PARTITION_FILE, has_ref, load_episodes, load_ref, read_json, write_text_atomic

FORMATS = {"json": "report.json", "markdown": "report.md", "html": "report.html"}


def _partition_dirs(run: Path) -> list[Path]:
    return sorted(p for p in run.iterdir() if p.is_dir() and has_ref(p))


def _runs(root: Path, agent_id: str | None) -> list[tuple[str, str]]:
    """(run id, agent id) of every run under the root holding partitions, oldest first."""
    runs = Path(root) / "runs"
    pull_tree(runs, match=f"*/*/{PARTITION_FILE}")
    found = []
    for run in sorted((p for p in runs.iterdir() if p.is_dir()), key=lambda p: p.name) if runs.is_dir() else []:
        folders = _partition_dirs(run)
        if not folders:
            continue
        agent = load_ref(folders[0]).agent_identity
        if agent_id is None or agent == agent_id:
            found.append((run.name, agent))
    return found


def resolve_run(root: Path, run: str | None, agent_id: str | None = None) -> tuple[str, str]:
    """(run id, agent id) of RUN: an id or a unique prefix; the latest run when None.
    Refuses (InputError) no run, an unknown one and an ambiguous prefix."""
    runs = _runs(root, agent_id)
    where = str(Path(root) / "runs")
    if not runs:
        raise InputError(where, "no runs here yet" + (f" of agent '{agent_id}'" if agent_id else ""))
    if run is None:
        return runs[-1]
    exact = [r for r in runs if r[0] == run]
    matches = exact or [r for r in runs if r[0].startswith(run)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise InputError(where, f"no run '{run}' (latest: {', '.join(r for r, _ in runs[-3:])})")
    raise InputError(where, f"'{run}' is the start of {len(matches)} runs: {', '.join(r for r, _ in matches[:5])}")


def load_run(root: Path, run_id: str) -> list[PartitionInput]:
    pull_tree(Path(root) / "runs" / run_id)
    out = []
    for folder in _partition_dirs(Path(root) / "runs" / run_id):
        ref = load_ref(folder)
        metrics_file = folder / "metrics.json"
        metrics = read_json(metrics_file) if metrics_file.is_file() else {}
        out.append(
            PartitionInput(
                key=ref.model_key,
                model=ref.model_name,
                episodes=load_episodes(ref),
                metrics=metrics,
                provenance=ref.provenance.model_dump(mode="json") if ref.provenance else {},
            )
        )
    return out


def make_report(
    root: Path, run: str | None = None, *, agent_id: str | None = None, colours: ReportSettings | None = None
) -> RunReport:
    """The report of RUN (see resolve_run), compared with the run of the same agent before it."""
    run_id, agent = resolve_run(root, run, agent_id)
    earlier = [r for r, _ in _runs(root, agent) if r < run_id]
    previous = earlier[-1] if earlier else None
    colours = colours or ReportSettings()
    return build_report(
        run_id,
        agent,
        load_run(root, run_id),
        previous=load_run(root, previous) if previous else (),
        previous_run_id=previous,
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
        green=colours.green,
        amber=colours.amber,
    )


def render(report: RunReport, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(report.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"
    if fmt == "markdown":
        return render_markdown(report)
    if fmt == "html":
        return render_html(report)
    raise ValueError(f"unknown report format '{fmt}' (json, markdown, html)")


def write_report(root: Path, report: RunReport) -> dict[str, Path]:
    """Every format into `runs/<run id>/`; format → path."""
    folder = Path(root) / "runs" / report.run_id
    written = {}
    for fmt, name in FORMATS.items():
        write_text_atomic(folder / name, render(report, fmt))
        written[fmt] = folder / name
    return written
