"""Which agent folder a process evaluates when it is not told: the rule every code
location follows (`dagster dev`, `dagster asset materialize`, the partition processes of
`bat-pipeline run`)."""

from __future__ import annotations

import os
from pathlib import Path

AGENT_DIR_VAR = "BAT_AGENT_DIR"
BUNDLED_AGENT_DIR = Path(__file__).resolve().parent / "example" / "weather_agent"
"""The bundled example agent folder (scripted models, see its eval/eval.yaml)."""


def agent_dir_from_env() -> Path:
    """`$BAT_AGENT_DIR`, else the current folder when it holds eval/eval.yaml, else the
    bundled example; absolute."""
    if os.environ.get(AGENT_DIR_VAR):
        return Path(os.environ[AGENT_DIR_VAR]).expanduser().resolve()
    if (Path.cwd() / "eval" / "eval.yaml").is_file():
        return Path.cwd().resolve()
    return BUNDLED_AGENT_DIR
