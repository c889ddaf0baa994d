"""How to reach the agent under test (SPEC §1): eval.yaml's `agent:` block, also what an
AgentV `provider: a2a` target resolves to."""

from __future__ import annotations

from pydantic import Field

from bat_pipeline.engine.contracts.strict import Strict


class AgentTarget(Strict):
    """How to reach the agent. Empty: a BAT agent started with `uv run .` (SPEC §1)."""

    command: list[str] | None = None
    """Start command for any other agent. `{python}` is this interpreter, `{port}` the
    port chosen, `{config}` the temporary config path, `{spans}` the span file."""
    url: str | None = None
    """An agent already running there: no process is started."""
    spans: list[str] = Field(default_factory=list)
    """Span files the agent writes when they are not set through its config.yaml."""
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
