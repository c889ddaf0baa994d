"""`bat-pipeline run` as a user runs it, on a copy of a bat-adk agent folder: a process
group of its own, its own BAT_PIPELINE_HOME and DAGSTER_HOME, its output in a log file."""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from bat_pipeline_tests.support.bat_adk import stop_process
from bat_pipeline_tests.support.example_agent import LLM_URL_VAR
from bat_pipeline_tests.support.paths import BAT_PIPELINE, VENV_BIN
from bat_pipeline_tests.support.processes import start_logged

PIPELINE_TIMEOUT_S = 240.0  # under pytest-timeout (300 s per test), to see the output
_RUN_ID = re.compile(r"\(run (\S+)\)")


def pipeline_env(uv_env: dict[str, str], home: Path, model_url: str) -> dict[str, str]:
    """The environment of a `bat-pipeline run`: the shell's, the venv's bin first on PATH
    (it carries `uv`), the prepared uv variables, its own BAT_PIPELINE_HOME and
    DAGSTER_HOME, and BAT_DEMO_LLM_URL for the models of eval.yaml."""
    drop = ("VIRTUAL_ENV", "CONFIG_PATH", "BAT_AGENT_DIR", "BAT_PIPELINE_HOME", "DAGSTER_HOME")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(uv_env)
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    env["BAT_PIPELINE_HOME"] = str(home)
    env["DAGSTER_HOME"] = str(home / "dagster")
    env[LLM_URL_VAR] = model_url
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
            raise AssertionError(f"bat-pipeline run did not end within {timeout}s:\n{self.output[-4000:]}") from None

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
    proc = start_logged([str(BAT_PIPELINE), "run", str(agent_dir), *args], cwd=home, env=env, log_path=log_path)
    return PipelineRun(agent_dir=agent_dir, home=home, proc=proc, log_path=log_path)
