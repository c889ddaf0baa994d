"""Refusals and warnings in the user's terms: a value described as the file holds it (`a
string ('x')`, `an array`), a pydantic error as what was expected, a location as entry and
field, a key bat-cli ignores as a warning (or as a typo, one edit away from a known key)."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any, TypeVar, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from bat_pipeline.engine.config.unknown_keys import pop_unknown_keys, unwrap_optional
from bat_pipeline.engine.errors import InputError

M = TypeVar("M", bound=BaseModel)

Loc = tuple[int | str, ...]
"""A place in a record as pydantic names it: field names and list indexes, outermost first."""
Locate = Callable[[Loc], tuple[str | None, str | None]]
"""Turns a place in a file's data into the (entry, field) an InputError names."""


def kind(value: Any, *, json_words: bool = False) -> str:
    """A value as the user wrote it: `a string ('x')`, `an integer (3)`; JSON's words
    (array, object) with `json_words`, YAML's (list, mapping) without."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int):
        return f"an integer ({value})"
    if isinstance(value, float):
        return f"a number ({value})"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"a string ('{shown}')"
    if isinstance(value, list):
        return "an array" if json_words else "a list"
    if isinstance(value, dict):
        return "an object" if json_words else "a mapping"
    return type(value).__name__


_EXPECTED = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "a string",
    "list_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
}
_EXPECTED_JSON = {
    **_EXPECTED,
    "list_type": "an array",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
}


def _model_at(root: type[BaseModel], path: Loc) -> type[BaseModel] | None:
    """The pydantic model class found at `path` (a ValidationError loc) below `root`."""
    current: Any = root
    for part in path:
        current = unwrap_optional(current)
        if isinstance(current, type) and issubclass(current, BaseModel) and isinstance(part, str):
            field = current.model_fields.get(part)
            if field is None:
                return None
            current = field.annotation
        elif get_origin(current) is list and isinstance(part, int):
            current = get_args(current)[0]
        elif get_origin(current) is dict:
            current = get_args(current)[1]
        else:
            return None
    current = unwrap_optional(current)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _did_you_mean(name: int | str, allowed: list[str]) -> str:
    text = str(name)
    close = difflib.get_close_matches(text, allowed, n=1, cutoff=0.6)
    if not close and len(text) >= 3:
        close = [option for option in allowed if option.startswith(text) or text.startswith(option)][:1]
    if close:
        return f"did you mean '{close[0]}'?"
    return f"allowed: {', '.join(allowed)}"


def _number(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def dotted(path: Loc) -> str:
    """A location as a field name: `env.KEY`, `tool_calls[0].name`."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif part == "[key]":
            text += " (key)"
        else:
            text += f".{part}" if text else str(part)
    return text


def in_entry(entry: str) -> Locate:
    """Places inside one entry of a file (a task of the dataset): that entry, and the place
    as a dotted field."""
    return lambda loc: (entry, dotted(loc))


def explain(error: ErrorDetails, root: type[BaseModel], *, json_words: bool) -> str:
    """One pydantic error of a record read from `root`, in the user's terms."""
    error_type = error["type"]
    value = error.get("input")
    ctx = error.get("ctx") or {}
    loc = tuple(error["loc"])
    expected_names = _EXPECTED_JSON if json_words else _EXPECTED
    if error_type == "extra_forbidden":
        owner = _model_at(root, loc[:-1])
        allowed = [name for name in owner.model_fields if name not in SET_BY_LOADER] if owner else []
        if not allowed:
            return f"unknown field '{loc[-1]}'"
        return f"unknown field '{loc[-1]}'; {_did_you_mean(loc[-1], allowed)}"
    if error_type == "missing":
        return "required field is missing"
    if error_type in expected_names:
        return f"expected {expected_names[error_type]}, got {kind(value, json_words=json_words)}"
    if error_type == "literal_error":
        return f"expected one of {ctx.get('expected')}, got {kind(value, json_words=json_words)}"
    if error_type == "too_short":
        return "must not be empty"
    if error_type == "greater_than_equal":
        return f"must be at least {_number(ctx.get('ge'))}, got {_number(value)}"
    if error_type == "greater_than":
        return f"must be greater than {_number(ctx.get('gt'))}, got {_number(value)}"
    if error_type == "less_than_equal":
        return f"must be at most {_number(ctx.get('le'))}, got {_number(value)}"
    if error_type == "less_than":
        return f"must be less than {_number(ctx.get('lt'))}, got {_number(value)}"
    message = error.get("msg", "invalid value")
    return message.removeprefix("Value error, ")


def first_error(exc: ValidationError) -> tuple[ErrorDetails, int]:
    """The error to report (unknown fields first: they usually cause the others)."""
    errors = exc.errors()
    errors.sort(key=lambda e: e["type"] != "extra_forbidden")
    return errors[0], len(errors) - 1


def validated(
    model: type[M],
    data: Any,
    file: str,
    *,
    json_words: bool = True,
    strict: bool | None = None,
    entry: str | None = None,
    prefix: Loc = (),
) -> M:
    """`data`, read from `file`, as a `model`; refused with an InputError naming the file,
    the `entry` and the field at fault (below `prefix`), in the user's terms (`explain`'s
    JSON or YAML words)."""
    try:
        return model.model_validate(data, strict=strict)
    except ValidationError as exc:
        error, more = first_error(exc)
        message = explain(error, model, json_words=json_words) + more_problems(more)
        raise InputError(file, message, entry=entry, field=dotted((*prefix, *error["loc"])) or None) from None


def more_problems(count: int) -> str:
    """` (and N more problems)` after the one reported; nothing when there are none."""
    return f" (and {count} more problem{'s' if count > 1 else ''})" if count else ""


SET_BY_LOADER = ("agent_dir", "source", "warnings", "agentv", "evalbench")
"""EvalConfig fields the loader fills in: never written in eval.yaml, never offered as known keys."""


def where(file: str, entry: str | None, field: str | None) -> str:
    """`file, entry, field 'x'`, as InputError names a place."""
    text = file
    if entry is not None:
        text += f", {entry}"
    if field is not None:
        text += f", field '{field}'"
    return text


def drop_unknown_keys(
    data: dict[str, Any], model: type[BaseModel], file: str, locate: Locate, loc: Loc = ()
) -> list[str]:
    """Remove the keys `model` does not know, as bat-cli ignores them, and return one
    warning per key. A key one edit away from a known one is refused as a typo."""
    warnings = []
    for unknown in pop_unknown_keys(data, model, ignore=SET_BY_LOADER, loc=loc):
        entry, field = locate(unknown.loc)
        if unknown.near is not None:
            raise InputError(
                file, f"unknown field '{unknown.loc[-1]}'; did you mean '{unknown.near}'?", entry=entry, field=field
            )
        warnings.append(f"{where(file, entry, field)}: unknown key, ignored (known here: {', '.join(unknown.known)})")
    return warnings
