"""Faults around one agent folder, with in-process Dagster runs of the `evaluate` job on a
trimmed copy of the example agent: a good judged run (configured port taken, canary keys
in the environment that the scripted model and judge echo back and the agent logs), then
a broken judge, a locked warehouse, corrupt spans, an agent
killed mid-run and a resume through the Dagster tag. Tests run in file order and share
the copy, the storage root and the Dagster instance."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from bat_pipeline.assets.common import RESUME_TAG
from bat_pipeline.run_summary import print_problems
from bat_pipeline_tests.support.dagster_runs import episodes_in, evaluate, failure_messages, only_run_dir
from bat_pipeline_tests.support.example_agent import (
    FAULT_TASKS,
    JUDGE_KEY_VAR,
    LLM_URL_VAR,
    copy_example_agent,
    edit_eval,
)
from bat_pipeline_tests.support.files import tree_hashes, user_file_hashes
from bat_pipeline_tests.support.polling import wait_for
from bat_pipeline_tests.support.processes import assert_no_process_left, belonging_to, listening_sockets
from bat_pipeline_tests.support.spans import root_conversations

pytestmark = pytest.mark.slow(seconds=21)

MODEL_KEY = "sk-canary-model-Q7x2"
JUDGE_KEY = "sk-canary-judge-Z4p9"
SHELL_SECRET = "SHELL_ONLY_SECRET"
SHELL_TOKEN = "ghp_canaryShellToken0Xy81"
"""A secret the shell has (GITHUB_TOKEN) and the agent inherits; the agent logs it."""
GOOD, CRASHY = "openai-competent", "openai-sloppy"
TRAVERSAL = {
    "id": "a/../../x",
    "turns": ["What is the capital of France?"],
    "expected": {"status": "completed", "output_must_contain": ["Paris"]},
}
EPISODES = 5
LOOPBACK = "0100007F"

# Starts the example agent after writing its environment to the file named in argv[1] and
# logging its model key, as a careless agent might.
ENV_DUMP = """\
import json, os, sys
with open(sys.argv[1], "w") as out:
    json.dump(dict(os.environ), out)
