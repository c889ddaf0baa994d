"""In-process runs of an agent folder's `evaluate` job, and what they leave: the failure
messages, the partition's run folder and its episodes."""

from __future__ import annotations

import json
import signal
from pathlib import Path

SIGTERM_AT_START = signal.getsignal(signal.SIGTERM)
"""SIGTERM's disposition in this test process before any Dagster run (imported by conftest)."""


def put_back_sigterm() -> None:
    """SIGTERM as it was before any Dagster run in this process. After an execution Dagster
    leaves SIGTERM with SIGINT's disposition, SIG_IGN in an xdist worker, which every process
    the tests start afterwards would inherit and keep across exec (the pipeline's own
    children reset it: resources.process_group.prepare_child)."""
    if signal.getsignal(signal.SIGTERM) is not SIGTERM_AT_START:
        signal.signal(signal.SIGTERM, SIGTERM_AT_START)


def materialize_command(partition: str, dagster: str = "dagster") -> list[str]:
    """`dagster asset materialize` of every asset of the definitions for one partition, as a
    user runs it in CI (the agent folder or eval file from $BAT_AGENT_DIR or the cwd)."""
    return [
        dagster,
        "asset",
        "materialize",
        "-m",
        "bat_pipeline.definitions",
        "--select",
        "*",
        "--partition",
        partition,
    ]


def evaluate(
    agent_dir: Path,
    root: Path,
    instance,
    partition: str,
    *,
    assets: list[str] | None = None,
    tags: dict[str, str] | None = None,
    run_config: dict | None = None,
):
    """One in-process run of the `evaluate` job (or of some of its assets) for a partition."""
    import dagster as dg

    from bat_pipeline.definitions import build_definitions
    from bat_pipeline.engine.config import load_eval_config

    job = build_definitions(agent_dir, root).resolve_job_def("evaluate")
    prefix = load_eval_config(agent_dir).agent_id
    selection = [dg.AssetKey([prefix, a]) for a in assets] if assets else None
    try:
        return job.execute_in_process(
            partition_key=partition,
            instance=instance,
            raise_on_error=False,
            asset_selection=selection,
            tags=tags,
            run_config=run_config,
        )
    finally:
        put_back_sigterm()  # a fixture may start processes next


def failure_messages(result) -> list[str]:
    """Each failed step's error message, with its cause's."""
    return [
        e.step_failure_data.error.message
        + "".join(c.message for c in [e.step_failure_data.error.cause] if c is not None)
        for e in result.all_events
        if e.is_step_failure
    ]


def only_run_dir(root: Path, partition: str) -> Path:
    """The one run folder of `partition` under the storage root."""
    dirs = sorted((root / "runs").glob(f"*/{partition}"))
    assert len(dirs) == 1, dirs
    return dirs[0]


def episodes_in(run_dir: Path) -> dict[str, dict]:
    """The stored episodes of a partition's run folder, by file stem."""
    return {p.stem: json.loads(p.read_text()) for p in sorted((run_dir / "episodes").glob("*.json"))}
