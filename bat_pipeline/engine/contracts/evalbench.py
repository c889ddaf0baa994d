"""An EvalBench run config (SPEC §10, §12, §13) as the evaluation keeps it: what the
EvalConfig it becomes does not already say (the scorer selection, the CSV folder, which
scenarios). Read by engine.config.evalbench_run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class CliHarness(BaseModel):
    """One of EvalBench's CLI generators as a model config names it (engine.evalbench_clis)."""

    model_config = ConfigDict(frozen=True)

    generator: str
    """`claude_code`, `gemini_cli` or `codex_cli`."""
    cli: str
    """The command or npm package spec (`claude_code_version`, `gemini_cli_version`,
    `codex_cli_version`)."""
    model: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    mcp_servers: dict[str, Any] = Field(default_factory=dict)
    """`setup.mcp_servers`: name → Gemini-style settings (command/args, httpUrl/url, headers)."""
    settings: dict[str, Any] = Field(default_factory=dict)
    """`setup.settings`: Claude Code's settings.json."""
    allowed_tools: list[str] = Field(default_factory=list)
    sandbox_mode: str = "danger-full-access"
    approval_mode: str = "never"
    profile: str | None = None
    json_flag: str = "--json"
    use_vertex: bool = False
    """Claude Code on Vertex AI (`use_vertex`, `vertex_project_id`, `vertex_region`) when no
    ANTHROPIC_API_KEY is set."""
    vertex_project_id: str | None = None
    vertex_region: str | None = None
    fake_home: Path
    """The CLI's HOME: `.venv/<fake home>` of the working directory, as EvalBench's."""


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
    harness: CliHarness | None = None
    """Set when the model config names one of EvalBench's CLI generators."""
