"""bat_pipeline.remote_root: a storage root on an object store, worked on through a local
mirror folder. The URL handling needs no store; the copies go to a real S3 server (moto's,
a process on 127.0.0.1) through s3fs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bat_pipeline import remote_root
from bat_pipeline.engine.errors import InputError
from bat_pipeline.locations import root_path
from bat_pipeline.remote_root import (
    CACHE_VAR,
    StoreError,
    pull_file,
    pull_tree,
    push_changed,
    remove_tree,
    root_text,
    url_of,
)
from bat_pipeline.storage import PartitionRef, latest_run_dir, partition_dir, save_ref, write_json
from bat_pipeline_tests.support.s3_server import s3_server

pytestmark = pytest.mark.slow(seconds=8)
BUCKET = "unit"


@pytest.fixture
def machine(monkeypatch, tmp_path):
    """Mirrors in a cache folder of this test's own (`machine(name)` switches to another
    machine's); the process's map of mirrors restored afterwards."""
    monkeypatch.setattr(remote_root, "_MIRRORS", dict(remote_root._MIRRORS))

    def use(name: str) -> Path:
        monkeypatch.setenv(CACHE_VAR, str(tmp_path / name))
        return tmp_path / name

    use("this_machine")
    return use


def test_an_object_store_url_maps_to_its_mirror_folder_and_back(machine, monkeypatch):
    from bat_pipeline.storage import HOME_VAR, default_root

    cache = machine("this_machine")
    folder = root_path("s3://bucket/team/evals/")
    assert folder == cache / "s3" / "bucket" / "team" / "evals"
    assert root_text(folder) == "s3://bucket/team/evals"
    assert url_of(folder / "runs" / "r" / "partition.json") == "s3://bucket/team/evals/runs/r/partition.json"
    assert url_of(cache / "s3" / "bucket" / "team") is None
    monkeypatch.setenv(HOME_VAR, "s3://bucket/team/evals")
    assert default_root() == folder


def test_paths_and_file_urls_stay_local_folders(machine, tmp_path):
    assert root_path(f"file://{tmp_path}/shared%20root") == tmp_path / "shared root"
    assert root_path(tmp_path / "plain") == tmp_path / "plain"
    assert url_of(tmp_path / "plain" / "runs") is None and root_text(tmp_path / "plain") == str(tmp_path / "plain")
    with pytest.raises(InputError, match="on this machine"):
        root_path("file://otherhost/results")


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("gs://bucket/results", "needs a package: Please install gcsfs"),
        ("nope://bucket/results", "a folder, a file:// URL or an object store fsspec knows, not nope://"),
        ("memory://bucket/results", "inside one process"),
        ("https://example.com/results", "read-only"),
        ("s3:///results", "expected s3://<bucket>/<prefix>"),
    ],
)
def test_a_root_url_no_installed_filesystem_can_hold_is_refused_in_one_line(machine, url, message):
    with pytest.raises(InputError, match=message) as refused:
        root_path(url)
    assert "\n" not in str(refused.value)


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    with s3_server(tmp_path_factory.mktemp("moto") / "moto.log") as server:
        server.bucket(BUCKET)
        yield server


@pytest.fixture
def on_s3(s3, machine, monkeypatch):
    """This process's S3 is the test server (s3fs instances made for another are dropped)."""
    import s3fs

    s3fs.S3FileSystem.clear_instance_cache()
    for name, value in s3.env.items():
        monkeypatch.setenv(name, value)
    yield s3
    s3fs.S3FileSystem.clear_instance_cache()


def test_a_json_file_is_on_the_store_when_its_write_returns(on_s3, request):
    url = f"s3://{BUCKET}/{request.node.name}"
    path = root_path(url) / "runs" / "r" / "m" / "episodes" / "t__try0.json"
    write_json(path, {"task_id": "t"})
    assert json.loads(on_s3.filesystem().cat_file(f"{url}/runs/r/m/episodes/t__try0.json")) == {"task_id": "t"}


