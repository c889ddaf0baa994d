"""Judge calls in flight are bounded across processes and threads: slot lock files under the
storage root, against the scripted model server, which counts the requests it holds at once."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from bat_pipeline.engine.contracts import JudgeSettings
from bat_pipeline.resources.judge import JUDGE_SLOTS, JudgeResource, judge_episodes
from bat_pipeline.resources.slots import SlotPool
from bat_pipeline_tests.support.judge_server import weather_episode, weather_task

KEY = "sk-slots-test-key-5d1e"
BOUND = 3
EPISODES = 8
PROCESSES = 2

# One partition's judging in a process of its own: builds the client as the judge_scores
# asset does, says READY, waits for the go file, judges, prints its stats.
PARTITION = """\
import asyncio, json, sys, time
from pathlib import Path
from bat_pipeline.engine.contracts import JudgeSettings
from bat_pipeline.resources.judge import JudgeResource, judge_episodes
from bat_pipeline_tests.support.judge_server import weather_episode, weather_task

base_url, root, go, bound, episodes = sys.argv[1:6]
settings = JudgeSettings(provider="openai", model="judge", base_url=base_url, mode="outcome",
                         max_concurrency=int(bound), max_retries=0)
client = JudgeResource(storage_root=root, use_cache=False).client(settings)
print("READY", flush=True)
while not Path(go).exists():
    time.sleep(0.002)
result = asyncio.run(judge_episodes(client, [weather_episode(attempt=i) for i in range(int(episodes))],
                                           [weather_task()]))
print(result.stats.model_dump_json(), flush=True)
"""

HOLD_A_SLOT = """\
import sys
from pathlib import Path
from bat_pipeline.resources.slots import SlotPool
fd = SlotPool(Path(sys.argv[1]), 1).try_take()
print("HELD" if fd is not None else "FULL", flush=True)
sys.stdin.read()
"""


def _settings(base_url: str) -> JudgeSettings:
    return JudgeSettings(
        provider="openai", model="judge", base_url=base_url, mode="outcome", max_concurrency=BOUND, max_retries=0
    )


@pytest.fixture
def llm(scripted_llm):
    """The session's scripted server, its judge answering after 60 ms for the test."""
    with scripted_llm.restoring():
        scripted_llm.set_model("judge", latency_ms=60)
        scripted_llm.clear_stats()
        yield scripted_llm


def test_partitions_in_separate_processes_share_the_bound(llm, tmp_path):
    go = tmp_path / "go"
    env = {**os.environ, "OPENAI_API_KEY": KEY}
    repo = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [repo, env.get("PYTHONPATH")]))
    partitions = [
        subprocess.Popen(
            [sys.executable, "-c", PARTITION, llm.url, str(tmp_path), str(go), str(BOUND), str(EPISODES)],
            env=env,
            stdout=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        for _ in range(PROCESSES)
    ]
    try:
        assert [p.stdout.readline().strip() for p in partitions] == ["READY"] * PROCESSES
        llm.clear_stats()
        go.touch()
        outputs = [p.communicate(timeout=60)[0] for p in partitions]
    finally:
        for p in partitions:
            if p.poll() is None:
                p.kill()
    assert [p.returncode for p in partitions] == [0] * PROCESSES, outputs
    for out in outputs:
        stats = json.loads(out.strip().splitlines()[-1])
        assert stats["requests"] == EPISODES and stats["failures"] == 0
    assert llm.count(model="judge") == PROCESSES * EPISODES
    assert llm.stats()["max_in_flight"] == BOUND  # each process alone holds BOUND: together never more
    assert len(list((tmp_path / JUDGE_SLOTS).glob("slot-*.lock"))) == BOUND


def test_threads_of_one_process_share_the_bound(llm, tmp_path):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPENAI_API_KEY", KEY)
        clients = [
            JudgeResource(storage_root=str(tmp_path), use_cache=False).client(_settings(llm.url)) for _ in range(3)
        ]
    results = []

    def judge(client) -> None:
        episodes = [weather_episode(attempt=i) for i in range(EPISODES)]
        results.append(asyncio.run(judge_episodes(client, episodes, [weather_task()])))

    threads = [threading.Thread(target=judge, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(results) == 3 and all(r.stats.failures == 0 for r in results)
    assert llm.stats()["max_in_flight"] == BOUND


def test_a_slot_is_given_back_on_cancellation(tmp_path):
    pool = SlotPool(tmp_path / "slots", 1)

    async def scenario() -> None:
        entered = asyncio.Event()

        async def hold() -> None:
            async with pool.slot():
                entered.set()
                await asyncio.sleep(60)

        holder = asyncio.create_task(hold())
        await entered.wait()
        waiter = asyncio.create_task(hold())
        await asyncio.sleep(0.05)
        assert not waiter.done() and pool.try_take() is None
        waiter.cancel()
        holder.cancel()
        await asyncio.gather(holder, waiter, return_exceptions=True)
        async with asyncio.timeout(1):
            async with pool.slot():
                pass

    asyncio.run(scenario())


def test_a_killed_holder_leaks_no_slot(tmp_path):
    folder = tmp_path / "slots"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_A_SLOT, str(folder)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "HELD"
        pool = SlotPool(folder, 1)
        assert pool.try_take() is None
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(10)
        fd = pool.try_take()
        assert fd is not None
        SlotPool.give_back(fd)
    finally:
        if holder.poll() is None:
            holder.kill()
