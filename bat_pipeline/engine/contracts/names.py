"""How things are named where a name must be safe as a key, a folder or a file name:
partition keys, agent ids, run folders, episode files; and the A2A context id of an
attempt."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from bat_pipeline.engine.errors import InputError

UNSAFE_NAME_CHARS = re.compile(r"[^A-Za-z0-9_.-]")
"""What becomes `_` in a key or a file name."""

MAX_FILE_STEM_BYTES = 200
"""Longest task id file stem; with `__try<n>.json` the name stays under the 255 bytes most
file systems allow for one name."""


def safe_key(text: str) -> str:
    """Usable as a partition key, a folder or file name and a Dagster asset key prefix:
    characters outside [A-Za-z0-9_.-] become `_`; never `.` or `..`."""
    key = UNSAFE_NAME_CHARS.sub("_", text)
    return key if key.strip(".") else key.replace(".", "_")


def task_file_stem(task_id: str) -> str:
    """The part of an episode's file name that names its task (SPEC §8): `safe_key` of the
    id; a stem longer than MAX_FILE_STEM_BYTES becomes its first bytes, `-` and 8 hex
    digits of the sha256 of the whole id, so two long ids sharing a prefix still get
    different files. The full id stays inside the episode."""
    stem = safe_key(task_id)
    if len(stem) <= MAX_FILE_STEM_BYTES:
        return stem
    digest = hashlib.sha256(task_id.encode("utf-8")).hexdigest()[:8]
    return f"{stem[: MAX_FILE_STEM_BYTES - 9]}-{digest}"


def check_id_file_names(ids: Sequence[str], file: str, key: str, files: Sequence[str] | None = None) -> None:
    """Refuse (InputError naming `file`, `<key>[i] (id 'x')` and field `id`) ids whose
    episode files would clash, in every format the same way: an id starting with `.` (a
    hidden or relative name) and two ids that become one file name once sanitised (`a/b`
    and `a_b`; both named). Long ids never clash (see `task_file_stem`). `key`: what the
    file calls its list (`tasks`, `scenarios`, `tests`, ...); `files`: the file each id is
    written in, when they are not all in `file` (an AgentV file's tests from several)."""
    owner: dict[str, tuple[int, str]] = {}
    for index, task_id in enumerate(ids):
        entry = f"{key}[{index}] (id '{task_id}')"
        file_of = files[index] if files is not None else file
        if task_id.startswith("."):
            raise InputError(
                file_of,
                f"id '{task_id}' starts with '.': episode files are named after "
                "the id, and such a name is hidden or points outside its folder",
                entry=entry,
                field="id",
            )
        stem = task_file_stem(task_id)
        if stem in owner:
            other_index, other = owner[stem]
            raise InputError(
                file_of,
                f"ids '{other}' ({key}[{other_index}]) and '{task_id}' give the same "
                f"episode file name '{stem}__try<n>.json' (characters outside "
                "[A-Za-z0-9_.-] become '_'): rename one",
                entry=entry,
                field="id",
            )
        owner[stem] = (index, task_id)


def episode_file_name(task_id: str, attempt_index: int) -> str:
    """`<task file stem>__try<n>.json` (see `task_file_stem`: long ids are shortened with a
    hash, never cut into another task's name)."""
    return f"{task_file_stem(task_id)}__try{attempt_index}.json"


def conversation_id(task_id: str, attempt_index: int) -> str:
    """`<task id>__try<n>`: the A2A context id of one attempt."""
    return f"{task_id}__try{attempt_index}"
