"""A 4.x test's `vars:` filled into its fields, as AgentV 4.42.4 does before reading the
test (yaml-parser.ts `interpolateRawEvalCase`, interpolation.ts `interpolateTemplateVars`).

`{{ name }}` or `{{ a.b.c }}` (letters, digits, `_`, dots for nesting) in `criteria`,
`expected_outcome`, `input`, `input_files`, `expected_output` and each turn's `input` and
`expected_output`, at any depth of those values: a string that is one placeholder and
nothing else becomes the variable's value as it is (a mapping stays a mapping); inside
other text a text value goes in as written and any other value as compact JSON. A name
`vars` does not hold is left as written. Nothing else of the test is touched (the file's
own `input` neither), and a test without a `vars` mapping is returned as it is.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from typing import Any

FIELDS = ("criteria", "expected_outcome", "input", "input_files", "expected_output")
TURN_FIELDS = ("input", "expected_output")
_ONE = re.compile(r"^\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}$")
_ANY = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}")
_MISSING = object()


def filled(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The test with its `vars` filled in (module docstring)."""
    out = dict(raw)
    variables = raw.get("vars")
    if not isinstance(variables, Mapping):
        return out
    for field in FIELDS:
        if field in out:
            out[field] = fill(out[field], variables)
    turns = out.get("turns")
    if isinstance(turns, list):
        out["turns"] = [
            {**turn, **{f: fill(turn[f], variables) for f in TURN_FIELDS if f in turn}}
            if isinstance(turn, Mapping)
            else turn
            for turn in turns
        ]
    return out


def fill(value: Any, variables: Mapping[str, Any]) -> Any:
    """`value` with every placeholder in its strings filled from `variables`."""
    if isinstance(value, str):
        whole = _ONE.match(value)
        if whole:
            found = _lookup(variables, whole.group(1))
            return value if found is _MISSING else copy.deepcopy(found)
        return _ANY.sub(lambda m: _text(_lookup(variables, m.group(1)), m.group(0)), value)
    if isinstance(value, list):
        return [fill(item, variables) for item in value]
    if isinstance(value, Mapping):
        return {key: fill(item, variables) for key, item in value.items()}
    return value


def _lookup(variables: Mapping[str, Any], expression: str) -> Any:
    current: Any = variables
    for segment in expression.split("."):
        if not isinstance(current, Mapping) or segment not in current:
            return _MISSING
        current = current[segment]
    return current


def _text(found: Any, written: str) -> str:
    if found is _MISSING:
        return written
    return found if isinstance(found, str) else json.dumps(found, ensure_ascii=False, separators=(",", ":"))
