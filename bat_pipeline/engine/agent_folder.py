"""The agent folder: where it is, how it is laid out, and its `config.yaml` (SPEC §1).

Pure functions over paths and dicts: nothing here starts a process or writes a file.
The user's `config.yaml` is only ever read; `evaluation_config_copy` returns the dict the
caller writes to a temporary file and hands to the agent through `CONFIG_PATH`.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import yaml
from pydantic import BaseModel, ConfigDict

from bat_pipeline.engine.errors import InputError

CONFIG_FILE = "config.yaml"
EVAL_FILE = Path("eval") / "eval.yaml"
PRIVACY_LEVELS = ("none", "content", "names", "full")
DEFAULT_ENDPOINT_URL = "http://localhost"

# The agent (bat-adk) expands `${VAR}` in config.yaml values; only that form.
_CONFIG_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def is_blueprint_root(folder: Path) -> bool:
    """A uv project whose agents are its subfolders: pyproject.toml, __main__.py, no agent.json."""
    return (
        (folder / "pyproject.toml").is_file()
        and (folder / "__main__.py").is_file()
        and not (folder / "agent.json").exists()
    )


def is_agent_folder(folder: Path) -> bool:
    """Has a `config.yaml` or an `eval/eval.yaml`."""
    return (folder / CONFIG_FILE).is_file() or (folder / EVAL_FILE).is_file()


def blueprint_agents(root: Path) -> list[str]:
    """Names of the agent folders right below a blueprint root, sorted."""
    return sorted(
        child.name
        for child in root.iterdir()
        if child.is_dir() and not child.name.startswith((".", "_")) and is_agent_folder(child)
    )


def _enclosing_blueprint(cwd: Path) -> Path | None:
    if is_blueprint_root(cwd):
        return cwd
    if is_blueprint_root(cwd.parent) and is_agent_folder(cwd):
        return cwd.parent
    return None


def resolve_agent_dir(arg: str | None, cwd: Path) -> Path:
    """The agent folder a command means, like `bat eval [AGENT]`; absolute.

    No argument: `cwd` when it is an agent folder, else the only agent of the blueprint
    whose root is `cwd`. An argument: an existing folder (absolute or relative to `cwd`),
    else an agent name of the blueprint `cwd` is the root of or an agent folder of.
    Refuses (InputError) an unknown name, a blueprint with several agents and no name
    (listing them), and a folder that is neither.
    """
    cwd = Path(cwd).resolve()
    blueprint = _enclosing_blueprint(cwd)
    if arg is None or arg == "":
        if is_agent_folder(cwd):
            return cwd
        if blueprint is not None:
            agents = blueprint_agents(blueprint)
            if len(agents) == 1:
                return blueprint / agents[0]
            if agents:
                raise InputError(
                    str(cwd),
                    f"this blueprint has several agents ({', '.join(agents)}): name one, "
                    f"e.g. `bat-pipeline eval {agents[0]}`",
                )
            raise InputError(str(cwd), "this blueprint has no agent folder (a subfolder with config.yaml)")
        raise InputError(
            str(cwd),
            "not an agent folder (no config.yaml or eval/eval.yaml here): "
            "run from the agent folder or pass its path",
        )
    candidate = Path(arg).expanduser()
    if not candidate.is_absolute():
        candidate = cwd / candidate
    if candidate.is_dir():
        return candidate.resolve()
    if candidate.exists():
        raise InputError(str(candidate), "expected an agent folder, got a file")
    if blueprint is not None:
        agents = blueprint_agents(blueprint)
        if arg in agents:
            return blueprint / arg
        listed = ", ".join(agents) if agents else "none"
        raise InputError(str(candidate), f"no such folder, and no agent '{arg}' in blueprint {blueprint} (agents: {listed})")
    raise InputError(str(candidate), "no such folder")


class AgentLayout(BaseModel):
    """How an agent folder is started (SPEC §1)."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["standalone", "blueprint", "custom"]
    """standalone: `uv run .` in the folder; blueprint: `uv run . <name>` from the root;
    custom: whatever `agent.command` / `agent.url` of eval.yaml say."""
    agent_dir: Path
    """The agent folder."""
    root: Path
    """Working directory of the start command (the blueprint root for a blueprint agent)."""
    name: str
    """The folder name; for a blueprint agent, the argument after `uv run .`."""
    config_file: Path | None
    """The agent's config.yaml, None when a custom agent has none."""

    def start_command(self) -> list[str] | None:
        """The BAT start command (run in `root`); None for a custom agent."""
        if self.kind == "standalone":
            return ["uv", "run", "."]
        if self.kind == "blueprint":
            return ["uv", "run", ".", self.name]
        return None


