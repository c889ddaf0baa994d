"""An agent that already runs (`agent.url`) and writes its spans where `agent.spans` says.

No process is started. Its span file outlives the run and holds other conversations with
the same task names (here: a failed earlier one), and the agent's exporter flushes in
batches (every second) after the conversations have ended. The run's trajectories come
from its own conversations only, read once the file has settled."""

from __future__ import annotations

import hashlib
import json
import re

import dagster as dg
import pytest

from bat_pipeline.engine.config import load_tasks
from bat_pipeline.engine.spans import load_spans
from bat_pipeline_tests.support.dagster_runs import episodes_in, evaluate, failure_messages, only_run_dir
from bat_pipeline_tests.support.example_agent import LLM_URL_VAR, copy_example_agent, launch_agent

pytestmark = pytest.mark.slow(seconds=5)

PARTITION = "openai-competent"
TASKS = ("weather_paris", "add_numbers", "clarify_then_weather")


def earlier_failed_root(conversation: str) -> dict:
    """The root of a failed request of an earlier run, with a conversation id this run's
    `<task>__try<n>` would also have, started before anything of this run."""
    trace = hashlib.sha256(conversation.encode()).hexdigest()[:32]
    return {
        "name": "invoke_agent",
        "kind": "SERVER",
        "trace_id": trace,
        "span_id": trace[:16],
        "parent_span_id": None,
        "start_time": 1,
        "end_time": 2,
        "status": "ERROR",
        "status_description": "an earlier run's request",
        "attributes": {"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": conversation},
        "events": [],
    }


@pytest.fixture
def running_agent(scripted_llm, tmp_path):
    agent = launch_agent(tmp_path / "running", scripted_llm.url, "competent").wait_ready()
    try:
        yield agent
    finally:
        agent.stop()


def test_agent_at_url_is_read_from_its_own_conversations_once_its_spans_settle(
    scripted_llm, running_agent, tmp_path, monkeypatch
):
    monkeypatch.setenv(LLM_URL_VAR, scripted_llm.url)
    spans_file = running_agent.spans_file
    spans_file.parent.mkdir(parents=True, exist_ok=True)
    plain = [f"{task}__try0" for task in TASKS]
    spans_file.write_text("".join(json.dumps(earlier_failed_root(c)) + "\n" for c in plain))
    # The example agent's exporter writes every second: the files count as settled after
    # longer than that without a change.
    agent = copy_example_agent(
        tmp_path / "eval_agent",
        tasks=TASKS,
        models=("competent",),
        evaluation={"concurrency": len(TASKS), "qualitative": False, "spans_settle_s": 1.5},
        agent={"command": None, "url": running_agent.url, "spans": [str(spans_file)]},
    )
    root = tmp_path / "home"
    instance = dg.DagsterInstance.ephemeral()
    try:
        result = evaluate(agent, root, instance, PARTITION)
    finally:
        instance.dispose()
    assert result.success, failure_messages(result)

    run_dir = only_run_dir(root, PARTITION)
    assert not (run_dir / "agent.log").exists() and not list(run_dir.glob("spans/*.jsonl"))
    ref = json.loads((run_dir / "partition.json").read_text())
    assert ref["span_files"][0] == str(spans_file)
    episodes = episodes_in(run_dir)
    assert len(episodes) == len(TASKS)
    turns = {t.id: len(t.turns) for t in load_tasks(agent / "eval" / "input" / "tasks.json")}
    index = load_spans([spans_file])
    for name, episode in episodes.items():
        conversation = episode["aux"]["conversation_id"]
        assert re.fullmatch(rf"{re.escape(episode['task_id'])}__try0-r[0-9a-f]{{8}}", conversation), conversation
        assert len(index.conversation_roots(conversation)) == turns[episode["task_id"]]
        assert episode["trace"]["trajectory"]["found"], name
        assert episode["verdict"]["passed"], episode["verdict"]["reason"]
