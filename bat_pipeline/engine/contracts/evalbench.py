"""An EvalBench run config (SPEC §10, §12, §13) as the evaluation keeps it: what the
EvalConfig it becomes does not already say (the scorer selection, the CSV folder, which
scenarios). Read by engine.config.evalbench_run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class EvalbenchRun(BaseModel):
    model_config = ConfigDict(frozen=True)

    source: Path
    """The run config file."""
    dataset: Path
    """`dataset_config`, resolved."""
    scorers: dict[str, dict[str, Any]] | None = None
    """`scorers`: name → options (`enforce_order`, `model_config`, ...); None: every scorer
    a scenario's fields call for."""
    csv_dir: Path | None = None
    """`reporting.csv.output_directory`, resolved; None: no CSV written by the run."""
    scenarios: list[str] | None = None
    """`scenarios`: the ids to run (all when None)."""
    scenario_pattern: str | None = None
    """`scenario_pattern`: a glob the ids to run match as a whole (EvalBench: `*list*`), case-sensitive."""
    isolate_home: bool = True
    """A CLI target's HOME is its session folder (`isolate_home: false` in the model
    config keeps the user's)."""
    target: str = ""
    """What `model_config` names, in words (`a2a http://…`, `a2a agent folder …`)."""
    settings: dict[str, Any] = Field(default_factory=dict)
    """The run config as read (`!ENV` resolved), for `configs.csv` and the summary's order."""
    model_settings: dict[str, Any] = Field(default_factory=dict)
    """The model config as read, for `configs.csv`."""
