"""What a path given to `bat-pipeline` (or `$BAT_AGENT_DIR`) is, and the evaluation it
describes as one EvalConfig (SPEC §13 "Which file is what").

An agent folder is read as before (eval/eval.yaml). An AgentV eval file becomes the same
EvalConfig: its targets are the partitions (`ModelSpec.target`), its tests the dataset
(`suite_tasks`), the file's folder the agent folder and its stem the agent id — so every
step after loading works on it unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from bat_pipeline.engine.agent_folder import EVAL_FILE, is_agent_folder, resolve_agent_dir
from bat_pipeline.engine.config.dataset import load_tasks
from bat_pipeline.engine.config.eval_file import load_eval_config
from bat_pipeline.engine.config.evalbench_run import load_run_config
from bat_pipeline.engine.config.files import read_json, read_yaml
from bat_pipeline.engine.config.messages import explain, first_error, more_problems
from bat_pipeline.engine.contracts.agentv import AgentvSuite
from bat_pipeline.engine.contracts.config import EvalConfig, EvaluationSettings, JudgeSettings, ModelSpec
from bat_pipeline.engine.contracts.names import safe_key
from bat_pipeline.engine.contracts.tasks import Expected, Task
from bat_pipeline.engine.datasets.adk import (
    SUFFIXES as ADK_SUFFIXES,
    agent_folder_of,
    check_judge,
    is_adk_data,
    is_adk_path,
    is_legacy,
)
from bat_pipeline.engine.datasets.agentv import CASE_KEYS, load_suite
from bat_pipeline.engine.datasets.agentv_judge import asks_judge
from bat_pipeline.engine.datasets.agentv_targets import TargetOptions
from bat_pipeline.engine.datasets.evalbench import golden_for, is_evalset
from bat_pipeline.engine.datasets.trust import TRUST_HINT, loads_code
from bat_pipeline.engine.errors import InputError
from bat_pipeline.engine.target_inputs import case_turns

ProjectKind = Literal["agent", "agentv", "evalbench", "adk"]
AGENTV_OUTPUT = str(Path(".agentv") / "results")
"""Where an AgentV file's result files go without `--output` (beside the file)."""
AGENTV_WORKERS = 4


@dataclass(frozen=True)
class Overrides:
    """What the command line sets over the files: `--providers`, `--threshold`, `--output`,
    `--dataset`."""

    providers_file: Path | None = None
    threshold: float | None = None
    output_dir: Path | None = None
    dataset: Path | None = None
    """`--dataset FILE`: replaces `evaluation.dataset` (tasks.json or an EvalBench evalset)."""
    trust_datasets: bool = False
    """`--trust-datasets`: sets `evaluation.trust_datasets` (engine.datasets.trust)."""
    export_otlp: str | None = None
    """`--export-otlp URL`: replaces `export.otlp_endpoint`."""
    adk_config: Path | None = None
    """`--config FILE`: the ADK test_config.json (sets `evaluation.adk_config`)."""


def project_kind(path: Path) -> tuple[ProjectKind, Path]:
    """`agent` and its folder, or `agentv` / `evalbench` and the file. A folder is an agent
    folder; a YAML file with `dataset_config` is an EvalBench run config; with `evaluation`
    or `models` a bat-cli eval.yaml (its agent folder: the parent of `eval/`); with
    `tests`, `evalcases` or `eval_cases` an AgentV file; a JSON evalset alone is refused
    (it needs an agent); `adk` and the file: a Google ADK EvalSet (`eval_set_id`), or a
    `*.test.json` / `*.evalset.json` of ADK's older list (or not JSON: the ADK reader says
    why), or a folder of them that is no agent folder. Else InputError naming the keys found."""
    path = Path(path).expanduser().resolve()
    if path.is_dir() and not is_agent_folder(path) and is_adk_path(path):
        return "adk", path
    if path.is_dir():
        return "agent", path
    if not path.is_file():
        raise InputError(str(path), "no such file or folder")
    data = read_yaml(path, env_tags=True) if path.suffix in (".yaml", ".yml") else _json_object(path)
    if path.suffix == ".json" and is_evalset(data):
        raise InputError(
            str(path),
            "an EvalBench evalset (scenarios) needs an agent to run against: "
            f"bat-pipeline run AGENT --dataset {path}, or an EvalBench run config naming it",
        )
    if is_adk_data(data) or (path.name.endswith(ADK_SUFFIXES) and (is_legacy(data) or data is None)):
        return "adk", path
    if isinstance(data, dict):
        if "dataset_config" in data:
            return "evalbench", path
        if any(key in data for key in CASE_KEYS):
            return "agentv", path
        if "evaluation" in data or "models" in data:
            folder = path.parent.parent if path.parent.name == "eval" else path.parent
            return "agent", folder
    found = ", ".join(map(str, data)) if isinstance(data, dict) else "none"
    raise InputError(
        str(path),
        "not an agent folder, a bat-cli eval.yaml (evaluation/models), an AgentV eval "
        "file (tests/evalcases/eval_cases) or an EvalBench run config (dataset_config); "
        f"keys found: {found}",
    )


