"""Script graders' processes (SPEC §9, §12): each run with a minimal environment (never
the judge's or a model's key), its own temporary HOME, in its own process group, killed
at its timeout, under the subreaper (nothing it daemonises outlives it). The engine's
script scorer (engine.scorers.script) says what goes in and reads what comes out."""

from __future__ import annotations

from pathlib import Path

from bat_pipeline.resources.commands import CommandResult, minimal_environment, run_command


class GraderRunner:
    """engine.scorers.script.ScriptRunner over real processes."""

    def __init__(self, environment: dict[str, str] | None = None) -> None:
        self.environment = minimal_environment() if environment is None else environment

    def run_script(self, command: str | list[str], *, cwd: Path, stdin: str, timeout_s: float) -> CommandResult:
        if not Path(cwd).is_dir():
            return CommandResult(None, "", "", 0.0, start_error=f"no such folder: {cwd}")
        return run_command(
            command,
            cwd=cwd,
            env=self.environment,
            timeout_s=timeout_s,
            stdin=stdin,
            home_prefix="bat-grader-",
            reap=True,
        )
