"""What a process prepares before others fork from it: `bat-pipeline run` before its
partitions (partition_runs.warm_up) and the multiprocess executor's fork server before each
step (executors.FORKSERVER_PRELOAD). Each in a process of its own, as they run."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from bat_pipeline_tests.support.paths import dagster_home

WARM_UP = textwrap.dedent(
    """
    import gc, json, os, sys, threading
    from bat_pipeline.partition_runs import instance, warm_up

    os.environ["DAGSTER_HOME"] = sys.argv[1]
    warm_up()
    opened = instance()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # a partition: the instance it finds is the one opened, and it works here
        same = instance() is opened
        runs = len(instance().get_runs())
        os.write(write, json.dumps([same, runs]).encode())
        os._exit(0)
    os.waitpid(pid, 0)
    child = json.loads(os.read(read, 1000))
    frozen = gc.get_freeze_count()
    # What the multiprocess executor's fork server imports besides: no Dask (its own module).
    from bat_pipeline.executors import FORKSERVER_PRELOAD
    for name in FORKSERVER_PRELOAD[:-1]:
        __import__(name)
    dask = sorted(m for m in sys.modules if m.split(".")[0] in ("dask", "distributed", "dagster_dask"))
    print(json.dumps({"frozen": frozen, "threads": threading.active_count(), "child": child, "dask": dask[:5]}))
    """
)


def test_warm_up_opens_one_instance_for_every_partition_and_freezes_what_they_inherit(tmp_path):
    home = dagster_home(tmp_path / "dagster_home")
    done = subprocess.run(
        [sys.executable, "-c", WARM_UP, str(home)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    # Millions of objects (Dagster, matplotlib) out of the collector's care; no thread to
    # break the fork; the partition uses the instance as it finds it.
    assert found["frozen"] > 100_000 and found["threads"] == 1, found
    assert found["child"] == [True, 0]
    assert found["dask"] == [], found["dask"]
    assert (home / "history" / "runs.db").is_file()


def test_the_step_fork_server_freezes_what_it_preloaded_last():
    import gc
    import importlib

    from bat_pipeline import fork_ready
    from bat_pipeline.executors import FORKSERVER_PRELOAD

    # The server imports the list in order: fork_ready last, after Dagster and the pipeline.
    assert FORKSERVER_PRELOAD[-1] == "bat_pipeline.fork_ready"
    assert {"bat_pipeline.definitions", "bat_pipeline.engine.chart_drawing"} <= set(FORKSERVER_PRELOAD)
    gc.unfreeze()
    assert gc.get_freeze_count() == 0
    importlib.reload(fork_ready)  # what importing it does in the server
    assert gc.get_freeze_count() > 100_000


def test_the_step_fork_server_of_a_root_on_an_object_store_preloads_its_filesystem(tmp_path, monkeypatch):
    from bat_pipeline.executors import FORKSERVER_PRELOAD, forkserver_preload
    from bat_pipeline.locations import root_path
    from bat_pipeline.remote_root import CACHE_VAR

    monkeypatch.setenv(CACHE_VAR, str(tmp_path / "mirrors"))
    assert forkserver_preload(tmp_path / "home") == list(FORKSERVER_PRELOAD)
    # s3fs (each step's first read of the store imported it) before fork_ready freezes it all.
    on_store = forkserver_preload(root_path("s3://bucket/evals") / "runs")
    assert on_store == [*FORKSERVER_PRELOAD[:-1], "s3fs", "bat_pipeline.fork_ready"]