def _json_object(path: Path) -> object:
    """A `.json` file's content when it parses (None otherwise: the refusal names no keys)."""
    if path.suffix != ".json":
        return None
    try:
        return read_json(path)
    except InputError:
        return None


def resolve_project(arg: str | None, cwd: Path) -> Path:
    """The path a command means: an existing file (an AgentV eval file; a bat-cli
    eval.yaml: its agent folder, or the file itself when it is not the folder's own
    `eval/eval.yaml`) as `project_kind` reads it, else an agent folder or a blueprint's
    agent as `resolve_agent_dir` finds it."""
    if arg:
        candidate = Path(arg).expanduser()
        candidate = candidate if candidate.is_absolute() else Path(cwd) / candidate
        if candidate.is_file():
            what, where = project_kind(candidate)
            # A bat-cli eval file other than the folder's own eval/eval.yaml stays named:
            # load_project reads that file for the folder's agent.
            named = candidate.resolve()
            if what == "agent" and named != (where / EVAL_FILE).resolve():
                return named
            return named if what == "adk" else where
    return resolve_agent_dir(arg, Path(cwd))


def load_project(path: Path, overrides: Overrides | None = None) -> EvalConfig:
    """The evaluation `path` describes (`project_kind`), with the command line's overrides;
    a bat-cli eval file is read for its agent folder."""
    overrides = overrides or Overrides()
    config = _load_project(path, overrides)
    if overrides.export_otlp:
        config = config.model_copy(
            update={"export": config.export.model_copy(update={"otlp_endpoint": overrides.export_otlp})}
        )
    return config


def _load_project(path: Path, overrides: Overrides) -> EvalConfig:
    what, where = project_kind(path)
    if what == "agent":
        named = Path(path).expanduser().resolve()
        config = load_eval_config(where, named if named.is_file() else None)
        changes: dict[str, object] = {
            name: str(value)
            for name, value in (("output_dir", overrides.output_dir), ("dataset", overrides.dataset))
            if value is not None
        }
        if overrides.trust_datasets:
            changes["trust_datasets"] = True
        if overrides.adk_config is not None:
            changes["adk_config"] = str(overrides.adk_config)
        if changes:
            config = config.model_copy(update={"evaluation": config.evaluation.model_copy(update=changes)})
        return config
    if what == "adk":
        return adk_project(where, overrides)
    if what == "evalbench":
        config = load_run_config(where, overrides.output_dir)
        if overrides.dataset is not None:
            config = config.model_copy(
                update={"evaluation": config.evaluation.model_copy(update={"dataset": str(overrides.dataset)})}
            )
        if overrides.trust_datasets:
            config = config.model_copy(
                update={"evaluation": config.evaluation.model_copy(update={"trust_datasets": True})}
            )
        return config
    suite = load_suite(
        where,
        TargetOptions(
            providers_file=overrides.providers_file,
            threshold=overrides.threshold,
            trust_datasets=overrides.trust_datasets,
        ),
    )
    return agentv_config(suite, overrides)


def adk_project(path: Path, overrides: Overrides) -> EvalConfig:
    """An ADK eval file or folder (engine.datasets.adk) run on the agent folder that holds
    it, as ADK keeps an app's eval sets in its folder: that folder's eval.yaml with the file
    as its dataset (and `--config` as its test_config.json)."""
    return load_project(agent_folder_of(path), replace(overrides, dataset=path))


def agentv_config(suite: AgentvSuite, overrides: Overrides) -> EvalConfig:
    """The EvalConfig of an AgentV file: one partition per target (key: the target's name,
    made safe), k = trials, concurrency = the file's workers."""
    output = str(overrides.output_dir) if overrides.output_dir is not None else AGENTV_OUTPUT
    judged = any(asks_judge(g) for t in suite.tests for g in t.assertions)
    settings = EvaluationSettings(
        dataset=str(suite.source),
        output_dir=output,
        k=suite.trials,
        concurrency=suite.workers or AGENTV_WORKERS,
        run_name="agentv",
        agent_id=safe_key(suite.source.stem),
        qualitative=judged,
    )
    models = [
        ModelSpec(target=t, provider=t.provider, model=t.name, key=_target_key(t.name, suite)) for t in suite.targets
    ]
    first: dict[str, str] = {}
    for model in models:
        key = model.partition_key
        if key in first:
            raise InputError(
                str(suite.source),
                f"targets '{first[key]}' and '{model.name}' give the same partition key '{key}' (characters "
                "outside [A-Za-z0-9_.-] become '_'): rename one",
                field="targets",
            )
        first[key] = model.name
    return EvalConfig(
        evaluation=settings,
        models=models,
        agent_dir=suite.source.parent,
        source=suite.source,
        warnings=list(suite.warnings),
        agentv=suite,
        judge=_judge(suite) if judged else None,
    )


