"""The input files read, refused (InputError) with what went wrong and where: text, YAML,
JSON.

Every format's YAML goes through `read_yaml` and its JSON through `read_json` /
`parse_json`, which bound what a hostile file can cost and refuse what later steps could
not handle: text that is not UTF-8, nesting deeper than MAX_DEPTH, YAML aliases that
would expand to more than MAX_ALIAS_EXPANSION (an alias bomb: a few hundred bytes that
expand to gigabytes wherever the value is written out) or refer to the node they are in,
and strings that cannot be written as UTF-8 (a lone surrogate such as "\\ud800", valid
JSON). PyYAML's SafeLoader (no objects built) does the parsing; the limits are checked as
it composes the document, before anything is expanded.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import Any

import yaml
from yaml.events import AliasEvent, CollectionStartEvent

from bat_pipeline.engine.errors import InputError

MAX_DEPTH = 100
"""Nesting levels a YAML or JSON document may have (no format needs a tenth of it)."""
MAX_ALIAS_EXPANSION = 1_000_000
"""What YAML aliases may add to a document, in nodes plus characters of their scalars."""


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader that refuses nesting deeper than MAX_DEPTH, aliases that add more than
    MAX_ALIAS_EXPANSION once expanded, and an alias inside the node it names."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._expanded = 0
        self._open_anchors: set[str] = set()
        self._sizes: dict[int, int] = {}

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        event: Any = self.peek_event()  # type: ignore[no-untyped-call]
        mark: Any = event.start_mark
        if isinstance(event, AliasEvent):
            if event.anchor in self._open_anchors:
                raise yaml.composer.ComposerError(
                    None, None, f"alias '*{event.anchor}' refers to a node that contains it", mark
                )
            target = self.anchors.get(event.anchor)
            if target is not None:
                self._expanded += self._size(target)
                if self._expanded > MAX_ALIAS_EXPANSION:
                    raise yaml.composer.ComposerError(
                        None,
                        None,
                        f"aliases expand to more than {MAX_ALIAS_EXPANSION:,} nodes and characters (an alias bomb?)",
                        mark,
                    )
            return super().compose_node(parent, index)
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise yaml.composer.ComposerError(None, None, f"nesting deeper than {MAX_DEPTH} levels", mark)
        anchor = event.anchor if isinstance(event, CollectionStartEvent) else None
        if anchor is not None:
            self._open_anchors.add(anchor)
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1
            if anchor is not None:
                self._open_anchors.discard(anchor)

    def _size(self, node: yaml.Node) -> int:
        """The node's size once its aliases are expanded: 1 per node, plus a scalar's length."""
        known = self._sizes.get(id(node))
        if known is not None:
            return known
        if isinstance(node, yaml.ScalarNode):
            size = 1 + len(node.value)
        elif isinstance(node, yaml.SequenceNode):
            size = 1 + sum(self._size(child) for child in node.value)
        else:
            size = 1 + sum(self._size(k) + self._size(v) for k, v in node.value)
        self._sizes[id(node)] = size
        return size


class _UniqueKeyLoader(_BoundedLoader):
    """The bounded loader, refusing a key written twice in one mapping (PyYAML keeps the last)."""


def _construct_unique_mapping(
    loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False
) -> dict[Hashable, Any]:
    seen: set[str | int | float | bool] = set()
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue  # `<<: *anchor`: SafeLoader merges it (its keys may be overridden)
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
    """The file's text (UTF-8). Refuses a missing file (saying `missing`), an unreadable
    one (saying why) and bytes that are not UTF-8 (saying where)."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(str(path), missing) from None
    except UnicodeDecodeError as exc:
        raise InputError(
            str(path), f"not UTF-8 text: byte 0x{exc.object[exc.start]:02x} at offset {exc.start} ({exc.reason})"
        ) from None
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


_CORE_RESOLVERS: list[tuple[str, str, str]] = [
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", "~nN"),
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    (
        "tag:yaml.org,2002:float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        "-+.0123456789",
    ),
]
"""YAML 1.2's core schema, as the `yaml` npm package (AgentV's parser) types plain scalars:
only these are not text. So `yes`/`no`/`on`/`off`, dates and times, `1_000`, `0b1`,
`1:20` stay strings; `0o17` and `0x1F` are numbers, `0777` is 777 and `1e3` is 1000."""


def _core_int(loader: yaml.SafeLoader, node: yaml.Node) -> int:
    text = str(loader.construct_scalar(node))  # type: ignore[arg-type]
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text, 10)


def _core_float(loader: yaml.SafeLoader, node: yaml.Node) -> float | int:
    """A JavaScript number: a whole one (`1.0`, `1e3`) is the integer it is."""
    text = str(loader.construct_scalar(node)).lower()  # type: ignore[arg-type]
    value = float(text.replace(".inf", "inf").replace(".nan", "nan"))
    return int(value) if value.is_integer() else value


