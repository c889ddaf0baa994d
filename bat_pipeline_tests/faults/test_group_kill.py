"""Nothing the pipeline starts outlives it (issue 38, point 13): `bat-pipeline run` SIGKILLed
(itself, not its group) while its agent starts leaves no process of the agent's group a
second later — PR_SET_PDEATHSIG reaches only the agent's first process, the group's
watchdog (resources/group_watchdog.py) the rest; and a script grader's daemonised child
neither turns its answer into "timed out" nor escapes when the grader ends."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time

from bat_pipeline.resources.graders import GraderRunner
from bat_pipeline_tests.support.example_agent import copy_example_agent, pipeline_env
from bat_pipeline_tests.support.paths import BAT_PIPELINE
from bat_pipeline_tests.support.processes import processes

MARK = "61.4037"
"""In the agent's command line: `sleep MARK` is found in the process table by it."""


def _with_mark(mark: str) -> list[int]:
    return [p.pid for p in processes() if mark in p.cmdline]


def _sleeps() -> list[int]:
    """The agent's two `sleep` processes (not the shell, whose command line holds the text)."""
    return [p.pid for p in processes() if p.cmdline.strip() == f"sleep {MARK}"]


def _until(condition, limit_s: float) -> bool:
    """Whether `condition()` holds within `limit_s` (checked every 20 ms)."""
    deadline = time.monotonic() + limit_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_sigkill_of_run_while_its_agent_starts_leaves_no_agent_process_a_second_later(tmp_path):
    # An agent that never gets ready, whose first process (the shell) has two children:
    # PR_SET_PDEATHSIG would end the shell only.
    agent = copy_example_agent(
        tmp_path / "agent",
        models=("openai-competent",),
        agent={"command": ["sh", "-c", f"sleep {MARK} & sleep {MARK}; wait"]},
        evaluation={"agent_startup_timeout_s": 120},
    )
    env = pipeline_env(agent, tmp_path / "home", "http://127.0.0.1:9")
    with open(tmp_path / "run.log", "wb") as log:
        run = subprocess.Popen(
            [str(BAT_PIPELINE), "run", str(agent)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        started = _until(lambda: len(_sleeps()) == 2 and _with_mark("group_watchdog.py"), limit_s=60)
        assert started, (tmp_path / "run.log").read_text()[-3000:]
        members = _sleeps()
        os.kill(run.pid, signal.SIGKILL)
        run.wait()
        gone = _until(lambda: not set(members) & set(_sleeps()), limit_s=1.0)
        assert gone, f"still running a second after the kill: {_with_mark(MARK)}"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.pid, signal.SIGKILL)
        for pid in _with_mark(MARK):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


DAEMONISING_GRADER = f"""
import json, os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep({MARK})  # the daemon: holds the grader's stdout and stderr open
    os._exit(0)
os.wait()
print(json.dumps({{"score": 1, "reasoning": "fine"}}))
"""


def test_a_script_graders_daemonised_child_neither_delays_its_answer_nor_outlives_it(tmp_path):
    result = GraderRunner().run_script(["python3", "-c", DAEMONISING_GRADER], cwd=tmp_path, stdin="{}", timeout_s=30)
    assert result.ok and not result.timed_out, result
    assert '"score": 1' in result.stdout
    assert result.wall_ms < 20_000
    assert not _with_mark(f"time.sleep({MARK})"), "the daemonised child escaped"


def test_a_timed_out_script_graders_daemon_is_killed_with_it(tmp_path):
    grader = DAEMONISING_GRADER.replace("os.wait()", f"os.wait(); time.sleep({MARK})")
    result = GraderRunner().run_script(["python3", "-c", grader], cwd=tmp_path, stdin="{}", timeout_s=1)
    assert result.timed_out
    assert not _with_mark(f"time.sleep({MARK})"), "the daemonised child escaped"


def test_the_watchdog_leaves_a_group_alone_while_its_pipeline_lives(tmp_path):
    """The other half: a watchdog whose pipe stays open stops nothing; once the group is
    gone it ends by itself."""
    from bat_pipeline.resources.process_group import stop_process_group, watch_group

    agent = subprocess.Popen(["sleep", MARK], start_new_session=True)
    watchdog = watch_group(agent.pid)
    assert watchdog is not None
    try:
        assert watchdog.process.poll() is None and agent.poll() is None
        stop_process_group(agent, grace_s=5)
        watchdog.process.wait(timeout=5)  # it saw the group gone
    finally:
        watchdog.release()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(agent.pid, signal.SIGKILL)
