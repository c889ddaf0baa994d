"""The input files read, refused (InputError) with what went wrong and where: text, YAML."""

from __future__ import annotations

from collections.abc import Hashable
from pathlib import Path
from typing import Any

import yaml

from bat_pipeline.engine.errors import InputError


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key written twice in one mapping (PyYAML keeps the last)."""


def _construct_unique_mapping(
    loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False
) -> dict[Hashable, Any]:
    seen: set[str | int | float | bool] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if not isinstance(key, (str, int, float, bool)):
            continue
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"key '{key}' appears twice in the same mapping", key_node.start_mark
            )
        seen.add(key)
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping)


def read_text(path: Path, *, missing: str = "file not found") -> str:
    """The file's text (UTF-8). Refuses a missing file (saying `missing`) and an unreadable
    one (saying why)."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(str(path), missing) from None
    except OSError as exc:
        raise InputError(str(path), f"cannot read: {exc.strerror or exc}") from None


def read_yaml(path: Path, *, unique_keys: bool = True) -> Any:
    """The YAML document of a file (None when empty). Refuses (InputError) a missing or
    unreadable file, invalid YAML (with its line and column) and, with `unique_keys`, a key
    written twice in one mapping."""
    text = read_text(path)
    loader = _UniqueKeyLoader if unique_keys else yaml.SafeLoader
    try:
        return yaml.load(text, Loader=loader)  # a SafeLoader or a subclass: builds no objects
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise InputError(str(path), f"invalid YAML{where}: {problem}") from None
