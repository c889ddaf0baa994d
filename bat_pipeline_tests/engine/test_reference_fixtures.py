"""Trajectories rebuilt from real bat-adk spans equal the reference evaluator's (SPEC §5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bat_pipeline.engine.spans import load_spans
from bat_pipeline.engine.trajectories import build_trajectory, recorded_tool_calls
from bat_pipeline_tests.support.paths import REFERENCE

EPISODES = sorted(REFERENCE.glob("*/episodes/*.json"))


def turns_of(task_id: str) -> list[str]:
    tasks = json.loads((REFERENCE / "tasks.json").read_text())
    return next(t["turns"] for t in tasks if t["id"] == task_id)


_indexes: dict[Path, object] = {}


def index_for(folder: Path):
    if folder not in _indexes:
        _indexes[folder] = load_spans([folder / "spans.jsonl"])
    return _indexes[folder]


@pytest.mark.parametrize("path", EPISODES, ids=lambda p: f"{p.parents[1].name}/{p.stem}")
def test_trajectory_and_tool_calls_match_reference(path: Path):
    episode = json.loads(path.read_text())
    index = index_for(path.parents[1])
    conversation = f"{episode['task_id']}__try{episode['aux']['attempt_index']}"

    trajectory = build_trajectory(index, conversation, turns_of(episode["task_id"]))

    assert trajectory.model_dump(mode="json") == episode["trace"]["trajectory"]
    calls = [c.model_dump(mode="json") for c in recorded_tool_calls(trajectory)]
    assert calls == episode["trace"]["tool_calls"]


def test_reference_files_read_without_skipped_lines():
    for folder in ("good", "bad"):
        index = index_for(REFERENCE / folder)
        assert index.messages() == []
        assert index.files[0].spans == len(index) > 0
