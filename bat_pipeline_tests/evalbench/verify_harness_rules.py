"""The checks of EvalBench's `.ci/verify_harness.py` (the gate of its harness CI build),
written again here (its code stays in its repository): for a run config and its evalset,
the latest job folder under `reporting.csv.output_directory` must hold, in scores.csv, a row
for every scorer the run config names and every scenario, without `comparison_error`, with a
finite numeric score, and above 0 for the scorers it requires to be positive."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

from bat_pipeline.engine.config.files import read_yaml

POSITIVE = {
    "trajectory_matcher",
    "skills_trajectory",
    "turn_count",
    "agent_steps",
    "end_to_end_latency",
    "tool_call_latency",
    "token_consumption",
    "tokens_processed",
    "effective_billed_tokens",
}


def _latest_job(folder: Path) -> Path | None:
    jobs = [p for p in folder.iterdir() if p.is_dir()] if folder.is_dir() else []
    return max(jobs, key=lambda p: p.stat().st_mtime) if jobs else None


def _rows(job: Path) -> dict[tuple[str, str], tuple[float | None, str]]:
    rows = {}
    with (job / "scores.csv").open(newline="") as f:
        for row in csv.DictReader(f):
            try:
                score: float | None = float(row["score"])
                if not math.isfinite(score):
                    score = None
            except (KeyError, TypeError, ValueError):
                score = None
            rows[(row.get("comparator") or "", row.get("id") or "")] = (
                score,
                (row.get("comparison_error") or "").strip(),
            )
    return rows


def problems(run_config: Path, evalset: Path, cwd: Path, environ: dict[str, str]) -> tuple[list[str], int]:
    """(what fails, how many checks ran), as verify_harness.check reports them for one harness."""
    config = read_yaml(run_config, env_tags=True, environ=environ)
    scorers = sorted(config.get("scorers") or {})
    ids = sorted(s["id"] for s in json.loads(evalset.read_text())["scenarios"])
    output = cwd / config["reporting"]["csv"]["output_directory"]
    job = _latest_job(output)
    if job is None:
        return [f"no run output under {output}"], 0
    if not (job / "scores.csv").exists():
        return [f"no scores.csv in {job}"], 0
    rows = _rows(job)
    found, checked = [], 0
    for scorer in scorers:
        for sid in ids:
            entry = rows.get((scorer, sid))
            if entry is None:
                found.append(f"{scorer}: no row for {sid}")
                continue
            score, error = entry
            checked += 1
            if error:
                found.append(f"{scorer}: errored on {sid} -- {error[:120]}")
            elif score is None:
                found.append(f"{scorer}: non-numeric score for {sid}")
            elif scorer in POSITIVE and score <= 0:
                found.append(f"{scorer}: {sid} reported 0")
    return found, checked
