"""An EvalBench run config (`bat-pipeline run run_config.yaml`; SPEC §10, §12, §13) into the
same EvalConfig an agent folder gives.

- `dataset_config`: the evalset (the dataset); `scenarios` / `scenario_pattern` pick
  scenarios; `num_trials` is k; `runners.agent_runners` the concurrency (default 10);
- `model_config`: a YAML file naming the target. `generator: a2a` with `url` (an agent
  already running) or `agent` (an agent folder, started as for `bat-pipeline run
  FOLDER`), and optionally `models` (`provider:model`, as in eval.yaml; an agent folder's
  own by default); `generator: cli` with `command` (one invocation per turn, `{PROMPT}`,
  `{SESSION_DIR}`; resources.cli_conversations), `cwd`, `env`, `timeout_seconds`,
  `isolate_home`, `name`. EvalBench's own CLI generators `claude_code`, `gemini_cli`,
  `codex_cli` run their CLI as EvalBench does (engine.evalbench_clis); `agy_cli`,
  `jetski_cli` and any other generator are refused by name;
- `simulated_user_model_config`: a YAML file `{provider, model, base_url, api_key_env,
  env, max_turns}` (EvalBench's `model_id` is read as `model`), or EvalBench's own
  `generator: gcp_vertex_gemini` with `vertex_model`, `gcp_project_id`, `gcp_region`
  (`provider: vertex`);
- `scorers`: name → options; the LLM scorers (`goal_completion`, `behavioral_metrics`,
  `parameter_analysis`, `binary_rubric_scorer`) take the judge from
  their `model_config` (same shape), else the agent folder's `judge`;
- `reporting.csv.output_directory`: where the CSV report goes.

Relative paths are taken from the run config's folder, else from the current folder (where
EvalBench runs); `reporting.csv.output_directory` always from the current folder, as
EvalBench writes it. Both files may use pyaml-env's `!ENV` tags. Every refusal is an
InputError naming the file and the key.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bat_pipeline.engine.config.eval_file import load_eval_config
from bat_pipeline.engine.config.files import read_yaml
from bat_pipeline.engine.config.lenient import normalize_models
from bat_pipeline.engine.config.messages import first_error, kind
from bat_pipeline.engine.contracts.agent import AgentTarget
from bat_pipeline.engine.contracts.agentv import AgentvTarget
from bat_pipeline.engine.contracts.config import (
    MAX_K,
    PROVIDERS,
    EvalConfig,
    EvaluationSettings,
    JudgeSettings,
    ModelSpec,
    SimulatedUserSettings,
)
from bat_pipeline.engine.contracts.evalbench import CliHarness, EvalbenchRun
from bat_pipeline.engine.contracts.names import safe_key
from bat_pipeline.engine.environment import VERTEX_LOCATION_ENV, VERTEX_PROJECT_ENV
from bat_pipeline.engine.errors import InputError
from bat_pipeline.engine.evalbench_clis import HARNESSES, UNRUN, harness_from_config
from bat_pipeline.engine.scorers.registry import registered

RUN_KEYS = (
    "dataset_config",
    "dataset_format",
    "orchestrator",
    "model_config",
    "simulated_user_model_config",
    "runners",
    "scorers",
    "reporting",
    "scenarios",
    "scenario_pattern",
    "num_trials",
    "dialects",
    "query_types",
    "databases",
)
LLM_SCORERS = (
    "goal_completion",
    "behavioral_metrics",
    "parameter_analysis",
    "binary_rubric_scorer",
    "skills_best_practices",
)
VERTEX_GEMINI = "gcp_vertex_gemini"
"""EvalBench's Gemini-on-Vertex model config (`vertex_model`, `gcp_project_id`, `gcp_region`)."""
DEFAULT_RUNNERS = 10
MAX_RUNNERS = 256
"""Most conversations at once (`runners.agent_runners`): each holds an agent connection."""
DEFAULT_TIMEOUT_S = 300.0
"""A CLI target's longest turn, without `timeout_seconds`."""


