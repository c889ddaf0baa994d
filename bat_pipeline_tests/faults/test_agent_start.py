"""An agent that never gets ready, exits at start, or wants a port that is taken: the
partition fails fast with the agent's log, and nothing is left running or modified."""

from __future__ import annotations

import socket

import dagster as dg
import pytest

from bat_pipeline_tests.support.dagster_runs import evaluate, failure_messages, only_run_dir
from bat_pipeline_tests.support.example_agent import FAULT_TASKS, LLM_URL_VAR, copy_example_agent, edit_eval
from bat_pipeline_tests.support.files import user_file_hashes
from bat_pipeline_tests.support.processes import assert_no_process_left

pytestmark = pytest.mark.slow(seconds=4)

PARTITION = "openai-competent"
MODEL_KEY = "sk-canary-start-V3n8q"


@pytest.fixture(scope="module")
def agent(scripted_llm, tmp_path_factory):
    folder = copy_example_agent(
        tmp_path_factory.mktemp("agent_start") / "agent",
        tasks=FAULT_TASKS,
        models=("competent",),
        evaluation={"agent_startup_timeout_s": 2, "agent_shutdown_timeout_s": 2},
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(LLM_URL_VAR, scripted_llm.url)
        mp.setenv("OPENAI_API_KEY", MODEL_KEY)
        yield folder


def _step_seconds(instance, run_id: str, step: str) -> float:
    """From the step's start to its failure, as recorded in the run's event log."""
    times = {
        e.dagster_event.event_type_value: e.timestamp
        for e in instance.all_logs(run_id)
        if e.dagster_event is not None and (e.dagster_event.step_key or "").endswith(f"__{step}")
    }
    return times["STEP_FAILURE"] - times["STEP_START"]


def _start_with(agent, tmp_path, command: list[str]):
    edit_eval(agent, agent={"command": command})
    before = user_file_hashes(agent)
    root = tmp_path / "home"
    instance = dg.DagsterInstance.ephemeral()
    result = evaluate(agent, root, instance, PARTITION, assets=["task_specs", "agent_episodes"])
    assert not result.success
    elapsed = _step_seconds(instance, result.run_id, "agent_episodes")
    assert_no_process_left(agent)
    assert user_file_hashes(agent) == before
    log = only_run_dir(root, PARTITION) / "agent.log"
    events = "\n".join(repr(entry) for entry in instance.all_logs(result.run_id))
    assert "starting agent" in events and MODEL_KEY not in events
    assert MODEL_KEY not in log.read_text()
    return " ".join(failure_messages(result)), log, elapsed


def test_agent_that_never_answers_fails_within_the_startup_timeout(agent, tmp_path):
    message, log, elapsed = _start_with(
        agent, tmp_path, ["{python}", "-c", "import time; print('sleeping', flush=True); time.sleep(600)", str(agent)]
    )
    assert "did not answer" in message and "within 2s" in message
    assert str(log) in message and "sleeping" in message
    # The 2 s startup timeout, then SIGTERM (the sleeping process dies at once).
    assert 2 <= elapsed < 10


def test_agent_exiting_at_start_shows_its_last_log_lines(agent, tmp_path):
    # The model key on the command line and in the log: redacted in both.
    message, log, _ = _start_with(
        agent,
        tmp_path,
        ["{python}", "-c", "import sys; print('boom', sys.argv[1]); sys.exit(3)", MODEL_KEY, str(agent)],
    )
    assert "exited with code 3" in message and "boom [redacted]" in message and str(log) in message
    assert MODEL_KEY not in message
    assert "boom [redacted]" in log.read_text()


def test_agent_with_a_fixed_port_that_is_taken_fails_clearly(agent, tmp_path):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        bind_fixed = "import socket, sys; socket.socket().bind(('127.0.0.1', int(sys.argv[1])))"
        message, _, _ = _start_with(agent, tmp_path, ["{python}", "-c", bind_fixed, str(port), str(agent)])
    assert "Address already in use" in message and "exited with code 1" in message
    assert "found its port taken 3 times" in message and "`{port}` in agent.command" in message
