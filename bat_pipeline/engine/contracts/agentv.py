"""An AgentV eval file as typed records (SPEC §9, §12): its tests, their assertions and the
targets they run against. Read by engine.datasets.agentv; these only describe the result."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

AgentvFormat = Literal["seed", "v4"]
"""`seed`: the newer format of seed 001 (`prompts`, `vars`, `assert`, `providers`);
`v4`: AgentV 4.x files (`input`, `expected_output`, `assertions`, `.agentv/targets.yaml`)."""


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True)


class Healthcheck(_Record):
    """A command run before any test of a target; failing it fails the partition."""

    command: str | list[str] | None = None
    """Shell text or argv; None with `url`."""
    url: str | None = None
    """Answers 2xx: healthy (4.x `{url}` form)."""
    cwd: Path
    """Absolute working directory."""
    timeout_s: float = 60.0


class AgentvTarget(_Record):
    """One provider/target: one partition."""

    name: str
    provider: str
    """`cli` is run; other kinds are refused before a run starts, naming the kind."""
    command: str | list[str] | None = None
    """With placeholders {PROMPT} {PROMPT_FILE} {OUTPUT_FILE} {EVAL_ID} {ATTEMPT} {EVAL_FILE} {FILES}."""
    batch: bool = False
    """`batch_requests` / `provider_batching`: run once per partition, JSONL keyed by id."""
    cwd: Path
    """Absolute working directory of the command (default: the eval file's folder)."""
    timeout_s: float = 300.0
    workers: int | None = Field(default=None, ge=1)
    """Commands in flight at most; None: the file's, else 4."""
    healthcheck: Healthcheck | None = None
    env: dict[str, str] = Field(default_factory=dict)
    """Extra variables for the command."""
    source: str
    """Where the definition was read (file, and entry), for messages."""


class Assertion(_Record):
    """One grader of a test, any type; `options` keeps the type's own fields."""

    name: str
    type: str
    """Normalised: lower case, `_` as `-`, aliases mapped (`code-grader` → `script`,
    `not-contains` stays, `tool-trajectory` → `trajectory`, `llm-grader` → `llm-rubric`)."""
    weight: float = Field(default=1.0, ge=0)
    required: bool | float = False
    """A failed required grader makes the test's score 0; a number is its minimum score."""
    min_score: float | None = None
    negate: bool = False
    value: Any = None
    """The operand of text checks (`contains`, `regex`, ...)."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Every other field as written (`command`, `cwd`, `timeout_s`, `flags`, `mode`, ...)."""


class Message(_Record):
    role: str
    content: Any = None
    """Text, or structured content (a mapping or list) kept as it is."""


class AgentvCase(_Record):
    """One test of the file."""

    id: str
    prompt: str
    """The text a target gets ({PROMPT}): the file's first prompt rendered over the
    test's vars (seed), or the input messages as text (4.x)."""
    input: list[Message]
    """The input as messages (a plain string is one user message)."""
    expected_output: list[Message] = Field(default_factory=list)
    criteria: str = ""
    assertions: list[Assertion] = Field(default_factory=list)
    threshold: float | None = None
    """The score the test passes at: its own `execution.threshold`, else `--threshold`,
    else the file's, else 0.8 (filled in by the loader)."""
    vars: dict[str, Any] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)
    input_files: list[str] = Field(default_factory=list)
    format: AgentvFormat = "seed"
    eval_file: Path
    """The eval file, absolute ({EVAL_FILE}; graders' `cwd` is relative to its folder)."""


class AgentvSuite(_Record):
    """The whole file, validated."""

    source: Path
    format: AgentvFormat
    description: str = ""
    tests: list[AgentvCase] = Field(min_length=1)
    targets: list[AgentvTarget] = Field(min_length=1)
    threshold: float = 0.8
    """The file's threshold, or `--threshold`; a test's own wins."""
    trials: int = Field(default=1, ge=1)
    workers: int | None = Field(default=None, ge=1)
    judge: dict[str, Any] | None = None
    """eval.yaml's `judge:` fields for the LLM graders (engine.datasets.agentv_judge);
    None when no test has one."""
    warnings: list[str] = Field(default_factory=list)