def _path(value: Any, run_file: Path, field: str) -> Path:
    if not isinstance(value, str) or not value.strip():
        raise InputError(str(run_file), "expected a file path", field=field)
    path = Path(os.path.expandvars(value)).expanduser()
    if path.is_absolute():
        return path
    beside = (run_file.parent / path).resolve()
    return beside if beside.exists() or not (Path.cwd() / path).exists() else (Path.cwd() / path).resolve()


def _from_cwd(value: Any, run_file: Path, field: str) -> Path:
    """A folder EvalBench writes to: relative to the working directory, as its CsvReporter
    writes `<output_directory>/<job id>/` (never beside the run config)."""
    if not isinstance(value, str) or not value.strip():
        raise InputError(str(run_file), "expected a folder path", field=field)
    return (Path.cwd() / Path(os.path.expandvars(value)).expanduser()).resolve()


def _count(value: Any, run_file: Path, field: str, most: int) -> int:
    """A whole number from 1 to `most` (`num_trials`, `agent_runners`); else refused."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
        raise InputError(str(run_file), f"expected a whole number from 1 to {most}, got {value!r}", field=field)
    return value


def _mapping(path: Path, what: str) -> dict[str, Any]:
    """A run config or model config: EvalBench reads both with pyaml-env (`!ENV` tags)."""
    data = read_yaml(path, env_tags=True)
    if not isinstance(data, dict):
        raise InputError(str(path), f"a {what} must be a YAML mapping")
    return data


def _llm_settings(path: Path, kind: type[JudgeSettings] | type[SimulatedUserSettings]) -> Any:
    """A model config file as judge or simulated-user settings."""
    data = _mapping(path, "model config")
    generator = data.pop("generator", None)
    if generator == VERTEX_GEMINI:
        data = _vertex_gemini(data, path)
    elif generator is not None and generator not in PROVIDERS:
        raise InputError(
            str(path),
            f"generator '{generator}' cannot be asked here; give provider and model "
            f"(providers: {', '.join(PROVIDERS)}), or generator: {VERTEX_GEMINI} with vertex_model",
            field="generator",
        )
    if "model_id" in data and "model" not in data:
        data["model"] = data.pop("model_id")
    data.setdefault("provider", generator)
    known = {k: v for k, v in data.items() if k in kind.model_fields}
    try:
        return kind.model_validate(known)
    except ValidationError as exc:
        error, _ = first_error(exc)
        raise InputError(str(path), error["msg"], field=".".join(map(str, error["loc"])) or None) from None


def _vertex_gemini(data: dict[str, Any], path: Path) -> dict[str, Any]:
    """EvalBench's `gcp_vertex_gemini` model config as `provider: vertex` settings: the
    model is `vertex_model`, `gcp_project_id` / `gcp_region` the project and location
    (GOOGLE_CLOUD_PROJECT / GOOGLE_CLOUD_LOCATION of the client's environment; without
    them, the shell's, as EvalBench's get_gcp_project / get_gcp_region read it)."""
    model = data.get("vertex_model")
    if not isinstance(model, str) or not model.strip():
        raise InputError(str(path), f"generator: {VERTEX_GEMINI} names its model in vertex_model", field="vertex_model")
    env = {str(k): str(v) for k, v in (data.get("env") or {}).items() if v is not None}
    for key, variable in (("gcp_project_id", VERTEX_PROJECT_ENV), ("gcp_region", VERTEX_LOCATION_ENV)):
        if data.get(key):
            env[variable] = str(data[key])
    kept = {k: v for k, v in data.items() if k not in ("vertex_model", "gcp_project_id", "gcp_region", "env")}
    return {**kept, "provider": "vertex", "model": model.strip(), "env": env}


def _target(path: Path, run_file: Path) -> tuple[EvalConfig | None, AgentTarget | None, list[Any], str]:
    """(the agent folder's config, or the agent at a url; the models; the target in words)."""
    data = _mapping(path, "model config")
    generator = data.get("generator")
    if generator == "cli":
        return None, None, [_cli_target(path, data)], f"cli {data.get('command')}"
    if generator in HARNESSES:
        harness = _harness(path, data)
        target = AgentvTarget(
            name=str(data.get("name") or path.stem),
            provider="cli",
            command=[harness.cli],
            cwd=Path.cwd(),
            source=str(path),
            timeout_s=float(data.get("timeout_seconds") or DEFAULT_TIMEOUT_S),
        )
        spec = ModelSpec(target=target, provider="cli", model=target.name, key=safe_key(target.name))
        return None, None, [spec], f"{generator} {harness.cli}"
    if generator in UNRUN:
        raise InputError(
            str(path),
            f"generator '{generator}': {UNRUN[generator]}; run: {', '.join(HARNESSES)}, cli or a2a",
            field="generator",
        )
    if generator != "a2a":
        raise InputError(
            str(path),
            f"generator '{generator}' is not run by this release; these are: "
            f"{', '.join(HARNESSES)} (EvalBench's CLI generators), cli (a command of your own), "
            "a2a with url (an agent already running) or agent (an agent folder)",
            field="generator",
        )
    models = normalize_models(data.get("models"), str(path)) if data.get("models") is not None else []
    if data.get("agent"):
        folder = _path(data["agent"], path, "agent")
        return load_eval_config(folder), None, models, f"a2a agent folder {folder}"
    if data.get("url"):
        if not models:
            raise InputError(str(path), 'name the agent\'s model(s): models: ["provider:model"]', field="models")
        return None, AgentTarget(url=str(data["url"])), models, f"a2a {data['url']}"
    raise InputError(
        str(path), "generator: a2a needs url (an agent already running) or agent (an agent folder)", field="url"
    )


def _harness(path: Path, data: dict[str, Any]) -> CliHarness:
    """An EvalBench CLI generator's model config (engine.evalbench_clis); its fake home
    under the working directory, as EvalBench keeps it."""
    try:
        return harness_from_config(str(data["generator"]), data, Path.cwd())
    except ValueError as exc:
        message = str(exc)
        field, _, _ = message.partition(":")
        raise InputError(str(path), message, field=field.split(" ")[0]) from None


def _cli_target(path: Path, data: dict[str, Any]) -> ModelSpec:
    """`generator: cli`: one partition running `command` per turn (resources.cli_conversations)."""
    command = data.get("command")
    if not command or not isinstance(command, (str, list)):
        raise InputError(
            str(path), "generator: cli needs a command (with {PROMPT}; {SESSION_DIR} is the session)", field="command"
        )
    name = str(data.get("name") or path.stem)
    cwd = _path(data["cwd"], path, "cwd") if data.get("cwd") else path.parent
    env = {str(k): str(v) for k, v in (data.get("env") or {}).items() if v is not None}
    target = AgentvTarget(
        name=name,
        provider="cli",
        command=command,
        cwd=cwd,
        env=env,
        source=str(path),
        timeout_s=float(data.get("timeout_seconds") or DEFAULT_TIMEOUT_S),
    )
    return ModelSpec(target=target, provider="cli", model=name, key=safe_key(name))


def _scorers(data: dict[str, Any], file: Path) -> dict[str, dict[str, Any]] | None:
    scorers = data.get("scorers")
    if scorers is None:
        return None
    if isinstance(scorers, list):
        scorers = dict.fromkeys(scorers)
    if not isinstance(scorers, dict):
        raise InputError(str(file), "expected a mapping of scorer names to their options", field="scorers")
    return {str(name): dict(options or {}) for name, options in scorers.items()}


def load_run_config(path: Path, output_dir: Path | None = None) -> EvalConfig:
    """The EvalConfig of an EvalBench run config (module docstring); `output_dir`
    (`--output`) replaces the reference files' folder."""
    path = Path(path).resolve()
    data = _mapping(path, "run config")
    warnings = [
        f"{path}, field '{key}': unknown key, ignored (known here: {', '.join(RUN_KEYS)})"
        for key in data
        if key not in RUN_KEYS
    ]
    for key, accepted in (
        ("dataset_format", ("agent-format", "gemini-cli-format")),
        ("orchestrator", ("agent", "geminicli")),
    ):
        if key in data and data[key] not in accepted:
            warnings.append(f"{path}, field '{key}': '{data[key]}' read as {accepted[0]}")
    if isinstance(data.get("reporting"), dict) and "bigquery" in data["reporting"]:
        warnings.append(
            f"{path}, field 'reporting.bigquery': not written from here; the tables export to "
            "Parquet for BigQuery (docs/formats.md §11)"
        )
    if "model_config" not in data:
        raise InputError(
            str(path), "model_config names the target (a YAML file with generator: a2a)", field="model_config"
        )
    folder_config, url_agent, models, target = _target(_path(data["model_config"], path, "model_config"), path)
    scorers = _scorers(data, path)
    known = {scorer.name for scorer in registered()}
    warnings += [
        f"{path}, field 'scorers.{name}': no such scorer here; it scores nothing (known: {', '.join(sorted(known))})"
        for name in scorers or {}
        if name not in known
    ]
    judge = folder_config.judge if folder_config is not None else None
    for name in LLM_SCORERS:
        model_config = (scorers or {}).get(name, {}).get("model_config")
        if model_config:
            judge = _llm_settings(_path(model_config, path, f"scorers.{name}.model_config"), JudgeSettings)
            break
    llm_wanted = scorers is not None and any(name in scorers for name in LLM_SCORERS)
    if llm_wanted and judge is None:
        raise InputError(
            str(path),
            f"{', '.join(n for n in LLM_SCORERS if n in (scorers or {}))} need a judge: give the scorer a model_config",
            field="scorers",
        )
    user = None
    if data.get("simulated_user_model_config"):
        user = _llm_settings(
            _path(data["simulated_user_model_config"], path, "simulated_user_model_config"), SimulatedUserSettings
        )
    elif folder_config is not None:
        user = folder_config.simulated_user
    runners = data.get("runners") or {}
    if not isinstance(runners, dict):
        raise InputError(str(path), f"expected a mapping (agent_runners), got {kind(runners)}", field="runners")
    settings = EvaluationSettings(
        dataset=str(_path(data.get("dataset_config"), path, "dataset_config")),
        output_dir=str(output_dir) if output_dir is not None else str(path.parent / "eval_output"),
        k=_count(data.get("num_trials", 1), path, "num_trials", MAX_K),
        concurrency=_count(runners.get("agent_runners", DEFAULT_RUNNERS), path, "runners.agent_runners", MAX_RUNNERS),
        qualitative=llm_wanted
        or (
            scorers is None and judge is not None and folder_config is not None and folder_config.evaluation.qualitative
        ),
        run_name="evalbench",
        agent_id=safe_key(path.stem),
        turn_timeout_s=folder_config.evaluation.turn_timeout_s if folder_config else 300,
    )
    csv_dir = ((data.get("reporting") or {}).get("csv") or {}).get("output_directory")
    model_settings = _mapping(_path(data["model_config"], path, "model_config"), "model config")
    run = EvalbenchRun(
        source=path,
        dataset=Path(settings.dataset),
        scorers=scorers,
        csv_dir=_from_cwd(csv_dir, path, "reporting.csv.output_directory") if csv_dir else None,
        scenarios=[str(s) for s in data["scenarios"]] if data.get("scenarios") else None,
        scenario_pattern=None if data.get("scenario_pattern") is None else str(data["scenario_pattern"]),
        target=target,
        settings=data,
        isolate_home=model_settings.get("isolate_home", True) is not False,
        model_settings=model_settings,
        harness=_harness(path, model_settings) if model_settings.get("generator") in HARNESSES else None,
    )
    base = folder_config
    spec_models = (
        [m if isinstance(m, ModelSpec) else ModelSpec.model_validate(m) for m in models]
        if models
        else (base.models if base else [])
    )
    return EvalConfig(
        evaluation=settings,
        judge=judge,
        simulated_user=user,
        models=spec_models,
        agent=base.agent if base else (url_agent or AgentTarget()),
        agent_dir=base.agent_dir if base else path.parent,
        source=path,
        warnings=[*(base.warnings if base else []), *warnings],
        evalbench=run,
    )
