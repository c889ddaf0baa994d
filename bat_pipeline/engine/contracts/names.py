"""How things are named where a name must be safe as a key, a folder or a file name:
partition keys, agent ids, run folders, episode files; and the A2A context id of an
attempt."""

from __future__ import annotations

import hashlib
import re

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


def episode_file_name(task_id: str, attempt_index: int) -> str:
    """`<task file stem>__try<n>.json` (see `task_file_stem`: long ids are shortened with a
    hash, never cut into another task's name)."""
    return f"{task_file_stem(task_id)}__try{attempt_index}.json"


def conversation_id(task_id: str, attempt_index: int) -> str:
    """`<task id>__try<n>`: the A2A context id of one attempt."""
    return f"{task_id}__try{attempt_index}"
