"""The scripted model server behind the bundled example: started on demand, one per process tree.

The example's eval.yaml points its models and judge at `${BAT_DEMO_LLM_URL}`. When that is
unset, the first caller starts the server as a child process (it dies with its parent) and
sets the variable, so every step process started afterwards inherits it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from bat_pipeline.resources.agent_process import die_with_parent

ENV_VAR = "BAT_DEMO_LLM_URL"
KEY_VAR = "BAT_DEMO_JUDGE_KEY"
DEMO_KEY = "scripted-judge-accepts-any-key"
EXAMPLE_AGENT_DIR = Path(__file__).resolve().parent / "weather_agent"

_process: subprocess.Popen | None = None


def start_scripted_llm(extra_args: list[str] | None = None, env: dict[str, str] | None = None) -> tuple[subprocess.Popen, str]:
    """A scripted model server process on a free 127.0.0.1 port, and its base URL."""
    process = subprocess.Popen(
        [sys.executable, "-m", "bat_pipeline.example.scripted_llm", "--port", "0", *(extra_args or [])],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True,
        preexec_fn=die_with_parent, env=env)
    for line in process.stdout:
        if line.startswith("LISTENING "):
            return process, line.split(" ", 1)[1].strip()
    process.kill()
    raise RuntimeError("the scripted model server exited before it listened")


def ensure_demo_llm() -> str:
    """`$BAT_DEMO_LLM_URL`, starting the scripted server first when it is unset."""
    global _process
    os.environ.setdefault(KEY_VAR, DEMO_KEY)
    url = os.environ.get(ENV_VAR)
    if url:
        return url
    _process, url = start_scripted_llm()
    os.environ[ENV_VAR] = url
    return url


def is_example(agent_dir: Path) -> bool:
    return Path(agent_dir).resolve() == EXAMPLE_AGENT_DIR
