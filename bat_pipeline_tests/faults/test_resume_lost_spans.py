"""An agent SIGKILLed mid-run takes with it the spans its exporter had not flushed yet (the
example agent exports every second): the episodes it had completed are stored, their
trajectories are lost. A resume holds those conversations again, with the ones the kill
cut short, so that every verdict rests on spans that exist: the resumed run passes
everything an uninterrupted run passes, no verdict says "no spans found"."""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path

import dagster as dg
import pytest

from bat_pipeline.assets.common import RESUME_TAG
from bat_pipeline.engine.verdicts import NO_SPANS
from bat_pipeline_tests.support.dagster_runs import episodes_in, evaluate, failure_messages, only_run_dir
from bat_pipeline_tests.support.example_agent import FEW_TASKS, LLM_URL_VAR, copy_example_agent, edit_eval
from bat_pipeline_tests.support.polling import wait_for
from bat_pipeline_tests.support.processes import assert_no_process_left, belonging_to

pytestmark = pytest.mark.slow(seconds=10)

PARTITION = "openai-competent"
K = 2
EPISODES = len(FEW_TASKS) * K


class KillAfterFirstEpisode(threading.Thread):
    """SIGKILLs the agent's whole process group once the partition's first episode exists."""

    def __init__(self, root: Path, agent: Path):
        super().__init__(daemon=True)
        self.root, self.agent = root, agent
        self.first: str | None = None

    def run(self) -> None:
        files = wait_for(
            lambda: sorted(self.root.glob(f"runs/*/{PARTITION}/episodes/*.json")), 120, 0.01, "the first episode"
        )
        self.first = files[0].stem
        for group in {os.getpgid(p.pid) for p in belonging_to(self.agent)} - {os.getpgrp()}:
            os.killpg(group, signal.SIGKILL)


def _drop_conversation(spans: Path, conversation: str) -> None:
    """Remove every span of `conversation`'s traces from the span file: the state a kill an
    instant earlier leaves (the example agent flushes once a second, so a kill right after
    an episode is stored nearly always finds its spans unwritten; this makes it certain)."""
    lines = spans.read_text().splitlines(keepends=True) if spans.exists() else []
    traces = {
        span["trace_id"]
        for span in map(json.loads, lines)
        if (span.get("attributes") or {}).get("gen_ai.conversation.id") == conversation
    }
    spans.write_text("".join(line for line in lines if json.loads(line)["trace_id"] not in traces))


def test_resume_holds_again_the_completed_episodes_whose_spans_the_kill_lost(scripted_llm, tmp_path, monkeypatch):
    monkeypatch.setenv(LLM_URL_VAR, scripted_llm.url)
    agent = copy_example_agent(tmp_path / "agent", tasks=FEW_TASKS, k=K, models=("competent",))
    root = tmp_path / "home"
    edit_eval(agent, evaluation={"concurrency": 1})
    scripted_llm.set_model("competent", latency_ms=150)
    instance = dg.DagsterInstance.ephemeral()
    try:
        killer = KillAfterFirstEpisode(root, agent)
        killer.start()
        try:
            result = evaluate(agent, root, instance, PARTITION)
        finally:
            killer.join(10)
            scripted_llm.set_model("competent", latency_ms=0)
        assert result.success, failure_messages(result)
        assert_no_process_left(agent)
        run_dir = only_run_dir(root, PARTITION)
        killed = episodes_in(run_dir)
        first = killed[killer.first]
        assert first["final_status"] == "completed" and not first["aux"].get("eval_error")
        assert any(e["aux"].get("eval_error") for e in killed.values())
        _drop_conversation(run_dir / "spans" / "agent.jsonl", killer.first)
        trajectories = evaluate(agent, root, instance, PARTITION, assets=["span_trajectories", "episode_verdicts"])
        assert trajectories.success, failure_messages(trajectories)
        assert NO_SPANS in json.dumps(episodes_in(run_dir)[killer.first]["verdict"])  # what the kill left

        resumed = evaluate(agent, root, instance, PARTITION, tags={RESUME_TAG: "true"})
        assert resumed.success, failure_messages(resumed)
    finally:
        instance.dispose()
    assert_no_process_left(agent)
    assert only_run_dir(root, PARTITION) == run_dir
    episodes = episodes_in(run_dir)
    assert len(episodes) == EPISODES
    assert episodes[killer.first]["aux"]["conversation_id"].startswith(f"{killer.first}-r")  # held again
    for name, episode in episodes.items():
        assert episode["verdict"]["passed"], (name, episode["verdict"])
        assert NO_SPANS not in json.dumps(episode["verdict"]), name
        assert episode["trace"]["trajectory"]["found"], name
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["summary"]["passed"] == EPISODES
