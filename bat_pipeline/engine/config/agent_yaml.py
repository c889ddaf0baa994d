"""The agent's own `config.yaml` (SPEC §1): read, checked for what the evaluation needs,
and the copy an evaluation run hands the agent.

Pure functions over paths and dicts: the user's `config.yaml` is only ever read;
`evaluation_config_copy` returns the dict the caller writes to a temporary file and hands
to the agent through `CONFIG_PATH`.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from bat_pipeline.engine.config.files import read_yaml
from bat_pipeline.engine.errors import InputError

PRIVACY_LEVELS = ("none", "content", "names", "full")
DEFAULT_ENDPOINT_URL = "http://localhost"

# The agent (bat-adk) expands `${VAR}` in config.yaml values; only that form.
_CONFIG_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _expand_config_values(value: Any, environ: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        return _CONFIG_VAR.sub(lambda m: environ.get(m.group(1), m.group(0)), value)
    if isinstance(value, dict):
        return {key: _expand_config_values(item, environ) for key, item in value.items()}
    if isinstance(value, list):
        return [_expand_config_values(item, environ) for item in value]
    return value


def read_agent_config(config_file: Path, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The agent's config.yaml as a dict; `{}` for an empty file.

    With `environ`, `${VAR}` in string values is replaced from it (an unset variable is
    left as written, as the agent would see no value either). Without it the values are
    raw: use that for `evaluation_config_copy`, so secrets are never written out expanded.
    Refuses a missing file, invalid YAML (with its line) and a top level that is not a
    mapping.
    """
    path = Path(config_file)
    data = read_yaml(path, unique_keys=False)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InputError(str(path), f"the top level must be a mapping, got {type(data).__name__}")
    return _expand_config_values(data, environ) if environ is not None else data


def check_telemetry_privacy(config: Mapping[str, Any], config_file: Path | str) -> None:
    """Refuse `telemetry.privacy` above `none`: redacted spans hide what the evaluation reads.

    A missing `telemetry`, `privacy` or a null value counts as `none`.
    """
    telemetry = config.get("telemetry") or {}
    if not isinstance(telemetry, Mapping):
        return
    privacy = telemetry.get("privacy")
    if privacy is None or str(privacy).strip().lower() == "none":
        return
    fix = f"set `telemetry.privacy: none` in {config_file} (or remove the line) to evaluate this agent"
    if str(privacy).strip().lower() in PRIVACY_LEVELS:
        message = (
            f"privacy is '{privacy}', which redacts the spans; the evaluation needs spans with "
            f"their content (model output, tool arguments and results): {fix}"
        )
    else:
        message = f"unknown privacy level '{privacy}' (valid: {', '.join(PRIVACY_LEVELS)}); {fix}"
    raise InputError(str(config_file), message, entry="telemetry", field="privacy")


def _with_host(url: str, host: str) -> str:
    parts = urlsplit(url if "://" in url else f"http://{url}")
    netloc = f"{host}:{parts.port}" if parts.port is not None else host
    return urlunsplit((parts.scheme or "http", netloc, parts.path, parts.query, parts.fragment))


def evaluation_config_copy(
    original: Mapping[str, Any],
    *,
    port: int,
    spans_file: Path,
    host: str | None = None,
    otlp_endpoint: str | None = None,
) -> dict[str, Any]:
    """The agent's config for one evaluation run; `original` is not modified.

    Sets `endpoint.port`; `endpoint.url` keeps its scheme and gets `host` when given (when
    absent it becomes `http://<host or localhost>`). `telemetry.output` becomes the one
    local file `spans_file` — or, with `otlp_endpoint` (`agent.spans: otlp`), the one
    `remote` output exporting OTLP to that endpoint (the partition's receiver, which writes
    the same file) — and `telemetry.privacy` becomes `none`. Every other key, including the
    rest of `endpoint` and `telemetry`, is left as it was.
    """
    result = copy.deepcopy(dict(original))
    endpoint = result.get("endpoint")
    endpoint = dict(endpoint) if isinstance(endpoint, Mapping) else {}
    url = endpoint.get("url")
    if not isinstance(url, str) or not url:
        url = DEFAULT_ENDPOINT_URL
        if host is None:
            endpoint["url"] = url
    if host is not None:
        endpoint["url"] = _with_host(url, host)
    endpoint["port"] = int(port)
    result["endpoint"] = endpoint
    telemetry = result.get("telemetry")
    telemetry = dict(telemetry) if isinstance(telemetry, Mapping) else {}
    telemetry["output"] = (
        [{"type": "remote", "endpoint": otlp_endpoint}]
        if otlp_endpoint
        else [{"type": "local", "file_path": str(spans_file)}]
    )
    telemetry["privacy"] = "none"
    result["telemetry"] = telemetry
    return result
