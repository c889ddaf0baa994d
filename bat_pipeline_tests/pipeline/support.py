"""Set-up shared by the end-to-end tests and the end-to-end bench: a trimmed copy of the
example agent folder, the environment of the processes that evaluate it, and a look in
/proc for agent processes left behind."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

from bat_pipeline.locations import BUNDLED_AGENT_DIR as EXAMPLE_AGENT_DIR

FEW_TASKS = ("weather_paris", "add_numbers", "capital_of_france")
"""Quick tasks (no sub-agent) the competent persona passes and the sloppy one fails."""
MODEL_KEYS = ("openai-competent", "openai-sloppy", "anthropic-competent")
COMPETENT = ("openai-competent", "anthropic-competent")
SLOPPY = "openai-sloppy"
VENV_BIN = Path(sys.executable).parent
AGENT_MODULE = "bat_pipeline.example.agent"


def copy_agent(dest: Path, *, tasks: tuple[str, ...] | None = FEW_TASKS, k: int = 1,
               models: tuple[str, ...] | None = None, evaluation: dict | None = None,
               agent: dict | None = None) -> Path:
    """The example agent folder copied to `dest` (no eval/output), its dataset cut to
    `tasks` (None: all), `k` attempts, only `models` (partition keys; None: all), and
    `evaluation` / `agent` entries merged into eval.yaml."""
    shutil.copytree(EXAMPLE_AGENT_DIR, dest, ignore=shutil.ignore_patterns("output", "__pycache__"))
    dataset = dest / "eval" / "input" / "tasks.json"
    if tasks is not None:
        kept = [t for t in json.loads(dataset.read_text(encoding="utf-8")) if t["id"] in tasks]
        assert len(kept) == len(tasks), "a task of the trimmed dataset is missing from the example"
        dataset.write_text(json.dumps(kept, indent=2), encoding="utf-8")
    eval_file = dest / "eval" / "eval.yaml"
    data = yaml.safe_load(eval_file.read_text(encoding="utf-8"))
    data["evaluation"]["k"] = k
    data["evaluation"].update(evaluation or {})
    if agent:
        data.setdefault("agent", {}).update(agent)
    if models is not None:
        data["models"] = [m for m in data["models"] if f"{m['provider']}-{m['model']}" in models]
        assert len(data["models"]) == len(models)
    eval_file.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return dest


def pipeline_env(agent_dir: Path, root: Path, llm_url: str) -> dict[str, str]:
    """The environment of a `dagster` / `bat-pipeline` process evaluating `agent_dir`, with
    results under `root` and a Dagster instance in `root/dagster_home`."""
    home = root / "dagster_home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    env = dict(os.environ)
    env.update({
        "BAT_AGENT_DIR": str(agent_dir),
        "BAT_PIPELINE_HOME": str(root),
        "DAGSTER_HOME": str(home),
        "BAT_DEMO_LLM_URL": llm_url,
        "BAT_DEMO_JUDGE_KEY": "scripted-judge-takes-any-key",
        "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
    })
    return env


def run(command: list[str], env: dict[str, str], timeout_s: float = 240) -> subprocess.CompletedProcess:
    """Run to completion; stdout and stderr together in `.stdout`."""
    return subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          stdin=subprocess.DEVNULL, text=True, timeout=timeout_s)


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def agent_processes(agent_dir: Path, llm_url: str) -> list[str]:
    """Live processes started for `agent_dir`: their command line names the folder, or they
    run the example agent from inside it or talk to this test's model server."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        stat = _read(proc / "stat").rsplit(b")", 1)
        if len(stat) < 2 or stat[1].split()[:1] == [b"Z"]:
            continue
        cmdline = _read(proc / "cmdline").replace(b"\0", b" ").decode(errors="replace")
        ours = str(agent_dir) in cmdline
        if not ours and AGENT_MODULE in cmdline:
            try:
                cwd = os.readlink(proc / "cwd")
            except OSError:
                cwd = ""
            ours = cwd.startswith(str(agent_dir)) or llm_url.encode() in _read(proc / "environ")
        if ours:
            found.append(f"{proc.name}: {cmdline.strip()}")
    return found


def leftover_agents(agent_dir: Path, llm_url: str, timeout_s: float = 10.0) -> list[str]:
    """`agent_processes` once they are gone, or what is still alive after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        alive = agent_processes(agent_dir, llm_url)
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.1)
