"""`eval/eval.yaml` as typed settings (SPEC §2), plus the fields bat_pipeline adds.

Loading (defaults, shorthand, `$VAR` expansion, refusals with file/entry/field) lives in
`engine.config`; these models only describe the validated result.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from bat_pipeline.engine.contracts.agent import AgentTarget
from bat_pipeline.engine.contracts.agentv import AgentvSuite, AgentvTarget
from bat_pipeline.engine.contracts.evalbench import EvalbenchRun
from bat_pipeline.engine.contracts.names import safe_key
from bat_pipeline.engine.contracts.strict import Strict

PROVIDERS = ("anthropic", "deepseek", "nvidia", "ollama", "openai", "gemini", "vertex")


def _check_provider(value: str) -> str:
    if value not in PROVIDERS:
        raise ValueError(f"unknown provider '{value}' (valid: {', '.join(PROVIDERS)})")
    return value


class ModelSpec(Strict):
    """One model the agent is evaluated on: one Dagster partition."""

    target: AgentvTarget | None = None
    """An AgentV target evaluated in this partition instead of an agent on a model:
    `provider` is then the target's kind (`cli`) and `model` its name."""

    provider: str
    """One of PROVIDERS; given to the agent as MODEL_PROVIDER."""
    model: str = Field(min_length=1)
    """Given to the agent as MODEL."""
    base_url: str | None = None
    """Given to the agent as BASE_URL when set."""
    env: dict[str, str] = Field(default_factory=dict)
    """Extra variables for the agent, already `$VAR`-expanded."""
    key: str | None = None
    """Partition key; defaults to `<provider>-<model>` with unsafe characters as `_`."""

    @field_validator("provider")
    @classmethod
    def _known_provider(cls, value: str, info: ValidationInfo) -> str:
        # `target` is declared first, so it is validated (and known) by now.
        return value if info.data.get("target") is not None else _check_provider(value)

    @field_validator("key")
    @classmethod
    def _safe_key(cls, value: str | None) -> str | None:
        # The key names the partition's folders and files: `..` would be the run's parent.
        if value is not None and (value != safe_key(value) or value.startswith(".") or not value):
            raise ValueError(
                f"'{value}' cannot name a partition: a key is a folder name, of A-Z, a-z, 0-9, "
                f"'_', '.' and '-', not starting with '.' (e.g. '{safe_key(value).lstrip('.') or 'model'}')"
            )
        return value

    @property
    def name(self) -> str:
        """`provider:model`, as episodes and summaries name the model; a target's own name."""
        return self.model if self.target is not None else f"{self.provider}:{self.model}"

    @property
    def partition_key(self) -> str:
        """Usable on a command line and as a folder name."""
        return self.key or safe_key(f"{self.provider}-{self.model}")


MAX_K = 1000
"""Most attempts per task (`k`, EvalBench's `num_trials`, AgentV's `trials`): every attempt
is planned, held and stored, so a typo of `k: 100000000` would take gigabytes before the
first episode; pass@k's estimate is flat long before a thousand."""
MAX_ANSWER_BYTES = 1024 * 1024
"""Longest answer body read from a model, judge or simulated-user server by default (its
decoded bytes): a judge's answer is a few kilobytes, a reasoning model's thinking some
hundreds; a runaway or hostile server's tens of megabytes would otherwise be held in
memory and stored many times over (episodes, scores, results, reports, the judge cache)."""
JUDGE_KINDS = ("choice", "quality", "standard", "pattern")
"""Judge kinds beside the rubrics (engine.scorers.choice, quality, standard, pattern)."""
PATTERNS = ("react", "cove", "reflexion", "rag")
"""Reasoning patterns the `pattern` judge kind knows."""


class PanelMember(Strict):
    """One more judge model of a panel; fields left out are the judge's own."""

    provider: str
    model: str = Field(min_length=1)
    base_url: str | None = None
    api_key_env: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        if isinstance(value, str) and ":" in value:
            provider, model = value.split(":", 1)
            return {"provider": provider.strip(), "model": model.strip()}
        return value

    _provider = field_validator("provider")(_check_provider)


