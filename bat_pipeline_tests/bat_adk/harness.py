"""Start the bat-adk test agents as real processes, the way the pipeline does, and talk
A2A to them.

- `prepared_uv_env()`: runs scripts/prepare-bat-adk (quick once done) and returns the
  variables that make `uv run .` use the prepared environment, offline.
- `agent_config()`: a temporary copy of an agent's config.yaml with another port, span
  file or remote agent URL (the agent's own config.yaml is never written).
- `running_agent()`: `uv run . [agent]` in a new process group; ready once its agent
  card answers; stopped with SIGTERM to the group, then SIGKILL after a timeout.
- `converse()`: one A2A conversation (context id), one streamed message per turn.
- `read_spans()`: the JSON-lines span file.
- `copy_agent()`, `pipeline_env()`, `start_pipeline()`: `bat-pipeline run` on a copy of an
  agent folder, in its own process group, with its own BAT_PIPELINE_HOME and DAGSTER_HOME.
- `processes_in()`: live processes working in a folder (the agents started there).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml

from bat_pipeline.resources.agent_process import free_port  # noqa: F401 - tests import it from here

REPO = Path(__file__).resolve().parents[2]
AGENTS_DIR = Path(__file__).resolve().parent / "agents"
STANDALONE = AGENTS_DIR / "standalone_weather"
BLUEPRINT = AGENTS_DIR / "blueprint"

STARTUP_TIMEOUT_S = 90.0
SHUTDOWN_TIMEOUT_S = 10.0


def prepared_uv_env() -> dict[str, str]:
    """Prepare the shared bat-adk environment; return the variables to run agents with."""
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "prepare-bat-adk")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"scripts/prepare-bat-adk failed ({done.returncode}):\n{done.stderr[-3000:]}"
        )
    variables = {}
    for line in done.stdout.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.isidentifier():
            variables[key] = value
    for needed in ("UV_PROJECT_ENVIRONMENT", "UV_NO_SYNC", "UV_OFFLINE"):
        if needed not in variables:
            raise RuntimeError(f"scripts/prepare-bat-adk printed no {needed}: {done.stdout!r}")
    return variables


def agent_config(
    source: Path,
    target: Path,
    *,
    port: int,
    spans: Path,
    remote_agents: dict[str, str] | None = None,
) -> Path:
    """Write a copy of `source` (a config.yaml) to `target` with the port, the span file
    and, by name, remote agent URLs replaced. `source` is only read."""
    config = yaml.safe_load(source.read_text())
    config.setdefault("endpoint", {})["port"] = port
    telemetry = config.setdefault("telemetry", {})
    telemetry["output"] = [{"type": "local", "file_path": str(spans)}]
    for entry in config.get("remote-agents", []):
        if remote_agents and entry["name"] in remote_agents:
            entry["url"] = remote_agents[entry["name"]]
    target.write_text(yaml.safe_dump(config, sort_keys=False))
    return target


def agent_env(uv_env: dict[str, str], config_path: Path, model_url: str, model: str) -> dict:
    """The process environment of an agent: the shell's, the prepared uv variables, the
    model (MODEL_PROVIDER / MODEL / BASE_URL) and CONFIG_PATH."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONFIG_PATH")}
    env.update(uv_env)
    env.update(
        {
            "MODEL_PROVIDER": "openai",
            "MODEL": model,
            "BASE_URL": f"{model_url}/v1",
            "OPENAI_API_KEY": "not-needed-by-the-scripted-model",
            "CONFIG_PATH": str(config_path),
            "AGENT_CARD_DISPLAY": "0",
        }
    )
    return env


