"""What the two command targets share (`cli.py` per test, `batch_cli.py` per partition):
the target's command run with its placeholders filled, and the error episode of an
attempt whose run failed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bat_pipeline.engine.contracts.agentv import AgentvTarget
from bat_pipeline.engine.contracts.episode import Episode
from bat_pipeline.engine.contracts.tasks import Task
from bat_pipeline.engine.target_records import error_episode
from bat_pipeline.resources.commands import CommandResult, run_command
from bat_pipeline.resources.targets.placeholders import fill, target_environment


def run_target(target: AgentvTarget, values: Mapping[str, str], files: Sequence[str] = ()) -> CommandResult:
    """The target's command, each `{NAME}` of `values` and {FILES} (`files`, by the
    target's `files_format`) filled in, run in its `cwd` and environment within its timeout."""
    command = fill(target.command or "", values, files, target.files_format)
    return run_command(command, cwd=target.cwd, env=target_environment(target), timeout_s=target.timeout_s)


def failed_run(
    task: Task, target: AgentvTarget, attempt: int, result: CommandResult, *, started_at: str, what: str = "target"
) -> Episode:
    """The error episode of an attempt whose run failed: `<what> '<name>'` and how the run
    ended, its time, its stdout kept."""
    message = f"{what} '{target.name}' {result.describe()}"
    return error_episode(
        task, target.name, attempt, message, started_at=started_at, wall_ms=result.wall_ms, output=result.stdout
    )
