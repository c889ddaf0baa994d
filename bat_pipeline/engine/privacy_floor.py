"""The telemetry privacy floor a BAT agent sets in its own code (SPEC §1).

bat-adk's `AgentApplication(..., telemetry_privacy_floor=...)` raises the privacy of the
spans above what config.yaml says; a floor above `none` redacts what the evaluation reads.
`bat eval` finds the floor by parsing the agent's Python files (not by searching text, so
comments and strings do not count) and refuses such an agent; so do we, the same way.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from bat_pipeline.engine.config.agent_yaml import PRIVACY_LEVELS
from bat_pipeline.engine.errors import InputError

KEYWORD = "telemetry_privacy_floor"
_SKIPPED_FOLDERS = frozenset({"tests", "__pycache__", "node_modules", "venv", "site-packages"})
"""Never the agent's own code: its tests, caches and installed packages (folders starting
with `.`, such as .venv, are skipped as well)."""


@dataclass(frozen=True)
class PrivacyFloor:
    """One `telemetry_privacy_floor=` keyword found in the agent's code."""

    location: str
    """`<file relative to the project root>:<line>`."""
    level: str | None
    """The level it sets; None when it is computed at run time (cannot be read)."""


def _level(value: ast.expr) -> str | None:
    """As bat-adk reads the value: a level name or a `TelemetryPrivacy.<LEVEL>` member; a
    literal it does not know means `none`; anything else is not known before it runs."""
    if isinstance(value, ast.Attribute):
        name = value.attr.lower()
        return name if name in PRIVACY_LEVELS else None
    if isinstance(value, ast.Constant):
        name = str(value.value).strip().lower()
        return name if name in PRIVACY_LEVELS else "none"
    return None


def privacy_floors(agent_dir: Path, project_root: Path | None = None) -> list[PrivacyFloor]:
    """Every `telemetry_privacy_floor=` keyword in the `*.py` files below `agent_dir`, in
    file then line order. Files that do not parse are passed over (the agent would not
    start either); locations are relative to `project_root` (default: `agent_dir`)."""
    agent_dir = Path(agent_dir)
    root = Path(project_root or agent_dir)
    floors: list[PrivacyFloor] = []
    for path in sorted(agent_dir.rglob("*.py")):
        folders = path.relative_to(agent_dir).parts[:-1]
        if any(part.startswith(".") or part in _SKIPPED_FOLDERS for part in folders):
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        except (SyntaxError, UnicodeDecodeError, ValueError, OSError):
            continue
        try:
            shown = path.relative_to(root).as_posix()
        except ValueError:
            shown = str(path)
        for node in ast.walk(tree):
            for keyword in getattr(node, "keywords", None) or ():
                if keyword.arg == KEYWORD:
                    floors.append(PrivacyFloor(f"{shown}:{keyword.value.lineno}", _level(keyword.value)))
    return floors


def check_privacy_floors(agent_dir: Path, project_root: Path | None = None) -> list[str]:
    """Refuse (InputError naming the file, the line and the keyword) an agent whose code
    sets a privacy floor above `none`; return a warning for each floor that cannot be
    read before the agent runs."""
    warnings = []
    root = Path(project_root or agent_dir)
    for floor in privacy_floors(agent_dir, root):
        if floor.level is None:
            warnings.append(
                f"{root / floor.location}: the telemetry privacy floor is computed when the "
                "agent runs and cannot be read beforehand; if it is above none, the spans "
                "are redacted and span checks will fail"
            )
        elif floor.level != "none":
            file, _, line = floor.location.rpartition(":")
            raise InputError(
                str(root / file),
                f'the agent\'s code sets {KEYWORD}="{floor.level}", which redacts the spans the '
                f"evaluation reads (model output, tool arguments and results); set "
                f'{KEYWORD}="none" there while you evaluate',
                entry=f"line {line}",
                field=KEYWORD,
            )
    return warnings
