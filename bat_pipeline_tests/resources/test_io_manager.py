"""Step outputs are written whole or not at all: partitions run at once read the
unpartitioned `task_specs` while another partition writes it."""

from __future__ import annotations

import pickle
import threading
from pathlib import Path

from upath import UPath

from bat_pipeline.resources.io_manager import AtomicFilesystemIOManager, AtomicPickleIOManager
from bat_pipeline_tests.support.example_agent import copy_example_agent

BIG = [{"id": f"task_{i}", "turns": ["What is the weather in Paris?"] * 20} for i in range(4000)]


def torn_reads(manager, path: UPath, writes: int = 30) -> list[str]:
    """What a reader saw go wrong while `manager` wrote BIG over `path` again and again."""
    manager.dump_to_path(None, BIG, path)
    done, seen = threading.Event(), []

    def read() -> None:
        while not done.is_set():
            try:
                assert len(manager.load_from_path(None, path)) == len(BIG)
            except (EOFError, pickle.UnpicklingError, AssertionError) as error:
                seen.append(repr(error))

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for _ in range(writes):
            manager.dump_to_path(None, BIG, path)
    finally:
        done.set()
        reader.join(30)
    return seen


def test_a_reader_never_sees_a_half_written_output(tmp_path: Path):
    manager = AtomicPickleIOManager(base_path=UPath(tmp_path))
    path = UPath(tmp_path) / "agent" / "task_specs"
    assert torn_reads(manager, path) == []
    assert [p.name for p in path.parent.iterdir()] == ["task_specs"]  # no temporary file left


def test_the_guard_sees_torn_reads_of_a_writer_in_place(tmp_path: Path):
    # Dagster's own manager (what fs_io_manager makes; not exported) truncates the file, then
    # writes into it.
    from dagster._core.storage.fs_io_manager import PickledObjectFilesystemIOManager

    assert torn_reads(PickledObjectFilesystemIOManager(base_dir=str(tmp_path)), UPath(tmp_path) / "task_specs")


def test_the_definitions_use_it(tmp_path: Path, scripted_llm, monkeypatch):
    from bat_pipeline.definitions import build_definitions

    monkeypatch.setenv("BAT_DEMO_LLM_URL", scripted_llm.url)
    defs = build_definitions(copy_example_agent(tmp_path / "weather_agent"), tmp_path / "home")
    assert isinstance(defs.resources["io_manager"], AtomicFilesystemIOManager)
