"""The bat-adk test agents (bat_pipeline_tests/bat_adk/agents) started as real processes,
the way the pipeline starts them, and talked to over A2A.

- `prepared_uv_env()`: runs scripts/prepare-bat-adk (quick once done) and returns the
  variables that make `uv run .` use the prepared environment, offline; `prepared_once()`
  does it once for a whole test session, however many xdist workers ask.
- `agent_config()`: a temporary copy of an agent's config.yaml with another port, span
  file or remote agent URL (the agent's own config.yaml is never written).
- `running_agent()`: `uv run . [agent]` in a new process group; ready once its agent
  card answers; stopped with SIGTERM to the group, then SIGKILL after a timeout.
- `converse()`: one A2A conversation (context id), one streamed message per turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import yaml

from bat_pipeline.resources.process_group import stop_process_group
from bat_pipeline_tests.support import local_http
from bat_pipeline_tests.support.paths import REPO, TESTS
from bat_pipeline_tests.support.polling import wait_for
from bat_pipeline_tests.support.processes import start_logged

AGENTS_DIR = TESTS / "bat_adk" / "agents"
STANDALONE = AGENTS_DIR / "standalone_weather"
BLUEPRINT = AGENTS_DIR / "blueprint"

STARTUP_TIMEOUT_S = 90.0
SHUTDOWN_TIMEOUT_S = 10.0
_COPY_IGNORE = shutil.ignore_patterns("output", "__pycache__", "spans.jsonl", ".venv", "uv.lock")


def prepared_uv_env() -> dict[str, str]:
    """Prepare the shared bat-adk environment; return the variables to run agents with."""
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "prepare-bat-adk")], cwd=REPO, capture_output=True, text=True, timeout=600
    )
    if done.returncode != 0:
        raise RuntimeError(f"scripts/prepare-bat-adk failed ({done.returncode}):\n{done.stderr[-3000:]}")
    variables = {}
    for line in done.stdout.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.isidentifier():
            variables[key] = value
    for needed in ("UV_PROJECT_ENVIRONMENT", "UV_NO_SYNC", "UV_OFFLINE"):
        if needed not in variables:
            raise RuntimeError(f"scripts/prepare-bat-adk printed no {needed}: {done.stdout!r}")
    return variables


def prepared_once(shared: Path) -> dict[str, str]:
    """`prepared_uv_env()` run once for everyone sharing the folder `shared` (the xdist
    workers of one session): the first caller runs the script under a lock and leaves its
    variables there, the others wait for the lock and read them."""
    shared.mkdir(parents=True, exist_ok=True)
    with open(shared / "bat-adk-env.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = shared / "bat-adk-env.json"
        if done.exists():
            return json.loads(done.read_text())
        variables = prepared_uv_env()
        done.write_text(json.dumps(variables))
        return variables


def copy_agent(source: Path, target: Path) -> Path:
    """A copy of an agent folder (or a whole blueprint root) without outputs, span files,
    caches or environments: what the user's checkout holds."""
    shutil.copytree(source, target, ignore=_COPY_IGNORE)
    return target


def agent_config(
    source: Path, target: Path, *, port: int, spans: Path, remote_agents: dict[str, str] | None = None
) -> Path:
    """Write a copy of `source` (a config.yaml) to `target` with the port, the span file
    and, by name, remote agent URLs replaced. `source` is only read."""
    config = yaml.safe_load(source.read_text())
    config.setdefault("endpoint", {})["port"] = port
    config.setdefault("telemetry", {})["output"] = [{"type": "local", "file_path": str(spans)}]
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
    """SIGTERM to the process group, SIGKILL to what is left after `timeout` seconds."""
    stop_process_group(proc, timeout)
    return proc.returncode


def wait_for_card(url: str, proc: subprocess.Popen, log_path: Path, timeout: float) -> dict:
    """Poll the agent card until it answers; fail early if the process dies."""
    card_url = f"{url}/.well-known/agent-card.json"

    def card() -> dict | None:
        if proc.poll() is not None:
            raise RuntimeError(
                f"agent exited with {proc.returncode} before serving {card_url}:\n{log_path.read_text()[-4000:]}"
            )
        try:
            response = local_http.get(card_url, timeout=2.0)
        except httpx.TransportError:
            return None
        return response.json() if response.status_code == 200 else None

    try:
        return wait_for(card, timeout, interval_s=0.1, what=card_url)
    except AssertionError as timed_out:
        raise TimeoutError(f"{timed_out}:\n{log_path.read_text()[-4000:]}") from None


@dataclass
class RunningAgent:
    url: str
    card: dict
    proc: subprocess.Popen
    log_path: Path


@contextlib.contextmanager
def running_agent(cwd: Path, args: list[str], env: dict, port: int, log_path: Path) -> Iterator[RunningAgent]:
    """`uv run . <args>` from `cwd` in its own process group, until the block ends."""
    proc = start_logged(["uv", "run", ".", *args], cwd=cwd, env=env, log_path=log_path)
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
    async with local_http.async_client(timeout=120.0) as http:
        client = await create_client(url, client_config=ClientConfig(httpx_client=http, streaming=True))
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
