"""Reading and fingerprinting files: what a test compares before and after a run."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

USER_FILES = ("config.yaml", "eval/eval.yaml", "eval/input/tasks.json")
"""The files of an agent folder that are the user's: a run never writes them."""


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def user_file_hashes(agent_dir: Path) -> dict[str, str]:
    return {name: sha256(Path(agent_dir) / name) for name in USER_FILES}


def tree_hashes(folder: Path) -> dict[str, str]:
    """sha256 of every file under `folder`, by relative path."""
    folder = Path(folder)
    return {str(p.relative_to(folder)): sha256(p) for p in sorted(folder.rglob("*")) if p.is_file()}


def files_under(folder: Path) -> set[str]:
    """Every path under `folder` (files and folders), relative to it."""
    return {str(p.relative_to(folder)) for p in Path(folder).rglob("*")}


def read_json(path: Path) -> Any:
    return json.loads(Path(path).read_text(encoding="utf-8"))
