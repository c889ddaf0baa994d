"""A task of the dataset and what it expects (SPEC §3)."""

from __future__ import annotations

import hashlib
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

TaskStatus = Literal["working", "input-required", "completed", "error"]

_UNSAFE_FILE_CHARS = re.compile(r"[^A-Za-z0-9_.-]")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ToolCallExpectation(_Strict):
    name: str = Field(min_length=1)
    """Tool name, matched exactly."""
    args_subset: dict[str, Any] = Field(default_factory=dict)
    """Arguments the call must contain (recursively; see engine.scorers.arguments.args_contain)."""
    times: int = Field(default=1, ge=0)
    """Minimum number of matching calls (0: always holds, as in bat-cli)."""


class AgentCallExpectation(_Strict):
    agent: str = Field(min_length=1)
    """Name of the called agent (`gen_ai.agent.name` of the CLIENT span)."""
    times: int = Field(default=1, ge=0)
    """Minimum number of calls (0: always holds)."""


class Expected(_Strict):
    status: TaskStatus | None = "completed"
    """Final status the episode must end in; None skips the check."""
    expected_outcome: str = ""
    """Prose for the judge."""
    output_must_contain: list[str] = Field(default_factory=list)
    """Phrases that must be substrings of the final output."""
    tool_calls: list[ToolCallExpectation] = Field(default_factory=list)
    agent_calls: list[AgentCallExpectation] = Field(default_factory=list)
    max_model_calls: int | None = Field(default=None, ge=0)
    max_tokens: int | None = Field(default=None, ge=0)
    """Upper bound on tokens in + out over the whole conversation."""
    no_errors: bool = False
    """Fail when any step of the trajectory failed."""

    @property
    def needs_spans(self) -> bool:
        """True when a check reads the trajectory rather than the A2A answer."""
        return bool(
            self.tool_calls or self.agent_calls or self.no_errors
            or self.max_model_calls is not None or self.max_tokens is not None
        )


class Task(_Strict):
    """One task. Fixed `turns` today; a simulated user will be an optional sibling field."""

    id: str = Field(min_length=1)
    turns: list[str] = Field(min_length=1)
    """User messages, one A2A message each, in order."""
    expected: Expected = Field(default_factory=Expected)
    meta: dict[str, Any] = Field(default_factory=dict)
    """Free-form labels (category, ...) carried to metrics."""


MAX_FILE_STEM_BYTES = 200
"""Longest task id file stem; with `__try<n>.json` the name stays under the 255 bytes most
file systems allow for one name."""


def task_file_stem(task_id: str) -> str:
    """The part of an episode's file name that names its task (SPEC §8): characters outside
    `[A-Za-z0-9_.-]` become `_`; a stem longer than MAX_FILE_STEM_BYTES becomes its first
    bytes, `-` and 8 hex digits of the sha256 of the whole id, so two long ids sharing a
    prefix still get different files. The full id stays inside the episode."""
    stem = _UNSAFE_FILE_CHARS.sub("_", task_id)
    if not stem.strip("."):
        stem = stem.replace(".", "_")
    if len(stem) <= MAX_FILE_STEM_BYTES:
        return stem
    digest = hashlib.sha256(task_id.encode("utf-8")).hexdigest()[:8]
    return f"{stem[:MAX_FILE_STEM_BYTES - 9]}-{digest}"
