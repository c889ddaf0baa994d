"""bat_pipeline.storage: episode file names."""

from __future__ import annotations

from pathlib import Path

from bat_pipeline.engine.contracts import Episode
from bat_pipeline.storage import load_episodes, write_episode, write_episodes


def test_long_task_ids_are_stored_under_distinct_short_names_with_the_full_id_inside(tmp_path: Path):
    ids = ["é" * 300 + "/one", "é" * 300 + "/two", "short"]
    episodes = [Episode(model_name="openai:m", task_id=task_id, aux={"attempt_index": 1}) for task_id in ids]
    write_episodes(tmp_path, episodes[:2])
    write_episode(tmp_path, episodes[2])
    names = sorted(p.name for p in tmp_path.iterdir())
    assert len(names) == 3 and all(len(n.encode()) < 255 for n in names)
    assert "short__try1.json" in names
    assert sorted(e.task_id for e in load_episodes(tmp_path)) == sorted(ids)
