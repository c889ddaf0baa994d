"""The bundled example agent in tests: trimmed copies of its folder (the user's files are
never the shipped ones), the environment of a process evaluating a copy, and the agent
started alone as a process of its own."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import yaml

from bat_pipeline.example.agent.a2a_call import Exchange, connect, send_text
from bat_pipeline.resources.ports import free_port
from bat_pipeline_tests.support import forked_cli, local_http
from bat_pipeline_tests.support.paths import EXAMPLE_AGENT, VENV_BIN, dagster_home
from bat_pipeline_tests.support.polling import wait_for

FEW_TASKS = ("weather_paris", "add_numbers", "capital_of_france")
"""Quick tasks (no sub-agent) the competent persona passes and the sloppy one fails."""
FAULT_TASKS = (*FEW_TASKS, "forecast_from_subagent")
"""The fault tests' tasks: the quick ones and one through the Forecaster sub-agent."""
MODEL_KEYS = ("openai-competent", "openai-sloppy", "anthropic-competent")
"""The example's models, as partition keys."""
COMPETENT = ("openai-competent", "anthropic-competent")
SLOPPY = "openai-sloppy"
JUDGE_KEY_VAR = "BAT_DEMO_JUDGE_KEY"
"""The example's judge key variable (its .env holds a placeholder the scripted judge takes)."""
LLM_URL_VAR = "BAT_DEMO_LLM_URL"
"""A running scripted model server: runs use it instead of starting their own."""
CARD = "/.well-known/agent-card.json"


def _model_entry(model: str) -> dict[str, Any] | None:
    """`openai-competent` → the example's entry for it; a bare name (`slow-competent`) → an
    OpenAI model of that name on the scripted server; None for a key the example lacks."""
    if "-" in model and model.split("-", 1)[0] in ("openai", "anthropic", "ollama"):
        return None
    return {"provider": "openai", "model": model, "base_url": "{scripted_llm}/v1"}


def copy_example_agent(
    dest: Path,
    *,
    tasks: tuple[str, ...] | None = FEW_TASKS,
    extra_tasks: list[dict] = (),
    k: int = 1,
    models: tuple[str, ...] | None = None,
    evaluation: dict | None = None,
    agent: dict | None = None,
    judge: dict | None = None,
) -> Path:
    """The example agent folder copied to `dest` (no eval/output): its dataset cut to `tasks`
    (None: all) plus `extra_tasks`, `k` attempts, only `models` (None: all; each a partition
    key of the example, or a bare model name the scripted server answers as an OpenAI
    model), and `evaluation` / `agent` / `judge` entries merged into eval.yaml."""
    shutil.copytree(EXAMPLE_AGENT, dest, ignore=shutil.ignore_patterns("output", "__pycache__"))
    dataset = dest / "eval" / "input" / "tasks.json"
    kept = json.loads(dataset.read_text(encoding="utf-8"))
    if tasks is not None:
        kept = [t for t in kept if t["id"] in tasks]
        assert len(kept) == len(tasks), "a task of the trimmed dataset is missing from the example"
    dataset.write_text(json.dumps(kept + list(extra_tasks), indent=2), encoding="utf-8")

    def change(config: dict) -> None:
        config["evaluation"]["k"] = k
        if models is not None:
            declared = {f"{m['provider']}-{m['model']}": m for m in config["models"]}
            config["models"] = [declared[m] if _model_entry(m) is None else _model_entry(m) for m in models]

    edit_eval(dest, change, evaluation=evaluation or {}, agent=agent or {}, judge=judge or {})
    return dest


