"""Fixtures every test folder shares: one scripted model server per session (per xdist
worker) and the bat-adk agents' prepared environment, made once per session."""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator

import pytest

from bat_pipeline_tests.support.bat_adk import prepared_once
from bat_pipeline_tests.support.dagster_runs import put_back_sigterm
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


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    """SIGTERM as the session found it once a test's fixtures are set up (a module's fixture
    may have run Dagster in this process: support.dagster_runs.put_back_sigterm)."""
    yield
    put_back_sigterm()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    """And after each test, for the next one's fixtures."""
    yield
    put_back_sigterm()


def _module_seconds(item: pytest.Item) -> float:
    marker = item.get_closest_marker("slow")
    return float(marker.kwargs.get("seconds", 1)) if marker else 0.0


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The end-to-end modules first, the longest first (by their `slow(seconds=...)`), each
    module's tests kept together and in file order. Under xdist (`make test`) each worker
    takes a whole file at a time in this order: the long files start at once, and the many
    quick ones fill in at the end instead of a long one starting last."""
    cost: dict[str, float] = {}
    for item in items:
        cost[item.nodeid.split("::")[0]] = max(cost.get(item.nodeid.split("::")[0], 0.0), _module_seconds(item))
    items.sort(key=lambda item: -cost[item.nodeid.split("::")[0]])


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection imported (Dagster, the pipeline, matplotlib, every test module) lives
    as long as the session: taken out of the garbage collector's care (gc.freeze), so the
    full collections the in-process tests trigger do not walk it again each time."""
    gc.freeze()
