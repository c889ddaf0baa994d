"""What `bat-pipeline run` says and records once its partitions have ended: this run's
table, each AgentV target's tests, the run's phase timings, an EvalBench CSV report."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from bat_pipeline.engine.contracts import QUALITATIVE_FIELDS, Episode, EvalConfig
from bat_pipeline.engine.contracts.timings import PHASES
from bat_pipeline.locations import WAREHOUSE_WAIT_VAR
from bat_pipeline.storage import (
    TIMINGS_FILE,
    has_ref,
    load_episodes,
    load_ref,
    load_timings,
    warehouse_path,
    write_json,
)


def _wait_s() -> float:
    """How long the end-of-run reads and writes wait for a warehouse another process holds:
    $BAT_PIPELINE_WAREHOUSE_WAIT_S when set, else 5 s (the table is a courtesy, the results
    are already stored)."""
    return float(os.environ.get(WAREHOUSE_WAIT_VAR) or 5)


def _scenarios(dataset: Path) -> dict[str, Any]:
    """The evalset's scenarios by id, as EvalBench keeps them (`${VAR}` expanded), for
    evals.csv; {} when the dataset is no evalset."""
    from bat_pipeline.engine.config.files import read_json
    from bat_pipeline.engine.datasets.evalbench import evalset_entries, is_evalset
    from bat_pipeline.engine.errors import InputError

    try:
        data = read_json(dataset)
        if not is_evalset(data):
            return {}
        entries = evalset_entries(data, str(dataset), os.environ)
    except (OSError, ValueError, InputError):
        return {}
    return {str(e["id"]): e for e in entries if isinstance(e, dict) and "id" in e}


def write_csv(config: EvalConfig, root: Path, partitions: list[tuple[str, Path | None]], out) -> None:
    """An EvalBench run config's `reporting.csv`: the run's CSV report, from the warehouse."""
    from bat_pipeline.resources.evalbench_export import export_csv
    from bat_pipeline.resources.warehouse import Warehouse, WarehouseBusyError

    run = config.evalbench
    folders = [folder for _, folder in partitions if folder is not None and has_ref(folder)]
    if run is None or run.csv_dir is None or not folders or not warehouse_path(root).exists():
        return
    try:
        written = export_csv(
            Warehouse(warehouse_path(root), max_wait_s=_wait_s()),
            load_ref(folders[0]).run_id,
            run.csv_dir,
            run=run.settings,
            model=run.model_settings,
            scenarios=_scenarios(run.dataset),
        )
        out(f"\ncsv: {written}")
    except WarehouseBusyError as exc:
        out(f"\nthe CSV report cannot be written: {exc}")


def print_tests(partitions: list[tuple[str, Path | None]], out) -> int:
    """Each AgentV target's tests from its results.jsonl: passed, failed, errors, and the
    tests that did not pass; returns how many did not pass."""
    import json

    not_passed = 0
    for key, folder in partitions:
        path = folder / "results.jsonl" if folder is not None else None
        if path is None or not path.is_file():
            continue
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        errors = [r for r in lines if r["error"]]
        failed = [r for r in lines if not r["pass"] and not r["error"]]
        not_passed += len(errors) + len(failed)
        out(f"\n{key}: {len(lines) - len(errors) - len(failed)} passed, {len(failed)} failed, {len(errors)} errors")
        for r in [*failed, *errors]:
            what = f"error: {r['error']}" if r["error"] else f"failed: {_why(r['reason'])}"
            out(f"  {r['test_id']} (try {r['attempt']}): {what}"[:300])
    return not_passed


def _why(reason: str) -> str:
    """A test's reason as the terminal shows it: without the verdict's check prefix
    (`threshold FAIL: `), which says again that it failed."""
    head, sep, rest = reason.partition(" FAIL: ")
    return rest if sep and " " not in head else reason


def record_run_timings(
    root: Path, folders: list[tuple[str, Path | None]], charts_s: float, total_s: float, out
) -> dict[str, Any]:
    """The run's phases: each partition's (from its timings.json), the charts and the
    whole run, written to `runs/<run id>/timings.json` beside the partitions (and the
    charts' time to the warehouse); returns them."""
    from bat_pipeline.resources.warehouse import Warehouse, WarehouseBusyError

    run = {
        "partitions": {key: load_timings(folder) for key, folder in folders if folder is not None},
        "charts": round(charts_s, 3),
        "total": round(total_s, 3),
    }
    for run_folder in {folder.parent for _, folder in folders if folder is not None and has_ref(folder)}:
        write_json(run_folder / TIMINGS_FILE, run)
        try:
            warehouse = Warehouse(warehouse_path(root), max_wait_s=_wait_s())
            warehouse.write_run_phase(load_ref_run_id(run_folder), "charts", charts_s)
        except WarehouseBusyError as exc:
            out(f"the charts' time is not in the warehouse: {exc}")
    return run


def load_ref_run_id(run_folder: Path) -> str:
    """The run id of a run folder (its partitions' records say it)."""
    for folder in sorted(run_folder.iterdir()):
        if has_ref(folder):
            return load_ref(folder).run_id
    return run_folder.name


def print_timings(run: dict[str, Any], out) -> None:
    """Seconds per phase and model, then the charts and the whole run."""
    partitions: dict[str, dict[str, float]] = run["partitions"]
    shown = [phase for phase in PHASES if phase != "charts"]
    out("\n" + f"{'model':26}" + "".join(f"{phase:>14}" for phase in shown))
    for key, phases in partitions.items():
        out(f"{key[:26]:26}" + "".join(f"{phases.get(phase, 0.0):13.2f}s" for phase in shown))
    out(f"charts {run['charts']:.2f}s · whole run {run['total']:.2f}s")


def print_summary(root: Path, partitions: list[tuple[str, Path | None]], out) -> None:
    """The table of *this* run: each partition's metrics as its run wrote them (a resumed
    partition: the run it resumed), never another run's."""
    from bat_pipeline.resources.warehouse import Warehouse, WarehouseBusyError

    path = warehouse_path(root)
    if not path.exists():
        return
    rows: list[dict[str, Any]] = []
    try:
        warehouse = Warehouse(path, max_wait_s=_wait_s())
        for key, folder in partitions:
            if folder is None or not has_ref(folder):
                continue
            run_id = load_ref(folder).run_id
            rows.extend(r for r in warehouse.model_summary(run_id) if r["model_key"] == key)
    except WarehouseBusyError as exc:
        out(f"\nthe summary table cannot be shown: {exc}")
        return
    if not rows:
        return
    level = f"{float(rows[0].get('confidence') or 0.95):.0%} interval"
    out(f"\nmodel                          pass  {level:>12}  pass@k  pass^k  p50 ms  p95 ms   tokens  judge")
    for r in rows:
        scores = [r[f] for f in QUALITATIVE_FIELDS if r.get(f) is not None]
        judge = f"{sum(scores) / len(scores):.2f}" if scores else "-"
        low, high = r.get("pass_rate_ci_low"), r.get("pass_rate_ci_high")
        interval = "-" if low is None or high is None else f"{low:.0%}–{high:.0%}"
        out(
            f"{r['model_key'][:30]:30} {r['pass_rate'] or 0:5.0%}  {interval:>12}  {r.get('pass_at_k') or 0:6.2f}  "
            f"{r.get('pass_hat_k') or 0:6.2f}  {r.get('p50_ms') or 0:6.0f}  {r.get('p95_ms') or 0:6.0f}  "
            f"{int(r.get('total_tokens_total') or 0):7d}  {judge}"
        )


def _cut(text: str, chars: int = 160) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= chars else line[: chars - 1] + "…"


Stored = dict[str, list[Episode]]
"""Partition key → its episodes as stored (`stored_episodes`)."""


def stored_episodes(partitions: list[tuple[str, Path | None]]) -> Stored:
    """Each partition's episodes, read once for every end-of-run report that needs them."""
    return {key: _stored_episodes(folder) for key, folder in partitions}


def _stored_episodes(folder: Path | None) -> list[Episode]:
    """The partition's episodes as stored; [] when there are none to read."""
    if folder is None or not has_ref(folder):
        return []
    try:
        return load_episodes(load_ref(folder))
    except (OSError, ValueError):
        return []


FAILURES_SHOWN = 10
"""Failing tasks listed at the end of a run, over every model; the rest are counted."""


def print_failures(
    partitions: list[tuple[str, Path | None]], out, limit: int = FAILURES_SHOWN, stored: Stored | None = None
) -> int:
    """The failing tasks of the run, failures first (issue 34): one line per model and
    task with how many of its attempts failed and the first check that failed, with its
    reason; at most `limit` lines, then how many more and where to see them. Returns how
    many tasks failed (attempts ending in an error are print_problems'). `stored`: the
    episodes when already read."""
    stored = stored if stored is not None else stored_episodes(partitions)
    failing: dict[tuple[str, str], list[Episode]] = {}
    attempts: dict[tuple[str, str], int] = {}
    for key, _ in partitions:
        for episode in stored[key]:
            attempts[(key, episode.task_id)] = attempts.get((key, episode.task_id), 0) + 1
            if episode.verdict is not None and not episode.verdict.passed and not episode.eval_error:
                failing.setdefault((key, episode.task_id), []).append(episode)
    if not failing:
        return 0
    out(f"\nfailing tasks ({len(failing)}):")
    for (key, task), episodes in list(failing.items())[:limit]:
        verdict = episodes[0].verdict
        assert verdict is not None
        check = next((c for c in verdict.checks if not c.passed), None)
        why = f"{check.check}: {check.detail}" if check is not None else verdict.reason
        out("  " + _cut(f"{key} {task} ({len(episodes)} of {attempts[(key, task)]} attempts): {why}", 200))
    if len(failing) > limit:
        out(f"  … {len(failing) - limit} more: every one in the report below, or `bat-pipeline report`")
    return len(failing)


def print_problems(partitions: list[tuple[str, Path | None]], out, stored: Stored | None = None) -> None:
    """One line a partition for what went wrong without failing it, from its episodes: the
    attempts that ended in an error (an agent that crashed mid-run, a turn that timed out)
    and a judge that failed (every call, or some), each with the first reason."""
    from bat_pipeline.engine.scorers.judging import FAILED

    stored = stored if stored is not None else stored_episodes(partitions)
    for key, _ in partitions:
        episodes = stored[key]
        if not episodes:
            continue
        errored = [e for e in episodes if e.eval_error]
        if errored:
            out(
                f"⚠ {key}: {len(errored)} of {len(episodes)} attempts ended in an error, "
                f"first: {_cut(errored[0].eval_error or '')}"
            )
        judged = failed = 0
        reason = ""
        for episode in episodes:
            rows = [r for r in episode.scores if r.judge is not None or r.reason.startswith(FAILED)]
            errors = dict(episode.qualitative_scores.judge_errors) if episode.qualitative_scores else {}
            bad = [r.reason.removeprefix(FAILED) for r in rows if r.reason.startswith(FAILED)] + list(errors.values())
            if rows or errors:
                judged += 1
            if bad:
                failed += 1
                reason = reason or bad[0]
        if failed:
            share = "every judged episode" if failed == judged else f"{failed} of {judged} judged episodes"
            out(f"⚠ {key}: the judge failed on {share}, first: {_cut(reason)}")


def report_written(report: Path, problem: str | None, out) -> bool:
    """Says where the run's report is, or that it was not written and why (the charts'
    run's `problem`); False then: the run's exit status says the report is missing."""
    if report.is_file():
        out(f"report: {report}")
        return True
    why = (problem or "").splitlines()
    out(f"✗ the report was not written ({report}): {why[0].strip() if why else 'its step did not run'}")
    return False