print("starting with OPENAI_API_KEY=" + os.environ.get("OPENAI_API_KEY", ""), flush=True)
print("and GITHUB_TOKEN=" + os.environ.get("GITHUB_TOKEN", ""), flush=True)
os.execv(sys.executable, [sys.executable, "-m", "bat_pipeline.example.agent"])
"""


@dataclass
class Case:
    agent: Path
    root: Path
    env_dump: Path
    instance: dg.DagsterInstance
    facts: dict = field(default_factory=dict)

    @property
    def output_dir(self) -> Path:
        return self.agent / "eval" / "output"

    def run_dir(self, partition: str) -> Path:
        return only_run_dir(self.root, partition)


@pytest.fixture(scope="module")
def case(scripted_llm, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("partition_faults")
    wrapper = tmp / "env_dump.py"
    wrapper.write_text(ENV_DUMP)
    env_dump = tmp / "agent_environment.json"
    agent = copy_example_agent(
        tmp / "agent",
        tasks=FAULT_TASKS,
        models=("competent", "sloppy"),
        extra_tasks=[TRAVERSAL],
        agent={"command": ["{python}", str(wrapper), str(env_dump)]},
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(LLM_URL_VAR, scripted_llm.url)
        mp.setenv(JUDGE_KEY_VAR, JUDGE_KEY)
        mp.setenv("OPENAI_API_KEY", MODEL_KEY)
        mp.setenv(SHELL_SECRET, "not-for-the-agent")
        mp.setenv("GITHUB_TOKEN", SHELL_TOKEN)
        scripted_llm.set(echo_key=True)
        instance = dg.DagsterInstance.ephemeral()
        try:
            yield Case(agent, tmp / "home", env_dump, instance)
        finally:
            instance.dispose()
            scripted_llm.set(echo_key=False)


class SocketWatch(threading.Thread):
    """Records the listening sockets of the agent folder's processes while a run goes on."""

    def __init__(self, agent: Path, also: set[int]):
        super().__init__(daemon=True)
        self.agent, self.also = agent, also
        self.seen: dict[int, list[tuple[str, int]]] = {}
        self.commands: dict[int, str] = {}
        """The command line of each pid seen, for a failure's message."""
        self.stop = threading.Event()

    def run(self) -> None:
        # A child this test process is starting (an agent, between its fork and its exec) has
        # this process's command line, its working directory already in the agent folder, and
        # every socket of this process still open, the port holder's included; it is not a
        # process of the run's.
        ours = Path("/proc/self/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        while not self.stop.is_set():
            mine = {p.pid: p.cmdline for p in belonging_to(self.agent) if p.cmdline != ours}
            for pid, address, port in listening_sockets(set(mine) | self.also):
                self.commands.setdefault(pid, mine.get(pid, "(the session's scripted model server)"))
                self.seen.setdefault(pid, [])
                if (address, port) not in self.seen[pid]:
                    self.seen[pid].append((address, port))
            if len([p for p in self.seen if p not in self.also]) >= 2:
                return
            self.stop.wait(0.05)


@pytest.fixture(scope="module")
def good_run(case, scripted_llm):
    """The openai-competent partition, judged, while another process listens on the port
    the agent's config.yaml names."""
    import yaml

    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    taken = holder.getsockname()[1]
    config_file = case.agent / "config.yaml"
    config = yaml.safe_load(config_file.read_text())
    config["endpoint"]["port"] = taken
    config_file.write_text(yaml.safe_dump(config, sort_keys=False))
    before = user_file_hashes(case.agent)
    watch = SocketWatch(case.agent, {scripted_llm.pid})
    watch.start()
    try:
        result = evaluate(case.agent, case.root, case.instance, GOOD)
    finally:
        watch.stop.set()
        watch.join(5)
        holder.close()
    assert_no_process_left(case.agent)
    case.facts.update(taken_port=taken, sockets=watch.seen, commands=watch.commands, scripted_pid=scripted_llm.pid)
    return result, before


def test_judged_run_completes_although_the_configured_port_is_taken(case, good_run):
    result, before = good_run
    assert result.success, failure_messages(result)
    episodes = episodes_in(case.run_dir(GOOD))
    assert len(episodes) == EPISODES
    assert all(e["verdict"] is not None and not e["aux"].get("eval_error") for e in episodes.values())
    assert all(e["qualitative_scores"]["task_completion_quality"] is not None for e in episodes.values())
    metrics = json.loads((case.run_dir(GOOD) / "metrics.json").read_text())
    assert metrics["summary"]["episodes"] == EPISODES
    on_taken = {
        pid: case.facts["commands"][pid]
        for pid, ports in case.facts["sockets"].items()
        if any(port == case.facts["taken_port"] for _, port in ports)
    }
    assert not on_taken, f"listening on the taken port {case.facts['taken_port']}: {on_taken}"
    assert user_file_hashes(case.agent) == before


def test_every_server_binds_loopback_only(case, good_run):
    seen = case.facts["sockets"]
    agent_pids = [pid for pid in seen if pid != case.facts["scripted_pid"]]
    assert len(agent_pids) >= 2, f"agent and Forecaster sockets not both seen: {seen}"
    assert seen.get(case.facts["scripted_pid"]), "the scripted server's socket was not seen"
    for pid, sockets in seen.items():
        for address, port in sockets:
            assert address == LOOPBACK, f"pid {pid} listens on {address}:{port}, not 127.0.0.1"


def test_agent_gets_the_shell_and_its_model_key_never_the_judge_key(case, good_run):
    """The default (`agent.inherit_env` unset): the whole shell, as under `bat eval`, minus
    the judge's key; the model's provider key stays."""
    env = json.loads(case.env_dump.read_text())
    assert env["OPENAI_API_KEY"] == MODEL_KEY
    assert JUDGE_KEY_VAR not in env and JUDGE_KEY not in env.values()
    assert env[SHELL_SECRET] == "not-for-the-agent" and env[LLM_URL_VAR] == os.environ[LLM_URL_VAR]
    assert env["MODEL"] == "competent" and env["BASE_URL"] == os.environ[LLM_URL_VAR] + "/v1"


def test_task_ids_cannot_write_outside_the_output_folder(case, good_run):
    for folder in (
        case.run_dir(GOOD) / "episodes",
        next(case.output_dir.glob("*/demo_openai-competent")) / "episodes",
    ):
        inside = [p for p in folder.iterdir() if "x__try0" in p.name]
        assert [p.name for p in inside] == ["a_.._.._x__try0.json"]
        assert json.loads(inside[0].read_text())["task_id"] == "a/../../x"
        assert not (folder / "a" / ".." / ".." / "x__try0.json").resolve().exists()
    outside = list(case.agent.parent.rglob("x__try0*"))
    assert outside == []


def test_corrupt_span_lines_are_skipped_by_the_trajectory_stage(case, good_run):
    spans = case.run_dir(GOOD) / "spans" / "agent.jsonl"
    good = spans.read_text()
    junk = [
        '{"name": "torn", "trace_id": "ab',  # torn line
        json.dumps({"name": 7, "kind": [], "trace_id": 1, "span_id": {}, "start_time": "x"}),  # wrong types
        json.dumps({"name": "no ids", "attributes": {}}),  # missing ids
        json.dumps(
            {
                "name": "a",
                "trace_id": "t1",
                "span_id": "s1",
                "parent_span_id": "s2",
                "start_time": 1,
                "end_time": 2,
                "attributes": {},
            }
        ),
        json.dumps(
            {
                "name": "b",
                "trace_id": "t1",
                "span_id": "s2",
                "parent_span_id": "s1",
                "start_time": 1,
                "end_time": 2,
                "attributes": {},
            }
        ),  # parent cycle
        json.dumps(
            {
                "name": "huge",
                "trace_id": "t2",
                "span_id": "s3",
                "parent_span_id": None,
                "start_time": 1,
                "end_time": 2,
                "attributes": {"input.value": "x" * 2_000_000},
            }
        ),
        "\0\0 not json at all",
    ]
    spans.write_text("\n".join(junk[:3]) + "\n" + good + "\n".join(junk[3:]) + "\n")
    before = user_file_hashes(case.agent)
    result = evaluate(case.agent, case.root, case.instance, GOOD, assets=["span_trajectories", "episode_verdicts"])
    assert result.success, failure_messages(result)
    meta = result.asset_materializations_for_node("agent__span_trajectories")[0].metadata
    assert meta["trajectories_found"].value == EPISODES
    assert meta["skipped_lines"].value, "the corrupt lines were not reported"
    episodes = episodes_in(case.run_dir(GOOD))
    assert len(episodes) == EPISODES and all(e["trace"]["trajectory"]["found"] for e in episodes.values())
    assert user_file_hashes(case.agent) == before
    spans.write_text(good)


def test_trajectories_redact_what_their_span_files_hold(case, good_run):
    # Span files the pipeline does not scrub (agent.spans, extra_spans) may hold a key:
    # here the partition's own file, as the agent would have left it.
    spans = case.run_dir(GOOD) / "spans" / "agent.jsonl"
    scrubbed = spans.read_text()
    assert "[redacted]" in scrubbed and MODEL_KEY not in scrubbed
    spans.write_text(scrubbed.replace("[redacted]", MODEL_KEY))
    try:
        result = evaluate(case.agent, case.root, case.instance, GOOD, assets=["span_trajectories"])
    finally:
        spans.write_text(scrubbed)
    assert result.success, failure_messages(result)
    stored = "".join(
        p.read_text()
        for p in [case.run_dir(GOOD) / "trajectories.json", *(case.run_dir(GOOD) / "episodes").glob("*.json")]
    )
    assert MODEL_KEY not in stored and "answered for key [redacted]" in stored


class LateWriter(threading.Thread):
    """Keeps a span file changing for `busy_s` (blank lines), then appends `lines` and stops:
    a writer still flushing when the trajectories step starts."""

    def __init__(self, path: Path, lines: list[str], busy_s: float):
        super().__init__(daemon=True)
        self.path, self.lines, self.busy_s = path, lines, busy_s

    def run(self) -> None:
        deadline = time.monotonic() + self.busy_s
        while time.monotonic() < deadline:
            with open(self.path, "a") as out:
                out.write("\n")
            time.sleep(0.1)
        with open(self.path, "a") as out:
            out.write("".join(line + "\n" for line in self.lines))


def test_trajectories_read_only_the_recorded_span_files_once_they_are_quiet(case, good_run):
    run_dir = case.run_dir(GOOD)
    spans = run_dir / "spans" / "agent.jsonl"
    good = spans.read_text()
    trajectories = {k: e["trace"]["trajectory"] for k, e in episodes_in(run_dir).items()}
    lines = [json.loads(line) for line in good.splitlines()]
    late_traces = {
        s["trace_id"]
        for s in lines
        if (s.get("attributes") or {}).get("gen_ai.conversation.id") == "weather_paris__try0"
    }
    assert late_traces
    spans.write_text("".join(json.dumps(s) + "\n" for s in lines if s["trace_id"] not in late_traces))
    # Beside the agent's file but never recorded by the episodes step: an earlier root of
    # another conversation, which would become its first turn if the folder were globbed.
    stray = run_dir / "spans" / "stray.jsonl"
    stray.write_text(
        json.dumps(
            {
                "name": "stray",
                "kind": "SERVER",
                "trace_id": "f" * 32,
                "span_id": "f" * 16,
                "parent_span_id": None,
                "start_time": 1,
                "end_time": 2,
                "status": "ERROR",
                "status_description": "not this run",
                "attributes": {"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": "add_numbers__try0"},
                "events": [],
            }
        )
        + "\n"
    )
    writer = LateWriter(spans, [json.dumps(s) for s in lines if s["trace_id"] in late_traces], busy_s=2.0)
    writer.start()
    try:
        result = evaluate(case.agent, case.root, case.instance, GOOD, assets=["span_trajectories"])
    finally:
        writer.join(10)
        stray.unlink()
    assert result.success, failure_messages(result)
    meta = result.asset_materializations_for_node("agent__span_trajectories")[0].metadata
    assert meta["trajectories_found"].value == EPISODES
    assert str(stray) not in meta["span_files"].value
    assert {k: e["trace"]["trajectory"] for k, e in episodes_in(run_dir).items()} == trajectories
    spans.write_text(good)


JUDGE_FAULTS = {  # name → (scripted server knobs, judge settings, what the reason says)
    "rate_limited": ({"error_rate": 1.0, "error_status": 429, "retry_after": 0.05}, {"max_retries": 1}, "HTTP 429"),
    "server_error": ({"error_rate": 1.0, "error_status": 500}, {"max_retries": 1}, "HTTP 500"),
    "hangs": ({"hang": True}, {"timeout_s": 1, "max_retries": 0}, "no answer within 1 s"),
    "garbage": ({"malformed": "content"}, {"max_retries": 0}, "unusable answer"),
    "broken_body": ({"malformed": True}, {"max_retries": 0}, "not JSON"),
}


def _judge_again(case, scripted_llm, name: str, knobs: dict, settings: dict, assets=("judge_scores",)):
    model = f"judge-{name.replace('_', '-')}"
    scripted_llm.set_model(model, **knobs)
    edit_eval(case.agent, judge={"model": model, **settings})
    run_dir = case.run_dir(GOOD)
    verdicts = {k: e["verdict"] for k, e in episodes_in(run_dir).items()}
    before = user_file_hashes(case.agent)
    result = evaluate(case.agent, case.root, case.instance, GOOD, assets=list(assets))
    assert result.success, failure_messages(result)
    episodes = episodes_in(run_dir)
    assert {k: e["verdict"] for k, e in episodes.items()} == verdicts
    assert user_file_hashes(case.agent) == before
    return episodes, json.loads((run_dir / "judge.json").read_text())


@pytest.mark.parametrize("name", sorted(JUDGE_FAULTS))
def test_a_failing_judge_leaves_null_scores_with_reasons(case, scripted_llm, good_run, name):
    knobs, settings, reason = JUDGE_FAULTS[name]
    episodes, judged = _judge_again(case, scripted_llm, name, knobs, settings)
    assert judged["stats"]["failures"] > 0
    for episode in episodes.values():
        scores = episode["qualitative_scores"]
        assert scores["task_completion_quality"] is None and scores["response_relevance"] is None
        assert scores["judge_reasoning"]["task_completion"].startswith("judge failed: ")
        assert reason in scores["judge_reasoning"]["task_completion"]
    assert JUDGE_KEY not in json.dumps(judged)
    said: list[str] = []  # what `bat-pipeline run` prints of it (run_summary.print_problems)
    print_problems([(GOOD, case.run_dir(GOOD))], said.append)
    assert len(said) == 1 and said[0].startswith(f"⚠ {GOOD}: the judge failed on every judged episode, first: ")
    assert reason in said[0], said


def test_a_judge_without_structured_output_falls_back_to_text(case, scripted_llm, good_run):
    episodes, judged = _judge_again(
        case,
        scripted_llm,
        "no_structured",
        {"no_structured_output": True},
        {"max_retries": 0},
        assets=("judge_scores", "eval_metrics"),
    )
    assert judged["stats"]["failures"] == 0 and judged["stats"]["text_fallbacks"]
    assert all(e["qualitative_scores"]["task_completion_quality"] is not None for e in episodes.values())
    metrics = json.loads((case.run_dir(GOOD) / "metrics.json").read_text())
    assert metrics["summary"]["episodes"] == EPISODES
    assert metrics["summary"]["qualitative"]["task_completion_quality"]["count"] == EPISODES
    edit_eval(case.agent, judge={"model": "judge", "max_retries": 4, "timeout_s": 120})


HOLD_DUCKDB = """\
import duckdb, sys
connection = duckdb.connect(sys.argv[1], read_only=True)
print("HELD", flush=True)
sys.stdin.read()
"""


def test_warehouse_held_by_another_process_fails_clearly_then_loads(case, good_run):
    database = case.root / "warehouse.duckdb"
    run_dir = case.run_dir(GOOD)
    episodes_before = tree_hashes(run_dir / "episodes")
    before = user_file_hashes(case.agent)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_DUCKDB, str(database)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "HELD"
        short_wait = {"resources": {"warehouse": {"config": {"database": str(database), "max_wait_s": 1.0}}}}
        result = evaluate(case.agent, case.root, case.instance, GOOD, assets=["eval_metrics"], run_config=short_wait)
    finally:
        holder.stdin.close()
        holder.wait(10)
    assert not result.success
    message = " ".join(failure_messages(result))
    assert "could not open the warehouse" in message and "another process holds it" in message
    assert tree_hashes(run_dir / "episodes") == episodes_before
    run_id = run_dir.parent.name
    with duckdb.connect(str(database)) as conn:
        conn.execute("DELETE FROM episodes WHERE run_id = ?", [run_id])
    result = evaluate(case.agent, case.root, case.instance, GOOD, assets=["eval_metrics"])
    assert result.success, failure_messages(result)
    with duckdb.connect(str(database), read_only=True) as conn:
        count = conn.execute("SELECT count(*) FROM episodes WHERE run_id = ?", [run_id]).fetchone()[0]
    assert count == EPISODES
    assert tree_hashes(run_dir / "episodes") == episodes_before
    assert user_file_hashes(case.agent) == before


class KillAfterFirstEpisode(threading.Thread):
    """SIGKILLs the agent's whole process group once the partition's first episode exists."""

    def __init__(self, root: Path, agent: Path, partition: str):
        super().__init__(daemon=True)
        self.root, self.agent, self.partition = root, agent, partition
        self.first: str | None = None
        self.killed: list[int] = []

    def run(self) -> None:
        files = wait_for(
            lambda: sorted(self.root.glob(f"runs/*/{self.partition}/episodes/*.json")),
            120,
            interval_s=0.02,
            what="the first episode",
        )
        self.first = files[0].stem
        groups = {os.getpgid(p.pid) for p in belonging_to(self.agent)} - {os.getpgrp()}
        for group in groups:
            os.killpg(group, signal.SIGKILL)
            self.killed.append(group)


def test_agent_killed_mid_run_keeps_earlier_episodes_and_spares_other_partitions(case, scripted_llm, good_run):
    scripted_llm.set_model("sloppy", latency_ms=300)
    edit_eval(case.agent, evaluation={"concurrency": 1})
    other = tree_hashes(case.run_dir(GOOD))
    before = user_file_hashes(case.agent)
    killer = KillAfterFirstEpisode(case.root, case.agent, CRASHY)
    killer.start()
    try:
        result = evaluate(case.agent, case.root, case.instance, CRASHY)
    finally:
        killer.join(10)
        scripted_llm.set_model("sloppy", latency_ms=0)
    assert killer.killed, "the agent was never killed"
    assert_no_process_left(case.agent)
    assert result.success, failure_messages(result)
    episodes = episodes_in(case.run_dir(CRASHY))
    assert len(episodes) == EPISODES
    assert not episodes[killer.first]["aux"].get("eval_error")
    errors = {k: e for k, e in episodes.items() if e["aux"].get("eval_error")}
    assert errors, "no episode recorded the agent's death"
    for episode in errors.values():
        assert episode["final_status"] == "error" and episode["verdict"]["passed"] is False
        assert episode["verdict"]["reason"]
        assert episode["aux"]["error"] == episode["aux"]["eval_error"]  # bat-cli's key
    metrics = json.loads((case.run_dir(CRASHY) / "metrics.json").read_text())
    assert metrics["summary"]["episodes"] == EPISODES
    assert tree_hashes(case.run_dir(GOOD)) == other
    assert user_file_hashes(case.agent) == before
    case.facts["crash_errors"] = {k: f"{e['task_id']}__try{e['aux']['attempt_index']}" for k, e in errors.items()}
    said: list[str] = []  # what `bat-pipeline run` prints of it (run_summary.print_problems)
    print_problems([(CRASHY, case.run_dir(CRASHY))], said.append)
    assert said and said[0].startswith(f"⚠ {CRASHY}: {len(errors)} of {EPISODES} attempts ended in an error, first: ")


def test_resume_tag_reruns_only_the_eval_error_episodes_and_those_without_spans(case, good_run):
    errors = case.facts.get("crash_errors")
    assert errors, "needs the crashed partition of the previous test"
    run_dir = case.run_dir(CRASHY)
    # Episodes completed before the kill whose spans the agent had not flushed yet (it
    # exports once a second) are held again too; the tasks here have one turn each.
    flushed = set(root_conversations(run_dir / "spans" / "agent.jsonl"))
    stored = episodes_in(run_dir)
    lost = {k: k for k, e in stored.items() if k not in errors and k not in flushed}
    errors = {**errors, **lost}
    kept = {k: e for k, e in stored.items() if k not in errors}
    result = evaluate(case.agent, case.root, case.instance, CRASHY, tags={RESUME_TAG: "true"})
    assert result.success, failure_messages(result)
    assert_no_process_left(case.agent)
    assert case.run_dir(CRASHY) == run_dir
    resumed = list((run_dir / "spans").glob("agent-resume-*.jsonl"))
    assert len(resumed) == 1
    episodes = episodes_in(run_dir)
    fresh = sorted(episodes[name]["aux"]["conversation_id"] for name in errors)
    assert sorted(root_conversations(resumed[0])) == fresh
    assert sorted(c.rsplit("-r", 1)[0] for c in fresh) == sorted(errors.values())
    assert len(episodes) == EPISODES
    assert not any(e["aux"].get("eval_error") for e in episodes.values())
    assert all(e["verdict"] is not None for e in episodes.values())
    for name, episode in kept.items():
        assert episodes[name]["final_output"] == episode["final_output"]
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["summary"]["episodes"] == EPISODES


def _dump_tables(database: Path) -> str:
    with duckdb.connect(str(database), read_only=True) as conn:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
            ).fetchall()
        ]
        assert tables
        return "\n".join(f"{t}: {conn.execute(f'SELECT * FROM {t}').fetchall()}" for t in tables)


