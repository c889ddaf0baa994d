"""Two `bat-pipeline run --resume` of the same agent and model at once: the second is
refused (exit 1, naming the model and the run that holds it) while the first runs, and the
first's results are whole; once the first has ended, a resume runs (the lock went with it).

The first run's agent waits, before it starts, for the test to write to a FIFO: the
second run is tried while the first holds its partition for sure."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path

import pytest

from bat_pipeline.resources.partition_lock import lock_path
from bat_pipeline_tests.support.dagster_runs import episodes_in, only_run_dir
from bat_pipeline_tests.support.example_agent import JUDGE_KEY_VAR, LLM_URL_VAR, copy_example_agent
from bat_pipeline_tests.support.paths import BAT_PIPELINE
from bat_pipeline_tests.support.polling import wait_for
from bat_pipeline_tests.support.processes import assert_no_process_left, start_logged

pytestmark = pytest.mark.slow(seconds=12)

PARTITION = "openai-competent"
TASKS = ("weather_paris", "add_numbers")

# The example agent, once something has been written to the FIFO named in argv[1].
GATED = """\
import os, sys
with open(sys.argv[1]) as gate:
    gate.read()
os.execv(sys.executable, [sys.executable, "-m", "bat_pipeline.example.agent"])
"""


def _release(gate: Path) -> bool:
    """Let the gated agent start; False when it is not waiting at the gate (yet)."""
    try:
        fd = os.open(gate, os.O_WRONLY | os.O_NONBLOCK)  # ENXIO while no one reads the FIFO
    except OSError:
        return False
    with contextlib.suppress(OSError):
        os.write(fd, b"go\n")
    os.close(fd)
    return True


def _release_when_waiting(gate: Path, first) -> None:
    """Release the first run's agent once it waits at the gate (its process may still be
    starting, on a loaded machine), unless the first run ended without getting there."""
    with contextlib.suppress(AssertionError):
        wait_for(lambda: _release(gate) or first.poll() is not None, 60, what="the agent at its gate")


def test_a_second_run_of_a_partition_is_refused_while_the_first_runs(scripted_llm, tmp_path):
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    (tmp_path / "gated.py").write_text(GATED)
    agent = copy_example_agent(
        tmp_path / "agent",
        tasks=TASKS,
        models=("competent",),
        agent={"command": ["{python}", str(tmp_path / "gated.py"), str(gate)]},
    )
    root = tmp_path / "home"
    env = {name: value for name, value in os.environ.items() if not name.startswith(("BAT_", "DAGSTER_"))}
    env.update(
        {
            LLM_URL_VAR: scripted_llm.url,
            JUDGE_KEY_VAR: "scripted-judge-takes-any-key",
            "BAT_PIPELINE_HOME": str(root),
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        }
    )

    def resume(name: str):
        return start_logged(
            [str(BAT_PIPELINE), "run", "--resume", str(agent)], cwd=tmp_path, env=env, log_path=tmp_path / name
        )

    lock = lock_path(root, "agent", PARTITION)
    first = resume("first.log")
    try:
        # The first run's record is there: its agent is starting, held at the gate.
        wait_for(lambda: list(root.glob(f"runs/*/{PARTITION}/partition.json")), 60, what="the first run's record")
        second = resume("second.log")
        assert second.wait(60) == 1, (tmp_path / "second.log").read_text()[-3000:]
        said = (tmp_path / "second.log").read_text()
        holder = lock.read_text().split(",")[0]
        assert holder == f"pid {first.pid}"
        assert f"error: model {PARTITION} of agent agent is being evaluated by another run ({holder}," in said
        assert "Traceback" not in said and "evaluating" not in said
        assert first.poll() is None  # the refusal came while the first held the partition
    finally:
        _release_when_waiting(gate, first)
    assert first.wait(180) == 0, (tmp_path / "first.log").read_text()[-3000:]
    run_dir = only_run_dir(root, PARTITION)
    episodes = episodes_in(run_dir)
    assert len(episodes) == len(TASKS) and all(e["verdict"]["passed"] for e in episodes.values())
    assert json.loads((run_dir / "partition.json").read_text())["span_files"][0] == "spans/agent.jsonl"

    # The lock went with the first run: a resume now runs, with nothing left to hold.
    _release(gate)
    third = resume("third.log")
    assert third.wait(180) == 0, (tmp_path / "third.log").read_text()[-3000:]
    assert only_run_dir(root, PARTITION) == run_dir
    assert len(episodes_in(run_dir)) == len(TASKS)
    assert_no_process_left(agent)
