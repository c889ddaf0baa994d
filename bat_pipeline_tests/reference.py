"""Where the bat-adk reference fixtures are: `bat_pipeline_tests/fixtures/bat-adk-reference`
(see the README there). Missing fixtures fail the tests that need them, never skip."""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures"
REFERENCE = FIXTURES / "bat-adk-reference"

if not (REFERENCE / "tasks.json").is_file():
    raise FileNotFoundError(f"the bat-adk reference fixtures are not at {REFERENCE}")