def edit_eval(agent_dir: Path, change: Callable[[dict], None] | None = None, **blocks: Any) -> Path:
    """Rewrite the eval/eval.yaml of a copied agent folder: `change(config)` edits it, then
    each dict in `blocks` is merged into that top-level block (other values replace it)."""
    path = Path(agent_dir) / "eval" / "eval.yaml"
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    if change is not None:
        change(config)
    for name, values in blocks.items():
        if isinstance(values, dict):
            config.setdefault(name, {}).update(values)
        else:
            config[name] = values
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def pipeline_env(agent_dir: Path, root: Path, llm_url: str) -> dict[str, str]:
    """The environment of a `dagster` / `bat-pipeline` process evaluating `agent_dir`, with
    results under `root`, a Dagster instance in `root/dagster_home` and the models and
    judge on the scripted server at `llm_url`."""
    home = dagster_home(root / "dagster_home")
    env = dict(os.environ)
    env.update(
        {
            "BAT_AGENT_DIR": str(agent_dir),
            "BAT_PIPELINE_HOME": str(root),
            "DAGSTER_HOME": str(home),
            LLM_URL_VAR: llm_url,
            JUDGE_KEY_VAR: "scripted-judge-takes-any-key",
            "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        }
    )
    return env


def run(
    command: list[str], env: dict[str, str], timeout_s: float = 240, cwd: Path | str | None = None
) -> subprocess.CompletedProcess:
    """Run to completion, in `cwd` (default: this process's); stdout and stderr together in
    `.stdout`. A `bat-pipeline` or `dagster` command is forked from the preloaded server
    (forked_cli)."""
    if forked_cli.forkable(command, env):
        return forked_cli.run(command, env, timeout_s, cwd)
    return subprocess.run(
        command,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        timeout=timeout_s,
    )


@dataclass
class Agent:
    """A running example agent with its own folder, port and span files."""

    proc: subprocess.Popen[bytes]
    url: str
    folder: Path

    @property
    def spans_file(self) -> Path:
        return self.folder / "spans" / "agent.jsonl"

    @property
    def forecaster_spans_file(self) -> Path:
        return self.folder / "spans" / "forecaster.jsonl"

    def _ready(self) -> bool:
        assert self.proc.poll() is None, f"agent exited with {self.proc.returncode}"
        try:
            return local_http.get(self.url + CARD, timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    def wait_ready(self, timeout_s: float = 40.0) -> Agent:
        wait_for(self._ready, timeout_s, what=f"the agent card at {self.url}")
        return self

    def terminate(self) -> None:
        """SIGTERM, without waiting (`stop` waits)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)

    def stop(self, timeout_s: float = 15.0) -> int:
        """SIGTERM and wait; returns the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def launch_agent(
    tmp: Path, llm_url: str, model: str, provider: str = "openai", telemetry: list[dict] | None = None
) -> Agent:
    """Copy the example agent's card, write a config pointing to tmp files, start it.

    `telemetry`: the `telemetry.output` entries (default: a local file, `spans/agent.jsonl`)."""
    folder = tmp / f"agent-{provider}-{model}"
    folder.mkdir(parents=True)
    shutil.copy(EXAMPLE_AGENT / "agent.json", folder / "agent.json")
    config = yaml.safe_load((EXAMPLE_AGENT / "config.yaml").read_text())
    port = free_port()
    config["endpoint"]["port"] = port
    config["telemetry"]["output"] = telemetry or [{"type": "local", "file_path": "spans/agent.jsonl"}]
    config["sub_agent"]["telemetry_file"] = "spans/forecaster.jsonl"
    (folder / "config.yaml").write_text(yaml.safe_dump(config))
    base = llm_url if provider == "anthropic" else llm_url + "/v1"
    env = {
        **os.environ,
        "CONFIG_PATH": str(folder / "config.yaml"),
        "MODEL": model,
        "MODEL_PROVIDER": provider,
        "BASE_URL": base,
    }
    proc = subprocess.Popen([sys.executable, "-m", "bat_pipeline.example.agent"], cwd=folder, env=env)
    return Agent(proc, f"http://127.0.0.1:{port}", folder)


def converse(agent: Agent, turns: list[str], conversation: str) -> list[Exchange]:
    """Send the turns in order over A2A; a turn after input-required continues that task."""

    async def run() -> list[Exchange]:
        async with local_http.async_client() as http:
            client = await connect(agent.url, http)
            out: list[Exchange] = []
            try:
                for text in turns:
                    task = out[-1].task_id if out and out[-1].state == "input-required" else None
                    out.append(await send_text(client, text, conversation, task_id=task))
            finally:
                await client.close()
            return out

    return asyncio.run(run())


def conversation_id(name: str) -> str:
    """A conversation id of its own for each test's conversation with a long-lived agent."""
    return f"{name}__{uuid.uuid4().hex[:8]}"
