"""The agents/ folders are data (bat-adk agents started as processes), not test modules.

Session fixtures shared by the pipeline tests: the prepared bat-adk environment and one
scripted model server (per-model knobs keep tests that slow a model apart)."""

import pytest

from bat_pipeline.example.scripted_llm import serve_scripted_llm
from bat_pipeline_tests.bat_adk.harness import prepared_uv_env

collect_ignore_glob = ["agents/*"]


@pytest.fixture(scope="session")
def bat_adk_env() -> dict[str, str]:
    """The variables that run the agents with `uv run .` in the prepared environment."""
    return prepared_uv_env()


@pytest.fixture(scope="session")
def scripted_llm():
    """The scripted model server (models `competent`, `sloppy`, ...); `.base_url` has no /v1."""
    with serve_scripted_llm() as llm:
        yield llm
