"""The `evaluate` job of a run as a reconstructable job: how a step in another process or
on a Dask worker rebuilds the run's definitions from plain values (executors.py says where
steps run). Above definitions.py in the layers: it builds the definitions, which choose
the executor."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import dagster as dg

from bat_pipeline.automation import EVALUATE_JOB
from bat_pipeline.definitions import build_definitions
from bat_pipeline.engine.config.project import Overrides
from bat_pipeline.engine.contracts.config import ExecutionSettings
from bat_pipeline.locations import root_path
from bat_pipeline.remote_root import root_text
from bat_pipeline.resources.scripted_process import URL_VAR


def evaluate_job(
    agent_dir: str, root: str, execution: dict[str, Any], overrides: dict[str, Any], scripted_url: str | None = None
) -> dg.JobDefinition:
    """The `evaluate` job, built from plain values: how a step in another process or on a
    Dask worker gets the run's definitions (dg.build_reconstructable_job). `overrides`:
    `plain_overrides` of the command line's."""
    # The paths back as paths; `export_otlp` is a URL, kept as text.
    values: dict[str, Any] = {
        name: Path(value) if isinstance(value, str) and name != "export_otlp" else value
        for name, value in overrides.items()
    }
    given = Overrides(**values)
    defs = build_definitions(
        Path(agent_dir),
        root_path(root),
        given,
        execution=ExecutionSettings.model_validate(execution),
        scripted_url=scripted_url,
    )
    return defs.resolve_job_def(EVALUATE_JOB)


def plain_overrides(overrides: Any) -> dict[str, Any]:
    """An engine.config.project.Overrides as plain values (its paths as strings, the rest
    as they are), for `evaluate_job`."""
    import dataclasses

    return {
        name: str(value) if isinstance(value, Path) else value for name, value in dataclasses.asdict(overrides).items()
    }


def reconstructable_evaluate(agent_dir: Path, root: Path, execution: ExecutionSettings, overrides: Any) -> Any:
    """The `evaluate` job of this run as a reconstructable job (`evaluate_job`'s values):
    with the scripted model server this process started, if any."""
    values = {
        "agent_dir": str(agent_dir),
        "root": root_text(root),  # an object store's URL, not this machine's mirror of it
        "execution": execution.model_dump(),
        "overrides": plain_overrides(overrides),
        "scripted_url": os.environ.get(URL_VAR),
    }
    return dg.build_reconstructable_job(__name__, evaluate_job.__name__, reconstructable_kwargs=values)
