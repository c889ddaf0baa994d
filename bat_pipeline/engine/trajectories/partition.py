"""Every episode of a partition given its trajectory, from the span files the episodes step
recorded, read once their writers are done."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bat_pipeline.engine.agent_folder import spans_files
from bat_pipeline.engine.contracts import Episode, Task
from bat_pipeline.engine.figures import trajectory_figures
from bat_pipeline.engine.spans import load_spans, wait_until_quiet
from bat_pipeline.engine.target_records import TRAJECTORY_SOURCE
from bat_pipeline.engine.trajectories.build import build_trajectory, recorded_tool_calls
from bat_pipeline.engine.trajectories.plan import planned_steps


@dataclass
class RebuiltTrajectories:
    """The episodes with their trajectories, and how the span files were read."""

    episodes: list[Episode]
    files: list[Path]
    """The span files read, folders listed."""
    spans_read: int
    skipped: list[str]
    """What reading the span files skipped or missed, one message each."""
    waited_s: float
    quiet: bool
    """False when the files were still changing after the longest wait."""

    def by_conversation(self) -> dict[str, Any]:
        """trajectories.json: conversation id → trajectory."""
        return {e.conversation_id: e.trace.trajectory.model_dump(mode="json") for e in self.episodes}

    def warnings(self) -> list[str]:
        """Span files still changing when read, missing, or with lines skipped."""
        still = (
            []
            if self.quiet
            else [f"span files still changing after {self.waited_s:.1f}s (evaluation.spans_wait_s); read as they are"]
        )
        return still + self.skipped

    def figures(self) -> dict[str, Any]:
        """For the step's metadata: spans read, the wait, the files, trajectory_figures, and
        what was skipped."""
        return {
            "spans_read": self.spans_read,
            "spans_wait_s": round(self.waited_s, 2),
            "span_files": [str(f) for f in self.files],
            **trajectory_figures(self.episodes),
            "skipped_lines": self.skipped,
        }


def rebuild_trajectories(
    episodes: Sequence[Episode],
    tasks: Sequence[Task],
    span_paths: Sequence[Path],
    *,
    base: Path,
    settle_s: float,
    wait_s: float,
    since: float,
) -> RebuiltTrajectories:
    """Wait until the span files are quiet (`wait_until_quiet`: `settle_s`, at most `wait_s`,
    counting from `since` at the earliest), read them (folders listed now; paths that do
    not exist left out; relative ones taken from `base`), and set each episode's trajectory
    and recorded tool calls (in place). An episode whose task left the dataset gets a
    trajectory without turns; one whose target recorded its tool calls
    (engine.target_records) keeps that trajectory."""
    waited, quiet = wait_until_quiet(span_paths, settle_s=settle_s, wait_s=wait_s, since=since)
    files = spans_files(base, span_paths)
    index = load_spans(files)
    turns = {t.id: t.turns for t in tasks}
    for episode in episodes:
        if episode.aux.get("trajectory_source") == TRAJECTORY_SOURCE:
            continue  # recorded by its target (an AgentV batch record, CLI JSON): no spans to read
        # A scenario's turns are those held (the simulated user's included), not the dataset's.
        held = episode.conversation
        user_turns = held.user_messages if held is not None else turns.get(episode.task_id, [])
        trajectory = build_trajectory(index, episode.conversation_id, user_turns)
        episode.trace.trajectory = trajectory
        episode.trace.tool_calls = recorded_tool_calls(trajectory)
    # The index is dropped here: a partition's spans are most of its memory, and only
    # their count and what was skipped are reported.
    return RebuiltTrajectories(
        episodes=list(episodes),
        files=files,
        spans_read=len(index),
        skipped=index.messages(),
        waited_s=waited,
        quiet=quiet,
    )


def conversations_missing_spans(episodes: Sequence[Episode], span_paths: Sequence[Path], *, base: Path) -> set[str]:
    """The conversation ids of `episodes` whose spans are not all in the span files: fewer
    root spans than the turns the episode sent (a scenario's held user messages, else the
    events that carried a user input) — the agent was killed before its span exporter
    flushed them, and a verdict on that episode would rest on spans that are lost. An
    episode whose target recorded its trajectory, or that sent no turn, is never counted."""
    index = load_spans(spans_files(base, span_paths))
    missing: set[str] = set()
    for episode in episodes:
        if episode.aux.get("trajectory_source") == TRAJECTORY_SOURCE:
            continue
        held = episode.conversation
        sent = (
            len(held.user_messages)
            if held is not None
            else sum(1 for event in episode.trace.events if event.user_input is not None)
        )
        roots = [
            r
            for r in index.conversation_roots(episode.conversation_id)
            if r.span_id in planned_steps(index, r.trace_id)
        ]
        if sent and len(roots) < sent:
            missing.add(episode.conversation_id)
    return missing
