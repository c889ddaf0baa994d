"""What the fault tests share: trimmed copies of the example agent folder, in-process runs
of the `evaluate` job, and the checks every fault test ends with (episodes stored, no
process left behind, the user's files untouched)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from bat_pipeline_tests.polling import wait_for  # noqa: F401 - the fault tests import it from here

EXAMPLE_AGENT = Path(__file__).resolve().parents[2] / "bat_pipeline" / "example" / "weather_agent"
JUDGE_KEY_VAR = "BAT_DEMO_JUDGE_KEY"
LLM_URL_VAR = "BAT_DEMO_LLM_URL"
USER_FILES = ("config.yaml", "eval/eval.yaml", "eval/input/tasks.json")
DEFAULT_TASKS = ("weather_paris", "add_numbers", "capital_of_france", "forecast_from_subagent")


def make_agent_copy(dest: Path, *, tasks: tuple[str, ...] = DEFAULT_TASKS, extra_tasks: list[dict] = (),
                    models: tuple[str, ...] = ("competent",), **evaluation: Any) -> Path:
    """A copy of the example agent folder with a few tasks, k=1 and openai models only.

    `evaluation` overrides keys of the `evaluation:` block; `agent`/`judge` dicts given as
    `agent=`/`judge=` are merged into those blocks."""
    shutil.copytree(EXAMPLE_AGENT, dest, ignore=shutil.ignore_patterns("output"))
    dataset = dest / "eval" / "input" / "tasks.json"
    kept = [t for t in json.loads(dataset.read_text()) if t["id"] in tasks]
    dataset.write_text(json.dumps(kept + list(extra_tasks), indent=2))
    eval_file = dest / "eval" / "eval.yaml"
    config = yaml.safe_load(eval_file.read_text())
    agent = evaluation.pop("agent", None)
    judge = evaluation.pop("judge", None)
    config["evaluation"].update({"k": 1, **evaluation})
    config["models"] = [{"provider": "openai", "model": m, "env": {"BASE_URL": "${BAT_DEMO_LLM_URL}/v1"}}
                        for m in models]
    if agent:
        config["agent"].update(agent)
    if judge:
        config["judge"].update(judge)
    eval_file.write_text(yaml.safe_dump(config, sort_keys=False))
    return dest


def edit_eval(agent_dir: Path, **blocks: dict) -> None:
    """Merge dicts into top-level blocks of the copy's eval.yaml (e.g. `judge={...}`)."""
    path = agent_dir / "eval" / "eval.yaml"
    config = yaml.safe_load(path.read_text())
    for name, values in blocks.items():
        config.setdefault(name, {}).update(values)
    path.write_text(yaml.safe_dump(config, sort_keys=False))


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def user_file_hashes(agent_dir: Path) -> dict[str, str]:
    return {name: sha256(agent_dir / name) for name in USER_FILES}


def tree_hashes(folder: Path) -> dict[str, str]:
    """sha256 of every file under `folder`, by relative path."""
    folder = Path(folder)
    return {str(p.relative_to(folder)): sha256(p) for p in sorted(folder.rglob("*")) if p.is_file()}


# ---------------------------------------------------------------------------------------
# Processes

@dataclass
class Proc:
    pid: int
    cmdline: str
    cwd: str
    environ: str


def processes() -> list[Proc]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            raw = (entry / "cmdline").read_bytes()
            environ = (entry / "environ").read_bytes().replace(b"\0", b"\n").decode(errors="replace")
            cwd = os.readlink(entry / "cwd")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if raw and state != "Z":
            found.append(Proc(int(entry.name), raw.replace(b"\0", b" ").decode(errors="replace"), cwd, environ))
    return found


def belonging_to(folder: Path) -> list[Proc]:
    """Live processes started for the agent folder: its path on their command line or in
    their environment (the CLI and its partition runners), or running inside it (the agent
    and the Forecaster)."""
    folder = str(Path(folder).resolve())
    mine = os.getpid()
    return [p for p in processes() if p.pid != mine
            and (folder in p.cmdline or folder in p.environ or p.cwd == folder
                 or p.cwd.startswith(folder + os.sep))]


def assert_no_process_left(folder: Path, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        left = belonging_to(folder)
        if not left:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"processes left behind for {folder}: "
                                 + "; ".join(f"{p.pid} {p.cmdline}" for p in left))
        time.sleep(0.1)


def listening_sockets(pids: set[int]) -> list[tuple[int, str, int]]:
    """(pid, local address as in /proc/net/tcp*, port) of every listening TCP socket of `pids`."""
    inodes: dict[str, int] = {}
    for pid in pids:
        try:
            for fd in (Path("/proc") / str(pid) / "fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    inodes[target[8:-1]] = pid
        except OSError:
            continue
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state == "0A" and inode in inodes:
                address, port = local.split(":")
                found.append((inodes[inode], address, int(port, 16)))
    return found


# ---------------------------------------------------------------------------------------
# Runs

def evaluate(agent_dir: Path, root: Path, instance, partition: str, *, assets: list[str] | None = None,
             tags: dict[str, str] | None = None, run_config: dict | None = None):
    """One in-process run of the `evaluate` job (or of some of its assets) for a partition."""
    import dagster as dg

    from bat_pipeline.definitions import build_definitions

    from bat_pipeline.engine.config import load_eval_config

    job = build_definitions(agent_dir, root).resolve_job_def("evaluate")
    prefix = load_eval_config(agent_dir).agent_id
    selection = [dg.AssetKey([prefix, a]) for a in assets] if assets else None
    return job.execute_in_process(partition_key=partition, instance=instance, raise_on_error=False,
                                  asset_selection=selection, tags=tags, run_config=run_config)


def failure_messages(result) -> list[str]:
    return [e.step_failure_data.error.message + "".join(
        c.message for c in [e.step_failure_data.error.cause] if c is not None)
        for e in result.all_events if e.is_step_failure]


def only_run_dir(root: Path, partition: str) -> Path:
    dirs = sorted((root / "runs").glob(f"*/{partition}"))
    assert len(dirs) == 1, dirs
    return dirs[0]


def episodes_in(run_dir: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in sorted((run_dir / "episodes").glob("*.json"))}


def root_conversations(spans_file: Path) -> list[str]:
    """Conversation ids of the requests the agent served, one per root span."""
    ids = []
    for line in Path(spans_file).read_text().splitlines():
        span = json.loads(line)
        attrs = span.get("attributes") or {}
        if (span.get("parent_span_id") is None and span.get("kind") != "CLIENT"
                and attrs.get("gen_ai.operation.name") == "invoke_agent"):
            ids.append(attrs.get("gen_ai.conversation.id"))
    return ids
