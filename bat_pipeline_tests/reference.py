"""Where the bat-adk reference fixtures are: `<repo>/../shared` (CI lays shared/ beside the
clone), or `$BAT_SHARED_DIR`. Missing fixtures fail the tests that need them, never skip."""

from __future__ import annotations

import os
from pathlib import Path

SHARED = Path(os.environ.get("BAT_SHARED_DIR") or Path(__file__).resolve().parents[2] / "shared")
REFERENCE = SHARED / "fixtures" / "bat-adk-reference"

if not (REFERENCE / "tasks.json").is_file():
    raise FileNotFoundError(
        f"the bat-adk reference fixtures are not at {REFERENCE}: put shared/ beside the "
        "repository or point BAT_SHARED_DIR at it")
