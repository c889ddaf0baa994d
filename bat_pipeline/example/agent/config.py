"""The agent's settings: `config.yaml` (at `CONFIG_PATH`, `${VAR}` expanded) plus the model
environment (`MODEL_PROVIDER`, `MODEL`, `BASE_URL`)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import yaml

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def expand(value: Any) -> Any:
    """Replace `${VAR}` (or `${VAR:-default}`) in every string, recursively; unset → ''."""
    if isinstance(value, str):
        return _VAR.sub(lambda m: os.environ.get(m.group(1), m.group(2) or ""), value)
    if isinstance(value, list):
        return [expand(v) for v in value]
    if isinstance(value, dict):
        return {k: expand(v) for k, v in value.items()}
    return value


@dataclass
class AgentConfig:
    """What the agent reads from its config file and environment."""

    folder: Path
    """The agent folder: the working directory (as for a BAT agent started with `uv run .`);
    relative paths resolve against it, whichever CONFIG_PATH was read."""
    host: str = "127.0.0.1"
    port: int = 9900
    outputs: list[dict[str, Any]] = field(default_factory=list)
    """`telemetry.output` entries: `{type: local, file_path}`, `{type: remote, endpoint}`, `{type: console}`."""
    privacy: str = "none"
    forecaster_spans: Path | None = None
    """`sub_agent.telemetry_file`: where the Forecaster child writes its spans."""
    provider: str = "openai"
    model: str = "competent"
    base_url: str | None = None
    max_iterations: int = 6

    def path(self, value: str | os.PathLike[str]) -> Path:
        p = Path(value)
        return p if p.is_absolute() else self.folder / p


def _host(url: str) -> str:
    host = urlparse(url if "://" in url else f"http://{url}").hostname or "localhost"
    # Bind the loopback address when the config says localhost: no IPv6/IPv4 ambiguity.
    return "127.0.0.1" if host == "localhost" else host


def load_config(path: str | os.PathLike[str] | None = None) -> AgentConfig:
    """Read `path`, else `$CONFIG_PATH`, else `./config.yaml`."""
    config_path = Path(path or os.environ.get("CONFIG_PATH") or "config.yaml").resolve()
    raw = expand(yaml.safe_load(config_path.read_text()) or {})
    endpoint = raw.get("endpoint") or {}
    telemetry = raw.get("telemetry") or {}
    sub_agent = raw.get("sub_agent") or {}
    config = AgentConfig(
        folder=Path.cwd(),
        host=_host(str(endpoint.get("url") or "http://localhost")),
        port=int(endpoint.get("port") or 9900),
        outputs=list(telemetry.get("output") or []),
        privacy=str(telemetry.get("privacy") or "none"),
        provider=os.environ.get("MODEL_PROVIDER") or str(raw.get("model_provider") or "openai"),
        model=os.environ.get("MODEL") or str(raw.get("model") or "competent"),
        base_url=os.environ.get("BASE_URL") or raw.get("base_url") or None,
        max_iterations=int(raw.get("max_iterations") or 6),
    )
    if sub_agent.get("telemetry_file"):
        config.forecaster_spans = config.path(sub_agent["telemetry_file"])
    return config
