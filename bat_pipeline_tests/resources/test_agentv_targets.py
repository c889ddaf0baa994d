"""AgentV targets and script graders as real processes (SPEC §9, §12, §13): a cli target
per test (OUTPUT_FILE or stdout, JSON answers, timeouts killing the group, its own HOME),
a batch target once per attempt, a failing healthcheck, and graders' minimal environment."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest
import yaml

from bat_pipeline.engine.config.project import load_project, suite_tasks
from bat_pipeline.engine.conversation import plan_attempts
from bat_pipeline.resources.graders import GraderRunner
from bat_pipeline.resources.targets import TargetHealthError, collect_target_episodes

PY = sys.executable
ANSWER = """
import json, os, sys, pathlib
prompt, out, test_id, attempt = sys.argv[1:5]
if test_id == "slow":
    import subprocess, time
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    time.sleep(30)
if test_id == "crash":
    print("it broke", file=sys.stderr); sys.exit(4)
home = os.environ["HOME"]
pathlib.Path(home, "mark").write_text(test_id)
answer = {"text": prompt.upper() + "|" + home,
          "output": [{"role": "assistant", "tool_calls": [{"tool": "t", "input": {"n": attempt}}]}]}
if test_id == "stdout":
    print("plain " + prompt)
else:
    pathlib.Path(out).write_text(json.dumps(answer))
"""


def project(tmp_path: Path, target: dict, ids=("a", "b"), trials: int = 1) -> tuple:
    (tmp_path / "answer.py").write_text(ANSWER, encoding="utf-8")
    data = {
        "providers": {"t": {"provider": "cli", **target}},
        "execution": {"trials": trials},
        "tests": [{"id": i, "vars": {"input": f"hi {i}"}} for i in ids],
    }
    path = tmp_path / "e.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    config = load_project(path)
    return config, suite_tasks(config.agentv)


def run(config, tasks, folder: Path, k: int = 1):
    episodes, lines = [], []
    collect_target_episodes(
        config.models[0].target,
        config.agentv,
        plan_attempts(tasks, k, []),
        folder,
        concurrency=4,
        on_episode=episodes.append,
        log=lines.append,
    )
    return sorted(episodes, key=lambda e: (e.task_id, e.attempt_index)), lines


def test_cli_target_per_test_and_attempt(tmp_path):
    command = [PY, "answer.py", "{PROMPT}", "{OUTPUT_FILE}", "{EVAL_ID}", "{ATTEMPT}"]
    config, tasks = project(tmp_path, {"command": command}, ids=("a", "stdout"), trials=2)
    episodes, _ = run(config, tasks, tmp_path, k=2)
    assert [(e.task_id, e.attempt_index) for e in episodes] == [("a", 0), ("a", 1), ("stdout", 0), ("stdout", 1)]
    answers = [e.final_output.split("|") for e in episodes[:2]]
    assert [text for text, _ in answers] == ["HI A", "HI A"] and episodes[0].final_status == "completed"
    assert [c.args for c in episodes[1].trace.tool_calls] == [{"n": "1"}]
    assert episodes[2].final_output == "plain hi stdout"
    # A fresh HOME per invocation, removed after.
    homes = {home for _, home in answers}
    assert len(homes) == 2 and os.environ.get("HOME") not in homes
    assert not any(Path(home).exists() for home in homes)


def test_shell_command_quotes_the_placeholders(tmp_path):
    config, tasks = project(
        tmp_path, {"command": f"{PY} answer.py {{PROMPT}} {{OUTPUT_FILE}} {{EVAL_ID}} 0"}, ids=("it's",)
    )
    episodes, _ = run(config, tasks, tmp_path)
    assert episodes[0].final_output.split("|")[0] == "HI IT'S"


def test_timeout_kills_the_process_group_and_a_crash_is_an_error(tmp_path):
    command = [PY, "answer.py", "{PROMPT}", "{OUTPUT_FILE}", "{EVAL_ID}", "{ATTEMPT}"]
    config, tasks = project(tmp_path, {"command": command, "timeout_seconds": 1}, ids=("slow", "crash", "a"))
    start = time.monotonic()
    episodes, _ = run(config, tasks, tmp_path)
    assert time.monotonic() - start < 10
    by_id = {e.task_id: e for e in episodes}
    assert "timed out" in by_id["slow"].eval_error
    assert "exited with status 4: it broke" in by_id["crash"].eval_error
    assert by_id["a"].eval_error is None
    time.sleep(0.2)
    sleepers = [p for p in Path("/proc").iterdir() if p.name.isdigit() and _cmdline(p).endswith("time.sleep(30)")]
    assert sleepers == []


def _cmdline(proc: Path) -> str:
    try:
        return (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return ""


BATCH = """
import json, sys
args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
lines = [{"id": "a", "text": "A", "output": [{"role": "assistant", "tool_calls": [{"tool": "x", "input": {}}]}]},
         {"id": "ghost", "text": "?"}, "oops", {"id": "c", "text": "C"}, {"id": "c", "text": "C"}]
with open(args["--output"], "w") as out:
    for item in lines:
        out.write((item if isinstance(item, str) else json.dumps(item)) + "\\n")
"""


def test_batch_target_routes_records_and_errors_the_rest(tmp_path):
    (tmp_path / "batch.py").write_text(BATCH, encoding="utf-8")
    config, tasks = project(
        tmp_path,
        {"command": f"{PY} batch.py --eval {{EVAL_FILE}} --output {{OUTPUT_FILE}}", "batch_requests": True},
        ids=("a", "b", "c"),
    )
    episodes, logged = run(config, tasks, tmp_path)
    by_id = {e.task_id: e for e in episodes}
    assert by_id["a"].final_output == "A" and by_id["a"].trace.tool_calls[0].name == "x"
    assert by_id["b"].eval_error.startswith("no record for this test in batch_output_try0.jsonl (line 3 is not JSON")
    assert by_id["c"].eval_error == "id 'c' appears on lines 4, 5 of batch_output_try0.jsonl"
    assert any("id 'ghost' is no test" in line for line in logged)
    assert (tmp_path / "batch_output_try0.jsonl").is_file()


def test_failing_healthcheck_errors_every_test_and_fails(tmp_path):
    config, tasks = project(
        tmp_path,
        {
            "command": "never-run",
            "healthcheck": {
                "command": f"{PY} -c \"import sys; print('db down', file=sys.stderr); sys.exit(2)\"",
                "timeout_seconds": 5,
            },
        },
    )
    episodes = []
    with pytest.raises(TargetHealthError, match="db down"):
        collect_target_episodes(
            config.models[0].target,
            config.agentv,
            plan_attempts(tasks, 1, []),
            tmp_path,
            concurrency=2,
            on_episode=episodes.append,
            log=print,
        )
    assert sorted(e.task_id for e in episodes) == ["a", "b"]
    assert all("exited with status 2: db down" in e.eval_error for e in episodes)


def test_graders_get_a_minimal_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("JUDGE_SECRET_TOKEN", "t0k")
    code = "import json, os, sys; json.load(sys.stdin); print(json.dumps(dict(os.environ)))"
    result = GraderRunner().run_script([PY, "-c", code], cwd=tmp_path, stdin="{}", timeout_s=10)
    env = json.loads(result.stdout)
    assert "OPENAI_API_KEY" not in env and "JUDGE_SECRET_TOKEN" not in env
    assert env["HOME"] != os.environ.get("HOME") and "PATH" in env
    missing = GraderRunner().run_script(["python3"], cwd=tmp_path / "nope", stdin="{}", timeout_s=1)
    assert missing.start_error and "no such folder" in missing.start_error
