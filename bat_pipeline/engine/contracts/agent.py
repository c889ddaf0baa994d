"""How to reach the agent under test (SPEC §1): eval.yaml's `agent:` block, also what an
AgentV `provider: a2a` target resolves to."""

from __future__ import annotations

from pydantic import Field, ValidationInfo, field_validator

from bat_pipeline.engine.contracts.strict import Strict

OTLP_SPANS = "otlp"
"""The `agent.spans` entry that selects the OTLP receiver (resources/otlp_receiver.py)."""


class AgentTarget(Strict):
    """How to reach the agent. Empty: a BAT agent started with `uv run .` (SPEC §1)."""

    command: list[str] | None = None
    """Start command for any other agent. `{python}` is this interpreter, `{port}` the
    port chosen, `{config}` the temporary config path, `{spans}` the span file."""
    url: str | None = None
    """An agent already running there: no process is started."""
    spans: list[str] = Field(default_factory=list)
    """Span files the agent writes when they are not set through its config.yaml; the
    entry `otlp` starts an OTLP receiver for it instead (a file named so: `./otlp`)."""
    cwd: str | None = None
    """Working directory of `command`, relative to the agent folder."""
    env: dict[str, str] = Field(default_factory=dict)
    """Extra variables for the agent process, for every model."""
    inherit_env: bool = True
    """Pass the whole shell environment to the agent, as `bat eval` does (the judge's key
    excepted). False isolates it: only what a process needs (PATH, HOME, locale, uv/Python
    settings), the `.env`, the model's provider key and the variables listed here and
    under the model — never the judge's key."""
    ready_path: str = "/.well-known/agent-card.json"
    """Path polled until it answers 200: the agent is ready."""

    @field_validator("spans", mode="before")
    @classmethod
    def _one_entry(cls, value: object) -> object:
        """`spans: otlp` (or one file) is a list of one; null is none."""
        if value is None:
            return []
        return [value] if isinstance(value, str) else value

    @property
    def otlp(self) -> bool:
        """`spans: otlp`: the agent exports OTLP to a receiver the partition runs."""
        return OTLP_SPANS in self.spans

    @property
    def span_files(self) -> list[str]:
        """The entries of `spans` that are files or folders."""
        return [entry for entry in self.spans if entry != OTLP_SPANS]

    @field_validator("spans")
    @classmethod
    def _otlp_needs_a_started_agent(cls, value: list[str], info: ValidationInfo) -> list[str]:
        if OTLP_SPANS in value and info.data.get("url"):
            raise ValueError(
                "`otlp` starts a receiver for an agent this pipeline starts, not one at `url`: "
                "run with `bat-pipeline run --otlp-port PORT` and point its exporter there, or list the files "
                "its collector writes"
            )
        return value
