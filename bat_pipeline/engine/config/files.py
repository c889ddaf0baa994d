"""The input files read, refused (InputError) with what went wrong and where: text, YAML."""

from __future__ import annotations

import os
import re
from collections.abc import Hashable, Mapping
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


_ENV_VAR = re.compile(r"\$\{([^}{:]+)(?::([^}]+))?\}")
"""`${VAR}` or `${VAR:default}` in a value tagged `!ENV` (pyaml-env's form, its `:` separator)."""


def _env_loader(base: type[yaml.SafeLoader], environ: Mapping[str, str]) -> type[yaml.SafeLoader]:
    """`base` taking EvalBench's `!ENV` tag as pyaml-env does: the tagged text with every
    `${VAR}` replaced by the variable, `${VAR:default}` by the default when it is unset. An
    unset variable without a default is refused (pyaml-env writes `N/A` in its place)."""

    def construct(loader: yaml.SafeLoader, node: yaml.Node) -> str:
        value = loader.construct_scalar(node)  # type: ignore[arg-type]

        def replace(match: re.Match[str]) -> str:
            name, default = match.group(1), match.group(2)
            if name in environ:
                return environ[name]
            if default is not None:
                return default
            raise yaml.constructor.ConstructorError(
                None, None, f"!ENV: environment variable '{name}' is not set", node.start_mark
            )

        return _ENV_VAR.sub(replace, str(value))

    class EnvTagLoader(base):  # type: ignore[valid-type,misc]
        pass

    EnvTagLoader.add_constructor("!ENV", construct)
    return EnvTagLoader


def read_yaml(
    path: Path, *, unique_keys: bool = True, env_tags: bool = False, environ: Mapping[str, str] | None = None
) -> Any:
    """The YAML document of a file (None when empty). Refuses (InputError) a missing or
    unreadable file, invalid YAML (with its line and column) and, with `unique_keys`, a key
    written twice in one mapping. `env_tags`: values tagged `!ENV` (EvalBench's files, read
    with pyaml-env there) are expanded from `environ` (default: the process environment)."""
    text = read_text(path)
    loader: type[yaml.SafeLoader] = _UniqueKeyLoader if unique_keys else yaml.SafeLoader
    if env_tags:
        loader = _env_loader(loader, os.environ if environ is None else environ)
    try:
        return yaml.load(text, Loader=loader)  # a SafeLoader or a subclass: builds no objects
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise InputError(str(path), f"invalid YAML{where}: {problem}") from None
