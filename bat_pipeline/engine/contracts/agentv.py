"""An AgentV eval file as typed records (SPEC §9, §12): its tests, their assertions and the
targets they run against. Read by engine.datasets.agentv; these only describe the result."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from bat_pipeline.engine.contracts.agent import AgentTarget

AgentvFormat = Literal["seed", "v4"]
"""`seed`: the newer format of seed 001 (`prompts`, `vars`, `assert`, `providers`);
`v4`: AgentV 4.x files (`input`, `expected_output`, `assertions`, `.agentv/targets.yaml`)."""


class _Record(BaseModel):
    # Read from the user's files: a number is finite (`.inf` / `.nan` are refused).
    model_config = ConfigDict(frozen=True, allow_inf_nan=False)


class Healthcheck(_Record):
    """A command run before any test of a target; failing it fails the partition."""

    command: str | list[str] | None = None
    """Shell text or argv; None with `url`."""
    url: str | None = None
    """Answers 2xx: healthy (4.x `{url}` form)."""
    cwd: Path
    """Absolute working directory."""
    timeout_s: float = 60.0


class A2aAgent(_Record):
    """`provider: a2a`: an agent talked to over A2A, as bat-cli talks to the agent under test.
    Either at `agent.url` (already running), or an agent folder started for the partition
    as a BAT agent is (its own port, span file and environment)."""

    agent: AgentTarget
    """How to start or reach it: the folder's own `eval/eval.yaml` `agent:` block, if any,
    under the target's `url`, `command`, `cwd`, `env` and `spans`."""
    folder: Path
    """The agent folder (absolute); the eval file's folder for an agent at a `url`."""
    model_provider: str | None = None
    """The model the agent runs on (MODEL_PROVIDER, MODEL, BASE_URL in its environment);
    None only for an agent at a `url`."""
    model: str | None = None
    base_url: str | None = None
    model_env: dict[str, str] = Field(default_factory=dict)
    """The model's own variables (the folder's eval.yaml `models[0].env`)."""
    startup_timeout_s: float = 45.0
    shutdown_timeout_s: float = 10.0
    turn_timeout_s: float = 300.0
    spans_settle_s: float = Field(default=0.5, ge=0)
    """Span files count as complete once quiet this long after the conversations. An agent
    at a `url` keeps running and exports on its own schedule (OpenTelemetry's batch
    processor: every 5 s by default), so its default is longer: URL_SPANS_SETTLE_S."""
    extra_spans: list[str] = Field(default_factory=list)
    """Span files of agents it calls, absolute or relative to `folder`."""


class LlmModel(_Record):
    """A plain LLM target (`provider: openai | anthropic | ollama | deepseek | nvidia`): one
    completion per test and attempt, in the provider's wire format."""

    model: str
    base_url: str | None = None
    """None: the provider's public endpoint. May hold `{scripted_llm}`."""
    api_key_env: str | None = None
    """The variable holding the key (`api_key: ${{ VAR }}`); None: the provider's usual one.
    The key itself is read when the partition runs, from the environment and the `.env`
    beside the eval file, and never kept in a record."""
    temperature: float | None = None
    max_output_tokens: int | None = Field(default=None, ge=1)
    max_retries: int = Field(default=4, ge=0)
    """Requests per test and attempt after the first, on 429, 408, 5xx, timeouts and
    connection errors."""


class AgentvTarget(_Record):
    """One provider/target: one partition."""

    name: str
    provider: str
    """`cli`, `a2a`, or an LLM provider (`llm`); other kinds are refused before a run
    starts, naming the kind."""
    a2a: A2aAgent | None = None
    """Set for `provider: a2a`."""
    llm: LlmModel | None = None
    """Set for an LLM provider."""
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
    files_format: str | None = None
    """`files_format` (`attachments_format`): how each input file is written in {FILES},
    `{path}` and `{basename}` filled (default `{path}`); files space separated."""
    source: str
    """Where the definition was read (file, and entry), for messages."""


IMPLICIT_KEY = "implicit"
"""Marks the LLM grader a 4.x test naming no grader gets for its criteria (in
`Assertion.options` and its rows' details): AgentV's index.jsonl lists no grader for it."""


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