class JudgeSettings(Strict):
    provider: str
    model: str = Field(min_length=1)
    base_url: str | None = None
    api_key_env: str | None = None
    """Variable holding the key; default: the provider's usual one."""
    env: dict[str, str] = Field(default_factory=dict)
    mode: Literal["full", "outcome"] = "full"
    """`outcome`: only task completion, judged from the request and the final answer."""
    max_trajectory_chars: int = Field(default=24000, ge=1)
    prompts: dict[str, str] = Field(default_factory=dict)
    """Operator context per rubric (keys in contracts.scores.RUBRICS, at most 1000 characters each)."""
    max_concurrency: int = Field(default=16, ge=1)
    """Judge calls in flight at most, across every partition judging from the same storage
    root (processes and threads alike)."""
    timeout_s: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=4, ge=0)
    max_answer_bytes: int = Field(default=MAX_ANSWER_BYTES, ge=1024, le=1024**3)
    """Longest answer read from the judge's server; a longer one is cut there and not used
    (its rows are null, their reason says so)."""
    rubrics: list[str] | None = None
    """Rubrics the judge scores each episode with: `bat` (bat-cli's four, the default when
    unset), built-in weighted rubrics (`default`, `agent`, ...) or YAML files; after
    loading, files are absolute paths (engine.yaml_rubrics)."""
    kinds: list[Literal["choice", "quality", "standard", "pattern"]] = Field(default_factory=list)
    """Judge kinds asked beside the rubrics (JUDGE_KINDS)."""
    pattern: Literal["react", "cove", "reflexion", "rag"] | None = None
    """The reasoning pattern the `pattern` kind checks, unless a task names its own."""
    runs: int = Field(default=1, ge=1, le=100)
    """Each LLM scorer asks N times; rows per sample, then their median and spread."""
    panel: list[PanelMember] = Field(default_factory=list)
    """More judge models asked the same questions; each is reported, then their median and
    agreement."""

    _provider = field_validator("provider")(_check_provider)

    def member(self, other: PanelMember) -> JudgeSettings:
        """These settings with a panel member's model (and, when it sets them, base URL
        and key variable): a base URL is kept only for a member of the same provider."""
        same = other.provider == self.provider
        return self.model_copy(
            update={
                "provider": other.provider,
                "model": other.model,
                "panel": [],
                "base_url": other.base_url or (self.base_url if same else None),
                "api_key_env": other.api_key_env or (self.api_key_env if same else None),
            }
        )


class MetricsSettings(Strict):
    """Metrics computed without an LLM (engine.metrics_extra)."""

    label_field: str | None = None
    """The field of a structured expected output (and of a JSON answer) holding the label,
    for the classification metrics; tasks may also carry `expected.expected_label`."""
    time_threshold_s: float | None = Field(default=None, gt=0)
    """An episode at or under this many seconds scores 1 on time; above, it decays. Unset:
    no `time` rows, and no mean time score."""
    time_penalty: float = Field(default=1.0, gt=0)
    """Decay rate above the threshold: score = exp(-penalty × (t − threshold) / threshold)."""
    throughput_target: float | None = Field(default=None, gt=0)
    """Episodes per second that score 1 on throughput; unset: throughput is reported only."""
    confidence: float = Field(default=0.95, gt=0, lt=1)
    """The level of every confidence interval (pass rate, scorer means, pass@k, comparisons)."""


class ReportSettings(Strict):
    """The colours of scores in reports: at or above `green`, at or above `amber`, else red."""

    green: float = Field(default=0.8, ge=0, le=1)
    amber: float = Field(default=0.5, ge=0, le=1)


class SimulatedUserSettings(Strict):
    """The model playing the user of EvalBench scenarios (SPEC §10): same providers, key
    handling and retries as the judge; its key never reaches the agent."""

    provider: str
    model: str = Field(min_length=1)
    base_url: str | None = None
    api_key_env: str | None = None
    """Variable holding the key; default: the provider's usual one."""
    env: dict[str, str] = Field(default_factory=dict)
    max_turns: int | None = Field(default=None, ge=1)
    """Agent calls per conversation for scenarios that set none (then 1)."""
    timeout_s: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=4, ge=0)
    max_answer_bytes: int = Field(default=MAX_ANSWER_BYTES, ge=1024, le=1024**3)
    """Longest answer read from the simulated user's server; a longer one ends the
    conversation as an error, saying so."""

    _provider = field_validator("provider")(_check_provider)

    def client_settings(self) -> JudgeSettings:
        """As the judge client's settings: the simulated user is asked through it."""
        return JudgeSettings(
            provider=self.provider,
            model=self.model,
            base_url=self.base_url,
            api_key_env=self.api_key_env,
            env=dict(self.env),
            timeout_s=self.timeout_s,
            max_retries=self.max_retries,
            max_answer_bytes=self.max_answer_bytes,
        )


class GateSettings(Strict):
    """Blocking asset checks; each is off unless set."""

    min_pass_rate: float | None = Field(default=None, ge=0, le=1)
    max_error_episodes: int | None = Field(default=None, ge=0)
    max_regression: float | None = Field(default=None, ge=0, le=1)
    """Largest allowed pass-rate drop against the previous run of the same model."""
    confidence: float | None = Field(default=0.95, gt=0, lt=1)
    """max_regression fails only when the drop is also significant at this level: the
    interval of the paired per-task difference against the previous run lies below 0.
    None: any drop larger than max_regression fails, however noisy (the old gate)."""


