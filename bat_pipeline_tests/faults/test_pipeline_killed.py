"""`bat-pipeline run` SIGKILLed mid-run (the whole process group), then `run --resume`:
finished episodes are kept, no agent outlives the pipeline, the user's files are as they
were, and the resumed run has exactly the missing conversations, then recomputes the rest."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from bat_pipeline_tests.faults.support import (
    JUDGE_KEY_VAR,
    LLM_URL_VAR,
    assert_no_process_left,
    episodes_in,
    make_agent_copy,
    only_run_dir,
    root_conversations,
    user_file_hashes,
    wait_for,
)

PARTITION = "openai-competent"
TASKS = 4
MODEL_KEY = "sk-canary-cli-model-8Rw1"
JUDGE_KEY = "sk-canary-cli-judge-3Kd6"


@pytest.fixture
def cli_env(scripted, tmp_path):
    env = {name: value for name, value in os.environ.items() if not name.startswith(("BAT_", "DAGSTER_"))}
    env.update({LLM_URL_VAR: scripted.url, JUDGE_KEY_VAR: JUDGE_KEY, "OPENAI_API_KEY": MODEL_KEY,
                "BAT_PIPELINE_HOME": str(tmp_path / "home"),
                "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"})
    return env


def _bat_pipeline(*args: str, env: dict, log: Path, new_session: bool = False) -> subprocess.Popen:
    with open(log, "wb") as out:
        return subprocess.Popen([str(Path(sys.executable).parent / "bat-pipeline"), *args], env=env,
                                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=new_session)


def test_killed_run_then_resume_reruns_only_the_missing_episodes(scripted, cli_env, tmp_path):
    agent = make_agent_copy(tmp_path / "agent", concurrency=1)
    root = tmp_path / "home"
    before = user_file_hashes(agent)
    scripted.set_model("competent", latency_ms=250)
    try:
        run = _bat_pipeline("run", str(agent), env=cli_env, log=tmp_path / "run.log", new_session=True)
        try:
            wait_for(lambda: list(root.glob(f"runs/*/{PARTITION}/episodes/*.json")) or run.poll() is not None,
                     180, what="the first episode")
            assert run.poll() is None, (tmp_path / "run.log").read_text()
        finally:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait(10)
        assert_no_process_left(agent)
    finally:
        scripted.set_model("competent", latency_ms=0)
    assert user_file_hashes(agent) == before
    run_dir = only_run_dir(root, PARTITION)
    kept = {k: e for k, e in episodes_in(run_dir).items() if not e["aux"].get("eval_error")}
    assert 1 <= len(kept) < TASKS

    resume = _bat_pipeline("run", "--resume", str(agent), env=cli_env, log=tmp_path / "resume.log")
    assert resume.wait(240) == 0, (tmp_path / "resume.log").read_text()[-3000:]
    assert_no_process_left(agent)
    assert user_file_hashes(agent) == before
    assert only_run_dir(root, PARTITION) == run_dir
    resumed = list((run_dir / "spans").glob("agent-resume-*.jsonl"))
    assert len(resumed) == 1
    conversations = root_conversations(resumed[0])
    assert len(conversations) == TASKS - len(kept)
    assert not set(conversations) & {f"{e['task_id']}__try{e['aux']['attempt_index']}" for e in kept.values()}

    episodes = episodes_in(run_dir)
    assert len(episodes) == TASKS
    for name, episode in episodes.items():
        assert episode["verdict"] is not None and not episode["aux"].get("eval_error")
        assert episode["qualitative_scores"]["task_completion_quality"] is not None
        if name in kept:
            assert episode["final_output"] == kept[name]["final_output"]
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["summary"]["episodes"] == TASKS and metrics["summary"]["passed"] == TASKS

    leaks = [p for folder in (root, agent / "eval" / "output") for p in folder.rglob("*")
             if p.is_file() and (MODEL_KEY.encode() in p.read_bytes() or JUDGE_KEY.encode() in p.read_bytes())]
    assert leaks == []