def test_only_what_differs_moves_and_files_only_here_stay(on_s3, machine, request):
    url = f"s3://{BUCKET}/{request.node.name}"
    here = root_path(url) / "runs" / "r" / "m"
    write_json(here / "partition.json", {"episodes": 1})  # uploaded as written
    (here / "spans").mkdir()
    (here / "spans" / "agent.jsonl").write_text('{"span": 1}\n')  # as the agent writes it
    (here / ".partition.json.x.tmp").write_text("half")
    assert push_changed(here) == 1
    assert push_changed(here) == 0

    machine("other_machine")
    there = root_path(url) / "runs" / "r" / "m"
    assert there != here and not there.exists()
    (there / "notes.txt").parent.mkdir(parents=True)
    (there / "notes.txt").write_text("only on this machine")
    assert pull_tree(there) == 2
    assert (there / "spans" / "agent.jsonl").read_text() == '{"span": 1}\n'
    assert pull_tree(there) == 0
    on_s3.filesystem().pipe_file(f"{url}/runs/r/m/partition.json", b'{"episodes": 2}\n')  # another machine's
    assert pull_file(there / "partition.json") and json.loads((there / "partition.json").read_text()) == {"episodes": 2}
    assert (there / "notes.txt").is_file() and not (there / ".partition.json.x.tmp").exists()
    assert not pull_file(there / "missing.json")

    remove_tree(there)
    assert not there.exists() and not on_s3.filesystem().exists(f"{url}/runs/r/m")


def test_a_resume_finds_the_latest_run_of_a_model_on_the_store(on_s3, machine, request):
    url = f"s3://{BUCKET}/{request.node.name}"
    for run_id in ("20260101T000000Z-a", "20260102T000000Z-b"):
        folder = partition_dir(root_path(url), run_id, "m")
        save_ref(
            PartitionRef(
                run_id=run_id,
                run_name="n",
                agent_id="weather",
                model_key="m",
                model_name="openai:m",
                k=1,
                agent_dir=Path("/agents/weather"),
                dir=folder,
                output_dir=Path("/out"),
            )
        )
    machine("other_machine")
    root = root_path(url)
    assert not root.exists()
    assert latest_run_dir(root, "m", "weather") == root / "runs" / "20260102T000000Z-b" / "m"
    assert latest_run_dir(root, "m", "planner") is None


def test_a_bucket_that_is_not_there_fails_the_write_naming_the_object(on_s3):
    path = root_path("s3://no-such-bucket/results") / "runs" / "r" / "m" / "partition.json"
    with pytest.raises(
        StoreError, match=r"could not upload \S+ to s3://no-such-bucket/results/runs/r/m/partition\.json"
    ):
        write_json(path, {})


def test_a_judge_answer_kept_on_one_machine_is_found_on_another(on_s3, machine, request):
    from bat_pipeline.resources.judge_cache import JudgeCache

    url = f"s3://{BUCKET}/{request.node.name}"
    JudgeCache(root_path(url)).put("ab" * 32, '{"score": 1}', purpose="rubric")
    machine("other_machine")
    elsewhere = JudgeCache(root_path(url))
    assert elsewhere.get("cd" * 32, "ab" * 32) == '{"score": 1}'
    assert (elsewhere.hits, elsewhere.misses) == (1, 0)


def test_an_agent_that_cannot_start_leaves_its_log_on_the_store(on_s3, machine, request, tmp_path, scripted_llm):
    """The episodes step fails on its worker; what the agent printed is on the store for
    whoever looks into the failure from elsewhere."""
    from bat_pipeline.resources.agent_process import AgentStartError
    from bat_pipeline.resources.episodes import collect_episodes
    from bat_pipeline.resources.evaluation import EvaluationResource
    from bat_pipeline.resources.scripted_llm import ScriptedLlmResource
    from bat_pipeline_tests.support.example_agent import copy_example_agent

    url = f"s3://{BUCKET}/{request.node.name}"
    agent = copy_example_agent(
        tmp_path / "weather_agent",
        models=("openai-competent",),
        agent={"command": ["sh", "-c", "echo no model configured here; exit 3"]},
        evaluation={"agent_startup_timeout_s": 5},
    )
    evaluation = EvaluationResource(
        agent_dir=str(agent), storage_root=url, scripted_llm=ScriptedLlmResource(url=scripted_llm.url)
    )
    config = evaluation.config()
    with pytest.raises(AgentStartError, match="exited with code 3"):
        collect_episodes(
            config,
            evaluation.root,
            "openai-competent",
            evaluation.tasks(),
            run_id="r1",
            dagster_run_id=None,
            resume=False,
            redactor=evaluation.redactor(),
            log=lambda line: None,
        )
    log = on_s3.filesystem().cat_file(f"{url}/runs/r1/openai-competent/agent.log").decode()
    assert "no model configured here" in log