class EvaluationSettings(Strict):
    dataset: str = "eval/input/tasks.json"
    output_dir: str = "eval/output"
    agent_startup_timeout_s: float = Field(default=45, ge=1)
    agent_shutdown_timeout_s: float = Field(default=10, ge=1)
    k: int = Field(default=1, ge=1, le=MAX_K)
    """Attempts per task."""
    qualitative: bool = False
    run_name: str = "benchmark"
    extra_spans: list[str] = Field(default_factory=list)
    """Span files or folders written by agents this one calls."""
    concurrency: int = Field(default=4, ge=1)
    """Episodes in flight per model; 1 runs them one after another like the reference."""
    gate: GateSettings = Field(default_factory=GateSettings)
    schedule: str | None = None
    """Cron for the sweep schedule over all models; no schedule when unset."""
    watch: bool = False
    """Run when the dataset or eval.yaml changes (a sensor, off by default)."""
    turn_timeout_s: float = Field(default=300, gt=0)
    """Longest wait for the agent's answer to one turn; a turn past it makes the episode an
    error episode (kept, counted, not judged)."""
    trust_datasets: bool = False
    """Take what a dataset file makes the pipeline run: an EvalBench scenario's variables
    that load code (PYTHONSTARTUP, LD_PRELOAD, ...), script graders of an external AgentV
    tests file (engine.datasets.trust); `bat-pipeline run --trust-datasets` sets it."""
    adk_config: str | None = None
    """The Google ADK test_config.json for an ADK dataset (`bat-pipeline run --config`);
    unset: the one beside each eval file, else ADK's default criteria (engine.datasets.adk)."""
    agent_id: str | None = None
    """Who the agent is in the history (warehouse, gates, trends, charts, UI); default: the
    agent folder's name."""
    spans_settle_s: float = Field(default=0.5, ge=0)
    """Span files count as complete once none of them changed for this long."""
    spans_wait_s: float = Field(default=10, ge=0)
    """Longest wait for the span files to settle; then they are read as they are."""
    scorers: list[str] = Field(default_factory=list)
    """Python modules of the project's own scorers (`my_project.scorers`), imported before
    scoring; they register like the built-in ones."""


EXECUTORS = ("in_process", "multiprocess", "dask")
"""Where a partition's steps run (`execution.executor`)."""


class ExecutionSettings(Strict):
    """Where the steps of each partition's Dagster run execute."""

    executor: Literal["in_process", "multiprocess", "dask"] = "in_process"
    """`in_process`: in the partition's own process (the default, fastest on one machine);
    `multiprocess`: a process per step; `dask`: a task per step on a Dask cluster."""
    address: str | None = None
    """The Dask scheduler (`tcp://host:port`); unset: a local cluster per run."""
    workers: int | None = Field(default=None, ge=1)
    """Processes of a local Dask cluster (default 2), or steps at once for `multiprocess`."""


class ExportSettings(Strict):
    """Where the run's results go besides its own files (ours)."""

    otlp_endpoint: str | None = None
    """An OTLP/HTTP endpoint (`http://host:4318`, or its `/v1/logs`): every score row is
    sent there as a `gen_ai.evaluation.result` event on the graded turn's span."""


class EvalConfig(Strict):
    """The whole evaluation of one agent folder, validated."""

    evaluation: EvaluationSettings = Field(default_factory=EvaluationSettings)
    judge: JudgeSettings | None = None
    simulated_user: SimulatedUserSettings | None = None
    """The model answering the agent in scenarios with a conversation plan."""
    models: list[ModelSpec] = Field(min_length=1)
    agent: AgentTarget = Field(default_factory=AgentTarget)
    execution: ExecutionSettings = Field(default_factory=ExecutionSettings)
    export: ExportSettings = Field(default_factory=ExportSettings)
    agent_dir: Path
    """The agent folder; relative paths resolve against it."""
    source: Path
    """The eval.yaml these settings came from."""
    warnings: list[str] = Field(default_factory=list)
    """What the loader accepted but the user should know (unknown keys, ignored values),
    each naming the file and the key."""
    metrics: MetricsSettings = Field(default_factory=MetricsSettings)
    report: ReportSettings = Field(default_factory=ReportSettings)
    agentv: AgentvSuite | None = None
    """The AgentV eval file evaluated, when the project is one (engine.config.project):
    its tests are the dataset and its targets the partitions."""
    evalbench: EvalbenchRun | None = None
    """The EvalBench run config evaluated, when the project is one (engine.config.evalbench_run)."""

    @property
    def agent_id(self) -> str:
        """The agent's identity in the history: `evaluation.agent_id`, else the agent
        folder's name; characters outside [A-Za-z0-9_.-] become `_`."""
        return safe_key(self.evaluation.agent_id or self.agent_dir.name)

    def resolve(self, relative: str) -> Path:
        """A path of the config, resolved against the agent folder."""
        path = Path(relative).expanduser()
        return path if path.is_absolute() else (self.agent_dir / path)

    def model(self, partition_key: str) -> ModelSpec:
        """The model of a partition; KeyError names the known keys."""
        for spec in self.models:
            if spec.partition_key == partition_key:
                return spec
        known = ", ".join(m.partition_key for m in self.models)
        raise KeyError(f"no model with key '{partition_key}' in {self.source} (known: {known})")