def _core_schema(base: type[yaml.SafeLoader]) -> type[yaml.SafeLoader]:
    """`base` typing plain scalars by _CORE_RESOLVERS instead of YAML 1.1's rules (PyYAML's)."""

    class CoreSchemaLoader(base):  # type: ignore[valid-type,misc]
        pass

    typed = {tag for tag, _, _ in _CORE_RESOLVERS} | {"tag:yaml.org,2002:timestamp"}
    CoreSchemaLoader.yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers if tag not in typed]
        for first, resolvers in base.yaml_implicit_resolvers.items()
    }
    for tag, pattern, first in _CORE_RESOLVERS:
        CoreSchemaLoader.add_implicit_resolver(tag, re.compile(pattern), list(first))
    # The empty scalar is null too: PyYAML keys it under the empty string.
    CoreSchemaLoader.add_implicit_resolver("tag:yaml.org,2002:null", re.compile(r"^$"), [""])
    CoreSchemaLoader.add_constructor("tag:yaml.org,2002:int", _core_int)
    CoreSchemaLoader.add_constructor("tag:yaml.org,2002:float", _core_float)
    return CoreSchemaLoader


def read_yaml(
    path: Path,
    *,
    unique_keys: bool = True,
    env_tags: bool = False,
    environ: Mapping[str, str] | None = None,
    core_schema: bool = False,
) -> Any:
    """The YAML document of a file (None when empty). Refuses (InputError) a missing or
    unreadable file, invalid YAML (with its line and column), the limits of the module's
    docstring and, with `unique_keys`, a key written twice in one mapping. `env_tags`: values
    tagged `!ENV` (EvalBench's files, read with pyaml-env there) are expanded from `environ`
    (default: the process environment). `core_schema`: plain scalars typed as YAML 1.2's
    core schema types them (_CORE_RESOLVERS; AgentV's files, read with the `yaml` npm
    package there), not as YAML 1.1 (PyYAML)."""
    text = read_text(path)
    loader: type[yaml.SafeLoader] = _UniqueKeyLoader if unique_keys else _BoundedLoader
    if core_schema:
        loader = _core_schema(loader)
    if env_tags:
        loader = _env_loader(loader, os.environ if environ is None else environ)
    try:
        data = yaml.load(text, Loader=loader)  # a SafeLoader subclass: builds no objects
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise InputError(str(path), f"invalid YAML{where}: {problem}") from None
    except RecursionError:
        raise InputError(str(path), f"invalid YAML: nesting deeper than {MAX_DEPTH} levels") from None
    check_tree(data, str(path))
    return data


def parse_json(text: str, file: str, *, line: int | None = None, check: bool = True) -> Any:
    """`text` as JSON, refused (InputError naming `file`, and `line` of a JSONL file) when it
    is not JSON (with line and column) or breaks the module docstring's limits."""
    at = f"line {line}: " if line is not None else ""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"line {line}, column {exc.colno}" if line is not None else f"line {exc.lineno}, column {exc.colno}"
        raise InputError(file, f"invalid JSON at {where}: {exc.msg}") from None
    except RecursionError:
        raise InputError(file, f"{at}invalid JSON: nesting deeper than {MAX_DEPTH} levels") from None
    if check:
        check_tree(data, file, entry=f"line {line}" if line is not None else None)
    return data


def read_json(path: Path, *, missing: str = "file not found") -> Any:
    """The JSON document of a file, refused as `read_text` and `parse_json` refuse."""
    return parse_json(read_text(path, missing=missing), str(path))


def _label(prefix: str, key: object) -> str:
    return f"{prefix}[{key}]" if isinstance(key, int) else f"{prefix}.{key}" if prefix else str(key)


def check_tree(data: Any, file: str, *, entry: str | None = None) -> None:
    """Refuse (InputError naming the file, `entry` and the field) a document nested deeper
    than MAX_DEPTH or holding a string, key or value, that cannot be written as UTF-8."""
    stack: list[tuple[Any, str, int]] = [(data, "", 0)]
    seen: set[int] = set()
    while stack:
        value, where, depth = stack.pop()
        if isinstance(value, str):
            _check_text(value, file, where, entry)
            continue
        if not isinstance(value, (dict, list)) or id(value) in seen:
            continue
        seen.add(id(value))
        if depth >= MAX_DEPTH:
            shown = where if len(where) <= 80 else where[:80] + "..."
            raise InputError(file, f"nesting deeper than {MAX_DEPTH} levels", entry=entry, field=shown or None)
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, child in items:
            label = _label(where, key)
            if isinstance(key, str):
                _check_text(key, file, label, entry)
            stack.append((child, label, depth + 1))


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
"""In a Python string every surrogate is a lone one (JSON's escaped pairs decode to one
character)."""


def writable_text(text: str) -> str:
    """`text` as it can be written as UTF-8: each lone surrogate (valid JSON, `"\\ud800"`,
    in what an agent, a model or a judge answers) becomes U+FFFD. Files the user gives are
    refused instead (`check_tree`); this is for what comes back at run time."""
    return text if text.isascii() else _LONE_SURROGATE.sub("\ufffd", text)


def _check_text(text: str, file: str, where: str, entry: str | None) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = text[exc.start]
        raise InputError(
            file,
            f"text that cannot be written as UTF-8: a lone surrogate \\u{ord(bad):04x} at character {exc.start}",
            entry=entry,
            field=where or None,
        ) from None