def test_canary_keys_appear_nowhere(case, good_run):
    canaries = (MODEL_KEY.encode(), JUDGE_KEY.encode(), SHELL_TOKEN.encode())
    scanned = 0
    redacted: set[str] = set()
    for folder in (case.root, case.output_dir, case.instance.root_directory):
        for path in Path(folder).rglob("*"):
            if path.is_file():
                data = path.read_bytes()
                scanned += 1
                assert not any(c in data for c in canaries), f"a key leaked into {path}"
                if b"[redacted]" in data:
                    redacted.add(path.name if path.suffix != ".json" or path.parent.name != "episodes" else "episodes/")
    assert scanned > 20
    assert list(case.root.rglob("agent.log"))
    # The servers did echo the keys: the echoes are there, redacted, in every kind of file.
    assert {"agent.log", "agent.jsonl", "episodes/", "judge.json"} <= redacted, redacted
    good = episodes_in(case.run_dir(GOOD))
    assert all(
        "answered for key [redacted]" in e["final_output"] for e in good.values() if e["final_status"] == "completed"
    )
    assert all(
        "Judged for key [redacted]" in e["qualitative_scores"]["judge_reasoning"]["task_completion"]
        for e in episodes_in(case.run_dir(CRASHY)).values()
    )
    assert any("[redacted]" in p.read_text() for p in (case.root / "judge_cache").rglob("*.json"))
    tables = _dump_tables(case.root / "warehouse.duckdb")
    assert "weather_paris" in tables and MODEL_KEY not in tables and JUDGE_KEY not in tables
    assert "answered for key [redacted]" in tables and "Judged for key [redacted]" in tables
    runs = case.instance.get_runs()
    assert len(runs) >= 10
    for run in runs:
        text = "\n".join(repr(entry) for entry in case.instance.all_logs(run.run_id)) + repr(run.tags)
        assert "ASSET_MATERIALIZATION" in text or "STEP_FAILURE" in text
        assert MODEL_KEY not in text and JUDGE_KEY not in text and SHELL_TOKEN not in text
