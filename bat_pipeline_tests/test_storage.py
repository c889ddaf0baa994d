"""bat_pipeline.storage: episode file names and the span files a partition hands on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bat_pipeline.engine.contracts import Episode
from bat_pipeline.engine.errors import InputError
from bat_pipeline.storage import PartitionRef, load_episodes, load_ref, store_episodes


def test_long_task_ids_are_stored_under_distinct_short_names_with_the_full_id_inside(tmp_path: Path):
    ids = ["é" * 300 + "/one", "é" * 300 + "/two", "short"]
    episodes = [Episode(model_name="openai:m", task_id=task_id, aux={"attempt_index": 1}) for task_id in ids]
    ref = _ref(tmp_path)
    store_episodes(ref, episodes[:2])
    store_episodes(ref, episodes[1:])
    names = sorted(p.name for p in ref.episodes_dir.iterdir())
    assert len(names) == 3 and all(len(n.encode()) < 255 for n in names)
    assert "short__try1.json" in names and sorted(ref.episode_files) == names
    assert sorted(e.task_id for e in load_episodes(ref)) == sorted(ids)


def _ref(tmp_path: Path) -> PartitionRef:
    return PartitionRef(
        run_id="r",
        run_name="n",
        model_key="m",
        model_name="openai:m",
        k=1,
        agent_dir=tmp_path / "agent",
        dir=tmp_path / "runs" / "r" / "m",
        output_dir=tmp_path / "out",
    )


def test_a_partition_reads_the_episode_files_its_record_lists(tmp_path: Path):
    ref = _ref(tmp_path)
    store_episodes(ref, [Episode(model_name="openai:m", task_id="kept", aux={"attempt_index": 0})], save_record=True)
    assert load_ref(ref.dir).episode_files == ["kept__try0.json"]
    stray = Episode(model_name="openai:m", task_id="stray", aux={"attempt_index": 0})
    (ref.episodes_dir / "stray__try0.json").write_text(stray.model_dump_json())  # in the folder, not recorded
    ref.episode_files.append("killed__try0.json")  # recorded, never written
    assert [e.task_id for e in load_episodes(ref)] == ["kept"]


def test_an_episode_file_with_a_negative_count_is_refused_naming_the_file_and_the_field(tmp_path: Path):
    ref = _ref(tmp_path)
    store_episodes(ref, [Episode(model_name="openai:m", task_id="edited", aux={"attempt_index": 0})])
    path = ref.episodes_dir / "edited__try0.json"
    data = json.loads(path.read_text())
    data["trace"]["trajectory"]["totals"]["tokens_out"] = -5
    path.write_text(json.dumps(data))
    with pytest.raises(InputError) as refused:
        load_episodes(ref)
    assert refused.value.file == str(path)
    assert refused.value.field == "trace.trajectory.totals.tokens_out"
    assert "must be at least 0, got -5" in str(refused.value)


def test_span_files_inside_the_partition_are_recorded_relative_to_it(tmp_path: Path):
    ref = _ref(tmp_path)
    own = ref.spans_dir / "agent.jsonl"
    shared = tmp_path / "agent" / "spans" / "agent.jsonl"
    ref.add_span_files([own, shared])
    ref.add_span_files([own, ref.spans_dir / "agent-resume-1.jsonl"])
    assert ref.span_files == ["spans/agent.jsonl", str(shared), "spans/agent-resume-1.jsonl"]
    assert ref.span_paths() == [own, shared, ref.spans_dir / "agent-resume-1.jsonl"]
    assert ref.own_span_files() == [own, ref.spans_dir / "agent-resume-1.jsonl"]
    moved = PartitionRef.model_validate({**ref.model_dump(mode="json"), "dir": str(tmp_path / "elsewhere")})
    assert moved.own_span_files()[0] == tmp_path / "elsewhere" / "spans" / "agent.jsonl"


def test_the_latest_run_of_a_model_is_the_agents_own(tmp_path: Path):
    from bat_pipeline.storage import latest_run_dir, partition_dir, save_ref

    def partition(run_id: str, agent_id: str, agent_dir: str) -> Path:
        folder = partition_dir(tmp_path, run_id, "m")
        save_ref(
            PartitionRef(
                run_id=run_id,
                run_name="n",
                agent_id=agent_id,
                model_key="m",
                model_name="openai:m",
                k=1,
                agent_dir=tmp_path / agent_dir,
                dir=folder,
                output_dir=tmp_path / "out",
            )
        )
        return folder

    old_weather = partition("20260101T000000Z-a", "", "weather")  # recorded before agents had an id
    planner = partition("20260102T000000Z-b", "planner", "planner")
    assert latest_run_dir(tmp_path, "m", "weather") == old_weather
    assert latest_run_dir(tmp_path, "m", "planner") == planner
    assert latest_run_dir(tmp_path, "m") == planner
    assert latest_run_dir(tmp_path, "m", "nobody") is None


def test_a_partition_record_names_its_folder_relative_to_the_storage_root(tmp_path: Path):
    import json

    from bat_pipeline.storage import save_ref

    ref = _ref(tmp_path)
    save_ref(ref)
    assert json.loads((ref.dir / "partition.json").read_text())["dir"] == "runs/r/m"
    # Another worker mounts the same root elsewhere: the record resolves against its folder.
    mounted = tmp_path / "mount"
    (tmp_path / "runs").rename(mounted)
    assert load_ref(mounted / "r" / "m").dir == mounted / "r" / "m"


def test_an_older_record_with_an_absolute_folder_is_read_where_it_lies(tmp_path: Path):
    import json

    old = _ref(tmp_path).model_dump(mode="json") | {
        "dir": "/somewhere/else/runs/r/m",
        "span_files": ["spans/agent.jsonl"],
        "episode_files": ["a.json"],
    }
    folder = tmp_path / "runs" / "r" / "m"
    folder.mkdir(parents=True)
    (folder / "partition.json").write_text(json.dumps(old))
    ref = load_ref(folder)
    assert ref.dir == folder and ref.episodes_dir == folder / "episodes"
    assert ref.span_paths() == [folder / "spans" / "agent.jsonl"]


def test_the_storage_root_may_be_a_file_url(tmp_path: Path):
    import pytest

    from bat_pipeline.engine.errors import InputError
    from bat_pipeline.locations import root_path

    assert root_path(f"file://{tmp_path}/shared%20root") == tmp_path / "shared root"
    assert root_path(tmp_path / "plain") == tmp_path / "plain"
    with pytest.raises(InputError, match="nope://"):
        root_path("nope://bucket/results")  # object stores: test_remote_root.py


def test_the_warehouse_may_live_outside_the_storage_root(tmp_path: Path, monkeypatch):
    from bat_pipeline.locations import WAREHOUSE_VAR
    from bat_pipeline.storage import warehouse_path

    assert warehouse_path(tmp_path / "root") == tmp_path / "root" / "warehouse.duckdb"
    monkeypatch.setenv(WAREHOUSE_VAR, str(tmp_path / "shared" / "history.duckdb"))
    assert warehouse_path(tmp_path / "root") == tmp_path / "shared" / "history.duckdb"


def test_a_lone_surrogate_in_an_answer_is_stored_as_a_replacement_character(tmp_path: Path):
    """JSON lets an agent or a judge answer "\\ud800"; the episode file and the warehouse
    still take it (as U+FFFD), where the write used to fail the whole step (issue 38)."""
    from bat_pipeline.engine.contracts import ScoreRow, Verdict
    from bat_pipeline.resources.warehouse import Warehouse

    answer = json.loads('"Paris \\ud800 sunny \\ud83d\\ude00"')  # one lone surrogate, one pair
    episode = Episode(
        model_name="openai:m",
        task_id="t",
        final_output=answer,
        verdict=Verdict(passed=False, reason=f"output: {answer}"),
        scores=[ScoreRow(scorer="choice", criterion="outcome", value=0.5, judge="openai:j", reason=answer)],
        aux={"attempt_index": 0},
    )
    ref = _ref(tmp_path)
    store_episodes(ref, [episode])
    stored = load_episodes(ref)[0]
    assert stored.final_output == "Paris \ufffd sunny \U0001f600" and stored.scores[0].reason == stored.final_output
    warehouse = Warehouse(tmp_path / "warehouse.duckdb")
    warehouse.write_partition(ref, [episode])
    import duckdb

    with duckdb.connect(str(tmp_path / "warehouse.duckdb"), read_only=True) as conn:
        rows = conn.execute("SELECT final_output FROM episodes").fetchall()
    assert rows == [("Paris \ufffd sunny \U0001f600",)]
