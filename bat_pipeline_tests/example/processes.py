"""Start and stop the demo's real processes for tests; readiness is polled, never slept on."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import yaml

from bat_pipeline.resources.agent_process import free_port

SHIPPED_AGENT = Path(__file__).resolve().parents[2] / "bat_pipeline" / "example" / "weather_agent"
CARD = "/.well-known/agent-card.json"


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

    def wait_ready(self, timeout_s: float = 40.0) -> "Agent":
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"agent exited with {self.proc.returncode}"
            try:
                if httpx.get(self.url + CARD, timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        raise TimeoutError(f"agent not ready at {self.url}")

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


def launch_agent(tmp: Path, llm_url: str, model: str, provider: str = "openai",
                 telemetry: list[dict] | None = None) -> Agent:
    """Copy the shipped agent folder's card, write a config pointing to tmp files, start it.

    `telemetry`: the `telemetry.output` entries (default: a local file, `spans/agent.jsonl`)."""
    folder = tmp / f"agent-{provider}-{model}"
    folder.mkdir(parents=True)
    shutil.copy(SHIPPED_AGENT / "agent.json", folder / "agent.json")
    config = yaml.safe_load((SHIPPED_AGENT / "config.yaml").read_text())
    port = free_port()
    config["endpoint"]["port"] = port
    config["telemetry"]["output"] = telemetry or [{"type": "local", "file_path": "spans/agent.jsonl"}]
    config["sub_agent"]["telemetry_file"] = "spans/forecaster.jsonl"
    (folder / "config.yaml").write_text(yaml.safe_dump(config))
    base = llm_url if provider == "anthropic" else llm_url + "/v1"
    env = {**os.environ, "CONFIG_PATH": str(folder / "config.yaml"), "MODEL": model,
           "MODEL_PROVIDER": provider, "BASE_URL": base}
    proc = subprocess.Popen([sys.executable, "-m", "bat_pipeline.example.agent"], cwd=folder, env=env)
    return Agent(proc, f"http://127.0.0.1:{port}", folder)


def read_spans(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def wait_for_spans(path: Path, predicate: Any, timeout_s: float = 10.0) -> list[dict[str, Any]]:
    """Poll the span file until `predicate(spans)` holds (the exporter batches every second)."""
    deadline = time.monotonic() + timeout_s
    while True:
        spans = read_spans(path)
        if predicate(spans) or time.monotonic() > deadline:
            return spans
        time.sleep(0.05)