def detect_layout(agent_dir: Path) -> AgentLayout:
    """Standalone when the folder holds config.yaml, agent.json and pyproject.toml;
    blueprint when it holds config.yaml and its parent is a blueprint root; else custom."""
    agent_dir = Path(agent_dir).resolve()
    config = agent_dir / CONFIG_FILE
    has_config = config.is_file()
    if has_config and (agent_dir / "agent.json").is_file() and (agent_dir / "pyproject.toml").is_file():
        return AgentLayout(kind="standalone", agent_dir=agent_dir, root=agent_dir, name=agent_dir.name, config_file=config)
    if has_config and is_blueprint_root(agent_dir.parent):
        return AgentLayout(
            kind="blueprint", agent_dir=agent_dir, root=agent_dir.parent, name=agent_dir.name, config_file=config
        )
    return AgentLayout(
        kind="custom", agent_dir=agent_dir, root=agent_dir, name=agent_dir.name,
        config_file=config if has_config else None,
    )


def _expand_config_values(value: Any, environ: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        return _CONFIG_VAR.sub(lambda m: environ.get(m.group(1), m.group(0)), value)
    if isinstance(value, dict):
        return {key: _expand_config_values(item, environ) for key, item in value.items()}
    if isinstance(value, list):
        return [_expand_config_values(item, environ) for item in value]
    return value


def read_agent_config(config_file: Path, environ: Mapping[str, str] | None = None) -> dict:
    """The agent's config.yaml as a dict; `{}` for an empty file.

    With `environ`, `${VAR}` in string values is replaced from it (an unset variable is
    left as written, as the agent would see no value either). Without it the values are
    raw: use that for `evaluation_config_copy`, so secrets are never written out expanded.
    Refuses a missing file, invalid YAML (with its line) and a top level that is not a
    mapping.
    """
    path = Path(config_file)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(str(path), "file not found") from None
    except OSError as exc:
        raise InputError(str(path), f"cannot read: {exc.strerror or exc}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise InputError(str(path), f"invalid YAML{where}: {problem}") from None
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
    original: Mapping[str, Any], *, port: int, spans_file: Path, host: str | None = None
) -> dict:
    """The agent's config for one evaluation run; `original` is not modified.

    Sets `endpoint.port`; `endpoint.url` keeps its scheme and gets `host` when given (when
    absent it becomes `http://<host or localhost>`). `telemetry.output` becomes the one
    local file `spans_file` and `telemetry.privacy` becomes `none`. Every other key,
    including the rest of `endpoint` and `telemetry`, is left as it was.
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
    telemetry["output"] = [{"type": "local", "file_path": str(spans_file)}]
    telemetry["privacy"] = "none"
    result["telemetry"] = telemetry
    return result


SPAN_SUFFIXES = (".jsonl",)  # SPEC §5: span files are JSON lines


def spans_files(agent_dir: Path, entries: Iterable[str], *, primary: Path | None = None) -> list[Path]:
    """The span files to read: `primary` first, then each entry, deduplicated, all existing.

    Entries (`evaluation.extra_spans`, `agent.spans`) are files or folders, relative to
    the agent folder unless absolute; a folder contributes its `*.jsonl`
    files (not recursive, sorted). Missing entries are skipped: a called agent may not
    have written its file yet, and a run where it never did simply has fewer spans.
    """
    agent_dir = Path(agent_dir)
    found: list[Path] = []
    seen: set[Path] = set()

    def add(path: Path) -> None:
        key = path.resolve()
        if key not in seen and path.is_file():
            seen.add(key)
            found.append(path)

    if primary is not None:
        add(Path(primary))
    for entry in entries:
        path = Path(entry).expanduser()
        if not path.is_absolute():
            path = agent_dir / path
        if path.is_dir():
            for child in sorted(path.iterdir()):
                if child.suffix in SPAN_SUFFIXES:
                    add(child)
        else:
            add(path)
    return found
