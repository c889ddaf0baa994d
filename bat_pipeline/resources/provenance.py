"""A run's provenance: the agent's git version (a `git` process) and the hashes of what
was read (engine.provenance)."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from bat_pipeline.engine.contracts.config import EvalConfig
from bat_pipeline.engine.contracts.provenance import Provenance
from bat_pipeline.engine.contracts.tasks import Task
from bat_pipeline.engine.provenance import config_hash, dataset_hash, judge_model

GIT_TIMEOUT_S = 10


def git_version(folder: Path) -> tuple[str | None, bool | None]:
    """(HEAD's commit, whether tracked files under `folder` differ from it); (None, None)
    when `folder` is not in a git repository or git is missing."""
    try:
        head = _git(folder, "rev-parse", "HEAD")
        if head is None:
            return None, None
        changes = _git(folder, "status", "--porcelain", "--untracked-files=no", "--", ".")
    except (OSError, subprocess.TimeoutExpired):
        return None, None
    return head, None if changes is None else bool(changes)


def _git(folder: Path, *args: str) -> str | None:
    done = subprocess.run(
        ["git", *args], cwd=folder, capture_output=True, text=True, timeout=GIT_TIMEOUT_S, check=False
    )
    return done.stdout.strip() if done.returncode == 0 else None


def pipeline_version() -> str:
    try:
        return version("bat_pipeline")
    except PackageNotFoundError:
        return "unknown"


def run_provenance(config: EvalConfig, tasks: Sequence[Task]) -> Provenance:
    """The provenance of a partition evaluating `config` on `tasks`."""
    commit, dirty = git_version(Path(config.agent_dir))
    return Provenance(
        agent_commit=commit,
        agent_dirty=dirty,
        dataset_hash=dataset_hash(tasks),
        config_hash=config_hash(config),
        judge_model=judge_model(config),
        pipeline_version=pipeline_version(),
    )
