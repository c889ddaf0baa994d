"""Keys a record does not know, found before validation: as `bat eval` does, an unknown key
is ignored (here with a warning naming it), unless it is one edit away from a known key —
then it is almost surely a typo of that key, and the file is refused with "did you mean".

Only mappings read into pydantic records are checked; free-form mappings (`meta`,
`args_subset`, `env`, `prompts`) hold whatever the user wants.
"""

from __future__ import annotations

import types
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Union, get_args, get_origin

from pydantic import AliasChoices, BaseModel


@dataclass(frozen=True)
class UnknownKey:
    """One key of the data that its record has no field for."""

    loc: tuple[str | int, ...]
    """Where it is: the path to the mapping that holds it, then the key."""
    near: str | None
    """The known key one edit away, when there is one."""
    known: tuple[str, ...]
    """The keys that mapping may hold."""


def one_edit_apart(a: str, b: str) -> bool:
    """True when `a` becomes `b` by one insertion, deletion, substitution or swap of two
    neighbouring characters (equal strings are not one edit apart)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diffs = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        if len(diffs) == 1:
            return True
        i, j = diffs[0], diffs[-1]
        return len(diffs) == 2 and j == i + 1 and a[i] == b[j] and a[j] == b[i]
    short, long = (a, b) if len(a) < len(b) else (b, a)
    i = 0
    while i < len(short) and short[i] == long[i]:
        i += 1
    return short[i:] == long[i + 1 :]


def unwrap_optional(annotation: Any) -> Any:
    """`X | None` → `X`; any other annotation as it is."""
    if get_origin(annotation) in (Union, types.UnionType):
        members = [arg for arg in get_args(annotation) if arg is not type(None)]
        if len(members) == 1:
            return members[0]
    return annotation


def _record(annotation: Any) -> type[BaseModel] | None:
    annotation = unwrap_optional(annotation)
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def accepted_keys(model: type[BaseModel]) -> dict[str, str]:
    """Every key a record reads, mapped to its field: the field's name and the other
    spellings it accepts (`validation_alias`, e.g. AgentV's `args_match` for `args_mode`)."""
    keys: dict[str, str] = {}
    for name, info in model.model_fields.items():
        keys[name] = name
        alias = info.validation_alias
        choices = alias.choices if isinstance(alias, AliasChoices) else [alias]
        keys.update((choice, name) for choice in choices if isinstance(choice, str))
    return keys


def pop_unknown_keys(
    data: Any, model: type[BaseModel], *, ignore: tuple[str, ...] = (), loc: tuple[str | int, ...] = ()
) -> Iterator[UnknownKey]:
    """Remove, in place, every key of `data` (and of the mappings nested in it that are
    read into records) that `model` has no field for, yielding each. Fields named in
    `ignore` are not offered as known keys (the loader sets them)."""
    if not isinstance(data, dict):
        return
    known = tuple(name for name in model.model_fields if name not in ignore)
    accepted = accepted_keys(model)
    for key in list(data):
        if key not in accepted:
            text = str(key)
            near = next((name for name in known if one_edit_apart(text, name)), None)
            del data[key]
            yield UnknownKey(loc=(*loc, text), near=near, known=known)
            continue
        annotation = unwrap_optional(model.model_fields[accepted[key]].annotation)
        value = data[key]
        nested = _record(annotation)
        if nested is not None:
            yield from pop_unknown_keys(value, nested, loc=(*loc, key))
        elif get_origin(annotation) is list and isinstance(value, list):
            item_model = _record(get_args(annotation)[0])
            if item_model is not None:
                for index, item in enumerate(value):
                    yield from pop_unknown_keys(item, item_model, loc=(*loc, key, index))
