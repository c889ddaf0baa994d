"""Where things are: the repository, the test fixtures, the bundled example agent, and the
venv's bin (the `bat-pipeline` and `dagster` commands, and `uv`, which starts agents)."""

from __future__ import annotations

import sys
from pathlib import Path

from bat_pipeline.locations import BUNDLED_AGENT_DIR, INSTANCE_SETTINGS

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "bat_pipeline_tests"
FIXTURES = TESTS / "fixtures"
REFERENCE = FIXTURES / "bat-adk-reference"
"""The bat-adk reference fixtures (see the README there)."""
EXAMPLE_AGENT = BUNDLED_AGENT_DIR
"""The bundled example's agent folder, which tests copy and never write to."""
VENV_BIN = Path(sys.executable).parent
BAT_PIPELINE = VENV_BIN / "bat-pipeline"
DAGSTER = VENV_BIN / "dagster"


def dagster_home(folder: Path) -> Path:
    """`folder` made a Dagster home with the project's instance settings (dagster.yaml, as
    `bat-pipeline` seeds a fresh home: telemetry off, bat_pipeline's instance class)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "dagster.yaml").write_text(INSTANCE_SETTINGS.read_text(encoding="utf-8"), encoding="utf-8")
    return folder


# Missing fixtures fail the tests that need them, never skip them.
if not (REFERENCE / "tasks.json").is_file():
    raise FileNotFoundError(f"the bat-adk reference fixtures are not at {REFERENCE}")
