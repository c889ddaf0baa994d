"""Blueprint entry point: `uv run . <agent>` starts the agent of the folder <agent>.

Each agent folder holds config.yaml, agent.json and agent.py (with a `main()`).
CONFIG_PATH and AGENT_CARD_PATH default to the files of that folder.
"""

import importlib
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent


def _agents() -> list[str]:
    return sorted(
        p.parent.name for p in ROOT.glob("*/agent.py") if (p.parent / "agent.json").is_file()
    )


def run() -> None:
    agents = _agents()
    if len(sys.argv) != 2 or sys.argv[1] not in agents:
        sys.exit(f"usage: uv run . <agent>   (agents: {', '.join(agents)})")
    name = sys.argv[1]
    os.environ.setdefault("CONFIG_PATH", str(ROOT / name / "config.yaml"))
    os.environ.setdefault("AGENT_CARD_PATH", str(ROOT / name / "agent.json"))
    sys.path.insert(0, str(ROOT))
    importlib.import_module(f"{name}.agent").main()


run()