def _target_key(name: str, suite: AgentvSuite) -> str:
    """A target's partition key: its name made safe; a name starting with `.` is refused (its
    folders would be hidden)."""
    if name.startswith("."):
        raise InputError(
            str(suite.source),
            f"target '{name}' starts with '.': partition folders are named after the target, "
            "and such a name is hidden or points outside its folder",
            field="targets",
        )
    return safe_key(name)


def _judge(suite: AgentvSuite) -> JudgeSettings | None:
    """The judge of the file's LLM graders (engine.datasets.agentv_judge), validated."""
    if suite.judge is None:
        return None
    try:
        return JudgeSettings.model_validate(suite.judge)
    except ValidationError as exc:
        error, more = first_error(exc)
        field = ".".join(map(str, ("judge", *error["loc"])))
        message = explain(error, JudgeSettings, json_words=False) + more_problems(more)
        raise InputError(str(suite.source), message, field=field) from None


def suite_tasks(suite: AgentvSuite) -> list[Task]:
    """The tests as tasks: the turns an A2A target is sent (engine.target_inputs; one turn,
    the prompt, for most tests), no bat-cli expectation (the status check is off), the
    AgentV case attached for its graders and the other targets."""
    return [
        Task(
            id=case.id,
            turns=case_turns(case),
            expected=Expected(status=None, expected_outcome=case.criteria),
            meta=dict(case.metadata),
            agentv=case,
        )
        for case in suite.tests
    ]


def nl2sql_chosen(tasks: list[Task], settings: dict[str, Any], source: str) -> list[Task]:
    """EvalBench's NL2SQL filters of a run config on the dataset's NL2SQL entries: `dialects`
    (an entry without one of them is dropped; the golden query is the first one's),
    `query_types`, `databases`. Other tasks are kept."""
    dialects = [str(d) for d in settings.get("dialects") or []]
    types = {str(t) for t in settings.get("query_types") or []}
    databases = {str(d) for d in settings.get("databases") or []}
    chosen = []
    for task in tasks:
        info = task.meta.get("nl2sql")
        if not isinstance(info, dict):
            chosen.append(task)
            continue
        if dialects and not set(dialects) & set(info.get("dialects") or []):
            continue
        if (types and info.get("query_type") not in types) or (databases and info.get("database") not in databases):
            continue
        golden = golden_for(info.get("golden_sql"), dialects)
        if dialects and golden is not None and task.scenario is not None:
            task = task.model_copy(update={"scenario": task.scenario.model_copy(update={"golden_sql": golden})})
        chosen.append(task)
    if tasks and not chosen:
        raise InputError(
            source,
            "no entry of the dataset is of the run config's dialects / query_types / databases",
            field="dialects",
        )
    return chosen


def project_tasks(config: EvalConfig, warnings: list[str] | None = None) -> list[Task]:
    """The dataset of any project: an AgentV file's tests, an EvalBench run config's
    scenarios (its `scorers` given to each, its `scenarios` / `scenario_pattern` applied),
    else `evaluation.dataset`. What the dataset ignored is appended to `warnings`."""
    if config.agentv is not None:
        return suite_tasks(config.agentv)
    run = config.evalbench
    adk_config = config.evaluation.adk_config
    tasks = load_tasks(
        config.resolve(config.evaluation.dataset),
        warnings,
        scorers=run.scorers if run is not None else None,
        adk_config=config.resolve(adk_config) if adk_config else None,
    )
    check_judge(tasks, config.judge is not None and config.evaluation.qualitative, str(config.source))
    if not config.evaluation.trust_datasets:
        for task in tasks:
            code = [name for name in (task.scenario.env if task.scenario is not None else {}) if loads_code(name)]
            if code:
                raise InputError(
                    str(config.resolve(config.evaluation.dataset)),
                    f"the variable {code[0]} makes programs load code or run a command; {TRUST_HINT}",
                    entry=f"scenario '{task.id}'",
                    field=f"env.{code[0]}",
                )
    if warnings is not None and any(m.target is None for m in config.models):
        warnings.extend(
            f"{config.evaluation.dataset}, scenario '{t.id}', field 'env': a shared A2A agent process "
            "cannot take a scenario's variables; ignored (they apply to CLI targets)"
            for t in tasks
            if t.scenario is not None and t.scenario.env
        )
    if run is not None:
        tasks = nl2sql_chosen(tasks, run.settings, str(run.source))
    if run is None or (run.scenarios is None and run.scenario_pattern is None):
        return tasks
    pattern = run.scenario_pattern
    chosen = [
        t
        for t in tasks
        if (run.scenarios is None or t.id in run.scenarios) and (pattern is None or fnmatchcase(t.id, pattern))
    ]
    if not chosen:
        raise InputError(
            str(run.source), "no scenario of the dataset is chosen by scenarios / scenario_pattern", field="scenarios"
        )
    return chosen