def stop_process(proc: subprocess.Popen, timeout: float = SHUTDOWN_TIMEOUT_S) -> int:
    """SIGTERM to the process group, then SIGKILL after `timeout` seconds."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=timeout)
    # Children left in the group (should there be any) go too.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    return proc.returncode


def wait_for_card(url: str, proc: subprocess.Popen, log_path: Path, timeout: float) -> dict:
    """Poll the agent card until it answers; fail early if the process dies."""
    card_url = f"{url}/.well-known/agent-card.json"
    deadline = time.monotonic() + timeout
    with httpx.Client(timeout=2.0) as client:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"agent exited with {proc.returncode} before serving {card_url}:\n"
                    f"{log_path.read_text()[-4000:]}"
                )
            try:
                response = client.get(card_url)
                if response.status_code == 200:
                    return response.json()
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"no agent card at {card_url} after {timeout}s:\n{log_path.read_text()[-4000:]}"
                )
            time.sleep(0.1)  # poll interval


@dataclass
class RunningAgent:
    url: str
    card: dict
    proc: subprocess.Popen
    log_path: Path


@contextlib.contextmanager
def running_agent(
    cwd: Path, args: list[str], env: dict, port: int, log_path: Path
) -> Iterator[RunningAgent]:
    """`uv run . <args>` from `cwd` in its own process group, until the block ends."""
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            ["uv", "run", ".", *args],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        url = f"http://127.0.0.1:{port}"
        card = wait_for_card(url, proc, log_path, STARTUP_TIMEOUT_S)
        yield RunningAgent(url=url, card=card, proc=proc, log_path=log_path)
    finally:
        stop_process(proc)


@dataclass
class Turn:
    user: str
    states: list[str] = field(default_factory=list)  # A2A task states seen, in order
    texts: list[str] = field(default_factory=list)  # non-empty texts seen, in order

    @property
    def final_state(self) -> str | None:
        terminal = [s for s in self.states if s in ("completed", "input-required", "failed")]
        return terminal[-1] if terminal else None

    @property
    def output(self) -> str:
        return self.texts[-1] if self.texts else ""


_STATES = {
    "TASK_STATE_SUBMITTED": "submitted",
    "TASK_STATE_WORKING": "working",
    "TASK_STATE_INPUT_REQUIRED": "input-required",
    "TASK_STATE_COMPLETED": "completed",
    "TASK_STATE_FAILED": "failed",
    "TASK_STATE_CANCELED": "canceled",
    "TASK_STATE_REJECTED": "rejected",
}


async def _converse(url: str, context_id: str, turns: list[str]) -> list[Turn]:
    from a2a.client import ClientConfig, create_client
    from a2a.helpers import get_stream_response_text, new_text_message
    from a2a.types import Role, SendMessageRequest, TaskState

    done = []
    async with httpx.AsyncClient(timeout=120.0) as http:
        client = await create_client(
            url, client_config=ClientConfig(httpx_client=http, streaming=True)
        )
        try:
            for text in turns:
                turn = Turn(user=text)
                message = new_text_message(text, context_id=context_id, role=Role.ROLE_USER)
                async for event in client.send_message(SendMessageRequest(message=message)):
                    state = None
                    if event.HasField("status_update"):
                        state = event.status_update.status.state
                    elif event.HasField("task"):
                        state = event.task.status.state
                    elif event.HasField("artifact_update") or event.HasField("message"):
                        state = TaskState.TASK_STATE_COMPLETED
                    if state is not None:
                        turn.states.append(_STATES.get(TaskState.Name(state), "unknown"))
                    said = get_stream_response_text(event)
                    if said:
                        turn.texts.append(said)
                done.append(turn)
        finally:
            await client.close()
    return done


def converse(url: str, context_id: str, turns: list[str]) -> list[Turn]:
    """Send each turn as one streamed A2A message with `context_id`."""
    return asyncio.run(_converse(url, context_id, turns))


def read_spans(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def roots(spans: list[dict], conversation_id: str) -> list[dict]:
    """The invoke_agent roots (non-CLIENT, no parent) of one conversation, by start."""
    found = [
        s
        for s in spans
        if s["parent_span_id"] is None
        and s["kind"] != "CLIENT"
        and s["attributes"].get("gen_ai.operation.name") == "invoke_agent"
        and s["attributes"].get("gen_ai.conversation.id") == conversation_id
    ]
    return sorted(found, key=lambda s: s["start_time"])


def in_trace(spans: list[dict], trace_id: str, kind: str | None = None) -> list[dict]:
    """Spans of a trace; with `kind`, only those of that openinference span kind."""
    return sorted(
        (
            s
            for s in spans
            if s["trace_id"] == trace_id
            and (kind is None or s["attributes"].get("openinference.span.kind") == kind)
        ),
        key=lambda s: s["start_time"],
    )


def files_under(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


# --- `bat-pipeline run` as a user runs it, on a copy of an agent folder ----------------

PIPELINE_TIMEOUT_S = 240.0  # under pytest-timeout (300 s per test), to see the output
_RUN_ID = re.compile(r"\(run (\S+)\)")
_COPY_IGNORE = shutil.ignore_patterns("output", "__pycache__", "spans.jsonl", ".venv", "uv.lock")


def copy_agent(source: Path, target: Path) -> Path:
    """A copy of an agent folder (or a whole blueprint root) without outputs, span files,
    caches or environments: what the user's checkout holds."""
    shutil.copytree(source, target, ignore=_COPY_IGNORE)
    return target


