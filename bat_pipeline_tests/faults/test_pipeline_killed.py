"""`bat-pipeline run` SIGKILLed (its whole process group) at several points, then resumed
(`run --resume`, or the Dagster run tag it sets): the verdicts per task and attempt are
those of an uninterrupted run.

On the way: no agent outlives the kill, the user's files are as they were, the resume
holds a conversation only for the episodes that were missing or errored, each under a
fresh conversation id, and every episode's trajectory comes from its own conversation
(the killed run's half-done conversations are in the span files, used by no episode).

The killed runs, each on its own copy of the agent folder and its own storage root, run
side by side; the resume through the CLI runs while the others resume in this process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pytest

from bat_pipeline.assets.common import RESUME_TAG
from bat_pipeline.engine.config import load_tasks
from bat_pipeline.engine.spans import load_spans
from bat_pipeline_tests.support.dagster_runs import episodes_in, evaluate, failure_messages, only_run_dir
from bat_pipeline_tests.support.example_agent import JUDGE_KEY_VAR, LLM_URL_VAR, copy_example_agent
from bat_pipeline_tests.support.files import user_file_hashes
from bat_pipeline_tests.support.paths import BAT_PIPELINE
from bat_pipeline_tests.support.processes import assert_no_process_left, start_logged
from bat_pipeline_tests.support.spans import root_conversations

pytestmark = pytest.mark.slow(seconds=28)

PARTITION = "openai-competent"
TASKS = ("weather_paris", "add_numbers", "clarify_then_weather", "remember_city")
K = 2
EPISODES = len(TASKS) * K
JUDGE = "judge-of-killed-runs"
MODEL_KEY = "sk-canary-cli-model-8Rw1"
JUDGE_KEY = "sk-canary-cli-judge-3Kd6"


def _files(root: Path, pattern: str) -> list[Path]:
    return list(root.glob(f"runs/*/{PARTITION}/{pattern}"))


# name → (when to kill, given the storage root; how to resume)
KILL_POINTS = {
    "after_the_first_episode": (lambda root: len(_files(root, "episodes/*.json")) >= 1, "tag"),
    "mid_way": (lambda root: len(_files(root, "episodes/*.json")) >= EPISODES // 2, "tag"),
    "after_every_episode_before_metrics": (
        lambda root: _files(root, "verdicts.json") and not _files(root, "metrics.json"),
        "cli",
    ),
}


@dataclass
class Killed:
    agent: Path
    root: Path
    log: Path
    user_files: dict[str, str]
    kept: dict[str, dict]
    """Episodes stored without an eval error when the run was killed."""
    resume: subprocess.Popen | None = None


@pytest.fixture(scope="module")
def cli_env(scripted_llm):
    """The environment of `bat-pipeline`; the same variables are set in this process for
    the runs made in it."""
    keys = {LLM_URL_VAR: scripted_llm.url, JUDGE_KEY_VAR: JUDGE_KEY, "OPENAI_API_KEY": MODEL_KEY}
    env = {name: value for name, value in os.environ.items() if not name.startswith(("BAT_", "DAGSTER_"))}
    env.update({**keys, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"})
    # Slow enough that a kill lands mid-conversation and mid-judging.
    scripted_llm.set_model("competent", latency_ms=120)
    scripted_llm.set_model(JUDGE, latency_ms=300)
    with pytest.MonkeyPatch.context() as mp:
        for name, value in keys.items():
            mp.setenv(name, value)
        yield env
    scripted_llm.set_model("competent", latency_ms=0)
    scripted_llm.set_model(JUDGE, latency_ms=0)


def _agent(folder: Path) -> Path:
    return copy_example_agent(
        folder, tasks=TASKS, k=K, models=("competent",), evaluation={"concurrency": 2}, judge={"model": JUDGE}
    )


def _bat_pipeline(*args: str, env: dict, root: Path, log: Path) -> subprocess.Popen:
    return start_logged(
        [str(BAT_PIPELINE), *args], cwd=Path.cwd(), env={**env, "BAT_PIPELINE_HOME": str(root)}, log_path=log
    )


def _in_process(agent: Path, root: Path, tags: dict[str, str] | None = None) -> None:
    instance = dg.DagsterInstance.ephemeral()
    try:
        result = evaluate(agent, root, instance, PARTITION, tags=tags)
    finally:
        instance.dispose()
    assert result.success, failure_messages(result)


def _verdicts(run_dir: Path) -> dict[tuple[str, int], dict]:
    return {(e["task_id"], e["aux"]["attempt_index"]): e["verdict"] for e in episodes_in(run_dir).values()}


@pytest.fixture(scope="module")
def killed(cli_env, tmp_path_factory) -> dict[str, Killed]:
    """Every kill point's run, started together and each SIGKILLed at its point; the
    resumes through the CLI are started at once."""
    runs: dict[str, tuple[Killed, subprocess.Popen]] = {}
    for point in KILL_POINTS:
        tmp = tmp_path_factory.mktemp(point)
        agent = _agent(tmp / "agent")
        case = Killed(agent, tmp / "home", tmp / "run.log", user_file_hashes(agent), {})
        runs[point] = case, _bat_pipeline("run", str(agent), env=cli_env, root=case.root, log=case.log)
    pending = set(runs)
    deadline = time.monotonic() + 180
    try:
        while pending and time.monotonic() < deadline:
            for point in sorted(pending):
                case, run = runs[point]
                ended = run.poll() is not None
                assert not ended, f"{point}: the run ended before its kill point\n{case.log.read_text()[-3000:]}"
                if KILL_POINTS[point][0](case.root):
                    os.killpg(run.pid, signal.SIGKILL)
                    pending.discard(point)
            time.sleep(0.02)
        assert not pending, f"kill points never reached: {sorted(pending)}"
    finally:
        for _, run in runs.values():
            if run.poll() is None:
                os.killpg(run.pid, signal.SIGKILL)
            run.wait(10)
    for point, (case, _) in runs.items():
        assert_no_process_left(case.agent)
        case.kept = {
            k: e for k, e in episodes_in(only_run_dir(case.root, PARTITION)).items() if not e["aux"].get("eval_error")
        }
        if KILL_POINTS[point][1] == "cli":
            case.resume = _bat_pipeline(
                "run", "--resume", str(case.agent), env=cli_env, root=case.root, log=case.log.with_name("resume.log")
            )
    return {point: case for point, (case, _) in runs.items()}


@pytest.fixture(scope="module")
def uninterrupted(cli_env, tmp_path_factory, killed) -> dict[tuple[str, int], dict]:
    tmp = tmp_path_factory.mktemp("uninterrupted")
    agent, root = _agent(tmp / "agent"), tmp / "home"
    _in_process(agent, root)
    verdicts = _verdicts(only_run_dir(root, PARTITION))
    assert len(verdicts) == EPISODES and all(v["passed"] for v in verdicts.values())
    return verdicts


@pytest.mark.parametrize("point", sorted(KILL_POINTS))
def test_killed_then_resumed_run_has_the_verdicts_of_an_uninterrupted_one(point, killed, uninterrupted):
    case = killed[point]
    agent, root, kept = case.agent, case.root, case.kept
    assert user_file_hashes(agent) == case.user_files
    assert kept and (len(kept) < EPISODES or point == "after_every_episode_before_metrics")
    run_dir = only_run_dir(root, PARTITION)

    if case.resume is not None:
        assert case.resume.wait(240) == 0, case.log.with_name("resume.log").read_text()[-3000:]
    else:
        _in_process(agent, root, tags={RESUME_TAG: "true"})
    assert_no_process_left(agent)
    assert user_file_hashes(agent) == case.user_files
    assert only_run_dir(root, PARTITION) == run_dir
    episodes = episodes_in(run_dir)
    assert len(episodes) == EPISODES
    assert _verdicts(run_dir) == uninterrupted
    for name, episode in kept.items():
        assert episodes[name]["final_output"] == episode["final_output"]
        assert "conversation_id" not in episodes[name]["aux"]
    rerun = {name: e["aux"]["conversation_id"] for name, e in episodes.items() if name not in kept}
    resumed = sorted((run_dir / "spans").glob("agent-resume-*.jsonl"))
    if rerun:
        assert len(resumed) == 1 and set(root_conversations(resumed[0])) == set(rerun.values())
        assert all(conversation.startswith(f"{name}-r") for name, conversation in rerun.items())
    else:
        assert resumed == []

    ref = json.loads((run_dir / "partition.json").read_text())
    index = load_spans([run_dir / p for p in ref["span_files"]])
    turns = {t.id: len(t.turns) for t in load_tasks(agent / "eval" / "input" / "tasks.json")}
    for name, episode in episodes.items():
        conversation = episode["aux"].get("conversation_id", name)
        assert len(index.conversation_roots(conversation)) == turns[episode["task_id"]], conversation
        assert episode["qualitative_scores"]["task_completion_quality"] is not None
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["summary"]["total_runs"] == EPISODES and metrics["summary"]["passed"] == EPISODES

    leaks = [
        p
        for folder in (root, agent / "eval" / "output")
        for p in folder.rglob("*")
        if p.is_file() and (MODEL_KEY.encode() in p.read_bytes() or JUDGE_KEY.encode() in p.read_bytes())
    ]
    assert leaks == []
