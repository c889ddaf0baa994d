"""Fixtures every test folder shares: one scripted model server per session (per xdist
worker) and the bat-adk agents' prepared environment, made once per session."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from bat_pipeline_tests.support.bat_adk import prepared_once
from bat_pipeline_tests.support.scripted import ScriptedServer, scripted_server

# The bat-adk agents' folders are data (agents started as processes), not test modules.
collect_ignore_glob = ["bat_adk/agents/*"]


@pytest.fixture(scope="session")
def scripted_llm() -> Iterator[ScriptedServer]:
    """The scripted model server (models `competent`, `sloppy`, `judge`, ...) as a process;
    `.url` has no /v1. Tests keep apart by model names of their own for their knobs."""
    with scripted_server() as server:
        yield server


@pytest.fixture(scope="session")
def bat_adk_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The variables that run the bat-adk agents with `uv run .` in the prepared
    environment; scripts/prepare-bat-adk runs once for the session, whichever xdist worker
    asks first (the workers share their basetemp's parent)."""
    base = tmp_path_factory.getbasetemp()
    return prepared_once(base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base)