def edit_eval(agent_dir: Path, change) -> Path:
    """Rewrite the eval/eval.yaml of a copied agent folder: `change(config_dict)` edits it."""
    path = agent_dir / "eval" / "eval.yaml"
    config = yaml.safe_load(path.read_text())
    change(config)
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def pipeline_env(uv_env: dict[str, str], home: Path, model_url: str) -> dict[str, str]:
    """The environment of a `bat-pipeline run`: the shell's, the venv's bin first on PATH
    (it carries `uv`), the prepared uv variables, its own BAT_PIPELINE_HOME and
    DAGSTER_HOME, and BAT_DEMO_LLM_URL for the models of eval.yaml."""
    drop = ("VIRTUAL_ENV", "CONFIG_PATH", "BAT_AGENT_DIR", "BAT_PIPELINE_HOME", "DAGSTER_HOME")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(uv_env)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["BAT_PIPELINE_HOME"] = str(home)
    env["DAGSTER_HOME"] = str(home / "dagster")
    env["BAT_DEMO_LLM_URL"] = model_url
    return env


@dataclass
class PipelineRun:
    """One `bat-pipeline run` subprocess (its own process group) and where it writes."""

    agent_dir: Path
    home: Path
    proc: subprocess.Popen
    log_path: Path

    @property
    def output(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    @property
    def run_id(self) -> str:
        found = _RUN_ID.search(self.output)
        if not found:
            raise AssertionError(f"no run id in the output of bat-pipeline:\n{self.output[-3000:]}")
        return found.group(1)

    def wait(self, timeout: float = PIPELINE_TIMEOUT_S) -> int:
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            stop_process(self.proc)
            raise AssertionError(
                f"bat-pipeline run did not end within {timeout}s:\n{self.output[-4000:]}"
            ) from None

    def partition_dir(self, model_key: str) -> Path:
        """The pipeline's own folder of this run and model under BAT_PIPELINE_HOME."""
        return self.home / "runs" / self.run_id / model_key

    def reference_dir(self, run_name: str, model: str) -> Path:
        """SPEC §8: <agent>/eval/output/<run id>/<run_name>_<model with ':' → '-'>/."""
        return self.agent_dir / "eval" / "output" / self.run_id / f"{run_name}_{model.replace(':', '-')}"


def start_pipeline(agent_dir: Path, env: dict[str, str], home: Path, *args: str) -> PipelineRun:
    """`bat-pipeline run <agent_dir> [args]` in a new process group, output to a log file."""
    home.mkdir(parents=True, exist_ok=True)
    log_path = home / "bat-pipeline.out"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [str(Path(sys.executable).parent / "bat-pipeline"), "run", str(agent_dir), *args],
            cwd=home,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return PipelineRun(agent_dir=agent_dir, home=home, proc=proc, log_path=log_path)


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def processes_in(folder: Path) -> list[int]:
    """Live processes whose working directory is `folder` or below: the agents started
    there (`uv run .` and the Python it runs)."""
    folder = folder.resolve()
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cwd = Path(os.readlink(proc / "cwd"))
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and (cwd == folder or folder in cwd.parents):
            found.append(int(proc.name))
    return found


