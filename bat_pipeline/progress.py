"""What `bat-pipeline run` shows while its partitions run: per model the episodes held so
far, the step it is in, and, once done, how many passed, failed and errored; the time
elapsed and an estimate of what is left.

On a terminal the table is redrawn in place (rich's Live display); otherwise (a pipe, CI,
a log) a plain line is printed when something changed, at most every few seconds, so logs
stay short. The figures come from the partition folders the steps write (partition.json,
the step files, metrics.json): this process only reads."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from bat_pipeline.storage import has_ref, load_ref

STEP_FILES = (
    ("metrics", "judge.json"),
    ("judging", "verdicts.json"),
    ("verdicts", "trajectories.json"),
)
"""(step now running, the file its predecessor wrote), latest first: a partition whose
folder holds verdicts.json is judging, and so on; with none of them it is holding
conversations, then (every episode held) reading their trajectories."""


@dataclass
class PartitionState:
    key: str
    held: int
    """Episodes stored so far."""
    total: int
    step: str
    """conversations, verdicts, judging, metrics, done or FAILED."""
    passed: int | None = None
    failed: int | None = None
    errors: int | None = None
    """From metrics.json, once the partition is done."""


def partition_state(key: str, folder: Path | None, total: int, returncode: int | None) -> PartitionState:
    """What the partition's folder says now; `returncode`: its process's, None while running."""
    held = len(load_ref(folder).episode_files) if folder is not None and has_ref(folder) else 0
    state = PartitionState(key, held, total, "conversations")
    if returncode is not None:
        state.step = "done" if returncode == 0 else "FAILED"
    elif folder is not None:
        first = "trajectories" if total and held >= total else "conversations"
        state.step = next((step for step, name in STEP_FILES if (folder / name).is_file()), first)
    summary = _summary(folder) if returncode is not None and folder is not None else None
    if summary:
        state.passed, state.failed = summary.get("passed"), summary.get("failed")
        state.errors = summary.get("error_episodes")
    return state


def _summary(folder: Path) -> dict[str, Any] | None:
    try:
        found = json.loads((folder / "metrics.json").read_text(encoding="utf-8")).get("summary")
    except (OSError, ValueError, AttributeError):
        return None
    return found if isinstance(found, dict) else None


def clock(seconds: float) -> str:
    """m:ss, or h:mm:ss past an hour."""
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def estimate(states: Sequence[PartitionState], elapsed: float) -> float | None:
    """Seconds until the last conversation is held, at the pace so far; None before the
    first episode or once every one is held."""
    held = sum(s.held for s in states)
    left = sum(max(s.total - s.held, 0) for s in states if s.step not in ("done", "FAILED"))
    if not held or not left or elapsed <= 0:
        return None
    return left * elapsed / held


def outcome(state: PartitionState) -> str:
    """`4 passed, 0 failed` (and errors when any), or `` before the partition is done."""
    if state.passed is None:
        return ""
    text = f"{state.passed} passed, {state.failed} failed"
    return text + (f", {state.errors} errors" if state.errors else "")


def plain_line(states: Sequence[PartitionState], elapsed: float) -> str:
    """The line printed when not on a terminal."""
    parts = []
    for s in states:
        part = f"{s.key} {s.held}/{s.total}"
        if s.step == "done":
            part += " done" + (f": {outcome(s)}" if outcome(s) else "")
        elif s.step == "FAILED":
            part += " FAILED"
        elif s.step != "conversations":
            part += f" {s.step}"
        parts.append(part)
    left = estimate(states, elapsed)
    timing = f"{clock(elapsed)} elapsed" + (f", ~{clock(left)} to the last conversation" if left else "")
    return "  " + " · ".join(parts) + f" · {timing}"


class Progress:
    """`update(states)` as often as the caller polls; `close()` once at the end."""

    def __init__(self, out: Callable[[str], None], *, live: bool, every_s: float = 3.0, terminal: TextIO | None = None):
        """`live`: redraw a table on `terminal` (default: standard output) instead of
        printing lines through `out`."""
        self.out, self.every_s = out, every_s
        self.started = time.monotonic()
        self.shown, self.last = "", float("-inf")
        self.live = None
        if live:
            from rich.console import Console
            from rich.live import Live

            self.live = Live(console=Console(file=terminal), refresh_per_second=4, transient=False)
            self.live.start()

    def update(self, states: Sequence[PartitionState], *, final: bool = False) -> None:
        elapsed = time.monotonic() - self.started
        if self.live is not None:
            self.live.update(self._table(states, elapsed), refresh=final)
            return
        line = plain_line(states, elapsed)
        # The elapsed time alone changing is no news; a changed figure is, at most every_s.
        news = line.rsplit(" · ", 1)[0] != self.shown.rsplit(" · ", 1)[0]
        if (news and (final or time.monotonic() - self.last >= self.every_s)) or (final and not self.shown):
            self.out(line)
            self.shown, self.last = line, time.monotonic()

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()

    def _table(self, states: Sequence[PartitionState], elapsed: float) -> Any:
        from rich.table import Table

        left = estimate(states, elapsed)
        caption = f"{clock(elapsed)} elapsed" + (f" · ~{clock(left)} to the last conversation" if left else "")
        table = Table(caption=caption, caption_justify="left", show_edge=False, header_style="bold")
        for name, justify in (("model", "left"), ("episodes", "right"), ("step", "left"), ("result", "left")):
            table.add_column(name, justify=justify)  # type: ignore[arg-type]
        for s in states:
            style = {"done": "green", "FAILED": "bold red"}.get(s.step, "yellow")
            table.add_row(s.key, f"{s.held}/{s.total}", f"[{style}]{s.step}[/]", outcome(s))
        return table
