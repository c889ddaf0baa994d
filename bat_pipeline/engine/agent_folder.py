"""The agent folder: where it is, how it is laid out, and where its spans are (SPEC §1).

Pure functions over paths: nothing here starts a process or writes a file. The agent's
`config.yaml` is read by engine.config.agent_yaml.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from bat_pipeline.engine.errors import InputError
from bat_pipeline.engine.spans import span_files_in

CONFIG_FILE = "config.yaml"
AGENT_CARD = "agent.json"
EVAL_FILE = Path("eval") / "eval.yaml"


def is_blueprint_root(folder: Path) -> bool:
    """A uv project whose agents are its subfolders: pyproject.toml, __main__.py, no agent.json."""
    return (
        (folder / "pyproject.toml").is_file()
        and (folder / "__main__.py").is_file()
        and not (folder / AGENT_CARD).exists()
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
            "not an agent folder (no config.yaml or eval/eval.yaml here): run from the agent folder or pass its path",
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
        raise InputError(
            str(candidate), f"{_missing(candidate)}, and no agent '{arg}' in blueprint {blueprint} (agents: {listed})"
        )
    raise InputError(str(candidate), _missing(candidate))


def _missing(path: Path) -> str:
    """What a path that does not exist was taken for: a file when its name says so."""
    if path.suffix.lower() in {".yaml", ".yml", ".json", ".jsonl"}:
        return "no such file (an eval file was expected here)"
    return "no such folder or file (an agent folder or an eval file was expected here)"


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
    if has_config and (agent_dir / AGENT_CARD).is_file() and (agent_dir / "pyproject.toml").is_file():
        return AgentLayout(
            kind="standalone", agent_dir=agent_dir, root=agent_dir, name=agent_dir.name, config_file=config
        )
    if has_config and is_blueprint_root(agent_dir.parent):
        return AgentLayout(
            kind="blueprint", agent_dir=agent_dir, root=agent_dir.parent, name=agent_dir.name, config_file=config
        )
    return AgentLayout(
        kind="custom",
        agent_dir=agent_dir,
        root=agent_dir,
        name=agent_dir.name,
        config_file=config if has_config else None,
    )


def spans_files(agent_dir: Path, entries: Iterable[str | Path], *, primary: Path | None = None) -> list[Path]:
    """The span files to read: `primary` first, then each entry, deduplicated, all existing.

    Entries (`evaluation.extra_spans`, `agent.spans`) are files or folders, relative to
    the agent folder unless absolute; a folder contributes its span files
    (`spans.span_files_in`). Missing entries are skipped: a called agent may not
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
        for file in span_files_in(path) if path.is_dir() else [path]:
            add(file)
    return found
