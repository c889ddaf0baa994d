"""Reading the evaluation's inputs: `eval/eval.yaml` (SPEC §2) and `tasks.json` (SPEC §3).

Every refusal is an InputError naming the file, the entry (`models[2]`, `judge`,
`tasks[3] (id 'x')`) and the field; no pydantic ValidationError, YAML or JSON exception
leaves this module.
"""

from __future__ import annotations

import difflib
import json
import re
import shlex
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, ValidationError

from bat_pipeline.engine.agent_folder import EVAL_FILE
from bat_pipeline.engine.contracts.config import PROVIDERS, RUBRICS, EvalConfig
from bat_pipeline.engine.contracts.tasks import Task, task_file_stem
from bat_pipeline.engine.environment import map_judge_key, project_environ
from bat_pipeline.engine.errors import InputError
from bat_pipeline.engine.scorers.project import load_project_scorers
from bat_pipeline.engine.unknown_keys import pop_unknown_keys

MAX_PROMPT_CHARS = 1000
TOP_LEVEL = "top level"

_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*)|(\$)|(\{[^}]*\}?))")


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key written twice in one mapping (PyYAML keeps the last)."""


def _construct_unique_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: set = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if not isinstance(key, (str, int, float, bool)):
            continue
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"key '{key}' appears twice in the same mapping", key_node.start_mark
            )
        seen.add(key)
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping)


# ---------------------------------------------------------------------------------------
# Describing values and pydantic errors in the user's terms


def _kind(value: Any, *, json_words: bool = False) -> str:
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
    "int_type": "an integer", "int_parsing": "an integer", "int_from_float": "an integer",
    "float_type": "a number", "float_parsing": "a number",
    "bool_type": "true or false", "bool_parsing": "true or false",
    "string_type": "a string", "list_type": "a list", "dict_type": "a mapping",
    "model_type": "a mapping", "model_attributes_type": "a mapping",
}
_EXPECTED_JSON = {**_EXPECTED, "list_type": "an array", "dict_type": "an object",
                  "model_type": "an object", "model_attributes_type": "an object"}


def _unwrap_optional(annotation: Any) -> Any:
    if get_origin(annotation) in (Union, types.UnionType):
        members = [arg for arg in get_args(annotation) if arg is not type(None)]
        if len(members) == 1:
            return members[0]
    return annotation


def _model_at(root: type[BaseModel], path: tuple) -> type[BaseModel] | None:
    """The pydantic model class found at `path` (a ValidationError loc) below `root`."""
    current: Any = root
    for part in path:
        current = _unwrap_optional(current)
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
    current = _unwrap_optional(current)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _did_you_mean(name: Any, allowed: list[str]) -> str:
    text = str(name)
    close = difflib.get_close_matches(text, allowed, n=1, cutoff=0.6)
    if not close and len(text) >= 3:
        close = [option for option in allowed if option.startswith(text) or text.startswith(option)][:1]
    if close:
        return f"did you mean '{close[0]}'?"
    return f"allowed: {', '.join(allowed)}"


def _number(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _dotted(path: tuple) -> str:
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif part == "[key]":
            text += " (key)"
        else:
            text += f".{part}" if text else str(part)
    return text


def _explain(error: dict, root: type[BaseModel], *, json_words: bool) -> str:
    kind = error["type"]
    value = error.get("input")
    ctx = error.get("ctx") or {}
    loc = tuple(error["loc"])
    expected_names = _EXPECTED_JSON if json_words else _EXPECTED
    if kind == "extra_forbidden":
        owner = _model_at(root, loc[:-1])
        allowed = [name for name in owner.model_fields if name not in _SET_BY_LOADER] if owner else []
        if not allowed:
            return f"unknown field '{loc[-1]}'"
        return f"unknown field '{loc[-1]}'; {_did_you_mean(loc[-1], allowed)}"
    if kind == "missing":
        return "required field is missing"
    if kind in expected_names:
        return f"expected {expected_names[kind]}, got {_kind(value, json_words=json_words)}"
    if kind == "literal_error":
        return f"expected one of {ctx.get('expected')}, got {_kind(value, json_words=json_words)}"
    if kind == "too_short":
        return "must not be empty"
    if kind == "greater_than_equal":
        return f"must be at least {_number(ctx.get('ge'))}, got {_number(value)}"
    if kind == "greater_than":
        return f"must be greater than {_number(ctx.get('gt'))}, got {_number(value)}"
    if kind == "less_than_equal":
        return f"must be at most {_number(ctx.get('le'))}, got {_number(value)}"
    if kind == "less_than":
        return f"must be less than {_number(ctx.get('lt'))}, got {_number(value)}"
    message = error.get("msg", "invalid value")
    return message.removeprefix("Value error, ")


def _first_error(exc: ValidationError) -> tuple[dict, int]:
    """The error to report (unknown fields first: they usually cause the others)."""
    errors = exc.errors()
    errors.sort(key=lambda e: e["type"] != "extra_forbidden")
    return errors[0], len(errors) - 1


# ---------------------------------------------------------------------------------------
# eval.yaml

_SET_BY_LOADER = ("agent_dir", "source", "warnings")


def _config_location(loc: tuple) -> tuple[str, str | None]:
    """(entry, field) of a location in eval.yaml: `models[2]` + `env.KEY`, `judge` + `model`."""
    if not loc:
        return TOP_LEVEL, None
    if loc[0] == "models" and len(loc) >= 2 and isinstance(loc[1], int):
        return f"models[{loc[1]}]", _dotted(loc[2:]) or None
    if len(loc) == 1:
        return TOP_LEVEL, str(loc[0])
    return str(loc[0]), _dotted(loc[1:])


def _expand(value: str, environ: Mapping[str, str], file: str, entry: str, field: str) -> str:
    """`$VAR` and `${VAR}` from environ; `$$` is a literal `$`; an unset variable is refused."""

    def replace(match: re.Match) -> str:
        braced, bare, dollar, malformed = match.groups()
        if dollar:
            return "$"
        if malformed is not None:
            raise InputError(
                file, f"unsupported '${malformed}': write $NAME or ${{NAME}} (use $$ for a literal $)",
                entry=entry, field=field,
            )
        name = braced or bare
        if name not in environ:
            raise InputError(
                file, f"environment variable '{name}' is not set (export it or put it in the agent's .env)",
                entry=entry, field=field,
            )
        return environ[name]

    return _VAR.sub(replace, value)


def _env_values(section: dict, environ: Mapping[str, str], file: str, entry: str) -> None:
    """Expand `base_url` and the `env` values of one section in place."""
    if isinstance(section.get("base_url"), str):
        section["base_url"] = _expand(section["base_url"], environ, file, entry, "base_url")
    env = section.get("env")
    if isinstance(env, dict):
        for name, value in list(env.items()):
            if value is None:  # bat-cli drops an empty value
                del env[name]
                continue
            if isinstance(value, (bool, int, float)):
                value = str(value)  # `PORT: 8080` in YAML is an int; the environment takes text
            if isinstance(value, str):
                value = _expand(value, environ, file, entry, f"env.{name}")
            env[name] = value


def _normalize_models(models: Any, file: str) -> Any:
    if not isinstance(models, list):
        return models
    normalized = []
    for index, item in enumerate(models):
        if isinstance(item, str):
            provider, sep, model = item.partition(":")
            if not sep or not provider.strip() or not model.strip():
                raise InputError(
                    file, f"expected '<provider>:<model>' or a mapping with provider and model, got '{item}'",
                    entry=f"models[{index}]", field="model",
                )
            item = {"provider": provider.strip(), "model": model.strip()}
        elif isinstance(item, dict):
            if len(item) == 1 and next(iter(item)) in PROVIDERS:
                provider, model = next(iter(item.items()))
                raise InputError(
                    file, f"write '{provider}:{model}' without a space after the colon, "
                    "or a mapping with provider and model",
                    entry=f"models[{index}]", field=str(provider),
                )
            item = dict(item)
            model_name = item.get("model")
            if not item.get("provider") and isinstance(model_name, str) and ":" in model_name:
                item["provider"], item["model"] = (part.strip() for part in model_name.split(":", 1))
            if isinstance(item.get("env"), dict):
                item["env"] = dict(item["env"])
        else:
            raise InputError(
                file, f"expected '<provider>:<model>' or a mapping with provider and model, got {_kind(item)}",
                entry=f"models[{index}]",
            )
        normalized.append(item)
    return normalized


def _judge_scope(judge: dict, environ: Mapping[str, str]) -> Mapping[str, str]:
    provider, api_key_env = judge.get("provider"), judge.get("api_key_env")
    if isinstance(provider, str) and isinstance(api_key_env, str):
        return map_judge_key(environ, provider, api_key_env)
    return environ


def _parse_yaml(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(str(path), f"cannot read: {exc.strerror or exc}") from None
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise InputError(str(path), f"invalid YAML{where}: {problem}") from None


_DEFAULTED_WHEN_EMPTY = ("dataset", "output_dir", "run_name")


def _lenient_sections(data: dict, file: str) -> dict:
    """What bat-cli reads in its own way, turned into the records' shape: an empty
    `evaluation`, `agent` or `judge` section is absent; an empty dataset, output_dir or
    run_name takes its default; a single `extra_spans` path is a list of one; a judge
    written `provider:model` is split like a model."""
    for section in ("evaluation", "agent", "judge"):
        if section in data and not data[section]:
            del data[section]
    evaluation = data.get("evaluation")
    if isinstance(evaluation, dict):
        evaluation = dict(evaluation)
        for name in _DEFAULTED_WHEN_EMPTY:
            if name in evaluation and evaluation[name] in (None, ""):
                del evaluation[name]
        if evaluation.get("extra_spans") is None:
            evaluation.pop("extra_spans", None)
        elif isinstance(evaluation["extra_spans"], str):
            evaluation["extra_spans"] = [evaluation["extra_spans"]]
        data["evaluation"] = evaluation
    judge = data.get("judge")
    if isinstance(judge, str):
        provider, sep, model = judge.partition(":")
        if not sep or not provider.strip() or not model.strip():
            raise InputError(file, f"expected '<provider>:<model>' or a mapping with provider and model, got '{judge}'",
                             entry="judge", field="model")
        data["judge"] = {"provider": provider.strip(), "model": model.strip()}
    elif isinstance(judge, dict):
        judge = dict(judge)
        model_name = judge.get("model")
        if not judge.get("provider") and isinstance(model_name, str) and ":" in model_name:
            judge["provider"], judge["model"] = (part.strip() for part in model_name.split(":", 1))
        data["judge"] = judge
    return data


def _where(file: str, entry: str | None, field: str | None) -> str:
    where = file
    if entry is not None:
        where += f", {entry}"
    if field is not None:
        where += f", field '{field}'"
    return where


def _drop_unknown_keys(data: dict, model: type[BaseModel], file: str, locate, loc: tuple = ()) -> list[str]:
    """Remove the keys `model` does not know, as bat-cli ignores them, and return one
    warning per key. A key one edit away from a known one is refused as a typo."""
    warnings = []
    for unknown in pop_unknown_keys(data, model, ignore=_SET_BY_LOADER, loc=loc):
        entry, field = locate(unknown.loc)
        if unknown.near is not None:
            raise InputError(file, f"unknown field '{unknown.loc[-1]}'; did you mean '{unknown.near}'?",
                             entry=entry, field=field)
        warnings.append(f"{_where(file, entry, field)}: unknown key, ignored "
                        f"(known here: {', '.join(unknown.known)})")
    return warnings


def _eval_path(agent_dir: Path, eval_file: str | Path | None) -> Path:
    if eval_file is None:
        path = agent_dir / EVAL_FILE
        if not path.is_file():
            raise InputError(
                str(path),
                f"no eval.yaml found (looked for {path}); create one with `bat-pipeline init {agent_dir}`",
            )
        return path
    path = Path(eval_file).expanduser()
    if not path.is_absolute() and not path.exists():
        path = agent_dir / path
    if not path.is_file():
        raise InputError(str(path), "eval file not found")
    return path.resolve()


def load_eval_config(
    agent_dir: str | Path, eval_file: str | Path | None = None, environ: Mapping[str, str] | None = None
) -> EvalConfig:
    """Read and validate `<agent_dir>/eval/eval.yaml` (or `eval_file`).

    `eval_file`, when relative, is taken from the current folder if it exists there, else
    from the agent folder. `environ` feeds `$VAR`/`${VAR}` in `base_url` and `env` values
    of models, judge and agent (`$$` is a literal `$`); by default it is the agent's
    `.env` overlaid by `os.environ` (engine.environment.project_environ). The judge's
    values see `judge.api_key_env` copied onto its provider's variable, as its environment
    will. Models may be written `"provider:model"` (split at
    the first colon, so `ollama:llama3:8b` works); numbers in `env` become text.
    `agent_dir` is made absolute; dataset and other paths stay as written (see
    `EvalConfig.resolve`). The modules of `evaluation.scorers` are imported (a project's
    own scorers register); one that cannot be is refused. Refuses with InputError naming
    file, entry and field.
    """
    agent_dir = Path(agent_dir).expanduser().resolve()
    path = _eval_path(agent_dir, eval_file)
    file = str(path)
    data = _parse_yaml(path)
    if data is None:
        raise InputError(file, "the file is empty; it needs at least a `models:` list", entry=TOP_LEVEL, field="models")
    if not isinstance(data, dict):
        raise InputError(file, f"the top level must be a mapping (evaluation, judge, models, agent), got {_kind(data)}")
    for key in data:
        if key in _SET_BY_LOADER:
            raise InputError(file, f"'{key}' is not set in eval.yaml: the pipeline sets it (the agent folder)",
                             entry=TOP_LEVEL, field=key)
    data = _lenient_sections(dict(data), file)
    data["models"] = _normalize_models(data.get("models"), file)
    warnings = _drop_unknown_keys(data, EvalConfig, file, _config_location)
    if environ is None:
        environ = project_environ(agent_dir)

    if isinstance(data["models"], list):
        for index, model in enumerate(data["models"]):
            _env_values(model, environ, file, f"models[{index}]")
    if data["models"] is None:
        del data["models"]
    for section in ("judge", "agent"):
        if isinstance(data.get(section), dict):
            data[section] = dict(data[section])
            if isinstance(data[section].get("env"), dict):
                data[section]["env"] = dict(data[section]["env"])
            # judge.env sees the judge's own environment: api_key_env already copied onto
            # the provider's variable (engine.environment.judge_environment).
            scope = _judge_scope(data[section], environ) if section == "judge" else environ
            _env_values(data[section], scope, file, section)
    agent = data.get("agent")
    if isinstance(agent, dict) and isinstance(agent.get("command"), str):
        try:
            agent["command"] = shlex.split(agent["command"])
        except ValueError as exc:
            raise InputError(file, f"cannot split the command: {exc}", entry="agent", field="command") from None

    try:
        # Lax, as bat-cli's own records: "3" is read as 3 and "true" as true.
        config = EvalConfig.model_validate(
            {**data, "agent_dir": agent_dir, "source": path, "warnings": warnings}, strict=False)
    except ValidationError as exc:
        error, more = _first_error(exc)
        entry, field = _config_location(tuple(error["loc"]))
        message = _explain(error, EvalConfig, json_words=False)
        if error["loc"] == ("models",) and error["type"] in ("missing", "too_short"):
            message = "no models: list at least one, e.g. `models: [\"ollama:llama3\"]`"
        if more:
            message += f" (and {more} more problem{'s' if more > 1 else ''})"
        raise InputError(file, message, entry=entry, field=field) from None
    _check_config(config, file)
    load_project_scorers(config)
    return config


_CRON_ALIASES = ("@hourly", "@daily", "@midnight", "@weekly", "@monthly", "@yearly", "@annually")
_CRON_FIELDS = (("minute", 0, 59), ("hour", 0, 23), ("day of month", 1, 31), ("month", 1, 12),
                ("day of week", 0, 7))
_CRON_NAMES = re.compile(r"^(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|sun|mon|tue|wed|thu|fri|sat)$",
                         re.IGNORECASE)


def cron_problem(cron: str) -> str | None:
    """Why a cron expression would not schedule (Dagster takes five fields, or an alias such
    as @daily), or None when it reads as one."""
    if cron.strip().lower() in _CRON_ALIASES:
        return None
    fields = cron.split()
    if len(fields) != 5:
        return f"'{cron}' has {len(fields)} fields; a cron needs 5 (minute hour day month weekday), e.g. '0 3 * * *'"
    for text, (name, low, high) in zip(fields, _CRON_FIELDS):
        for part in text.split(","):
            span, _, step = part.partition("/")
            if step and not step.isdigit():
                return f"'{cron}': the {name} step '{step}' is not a number"
            for bound in ([] if span == "*" else span.split("-", 1)):
                if _CRON_NAMES.match(bound):
                    continue
                if not bound.isdigit() or not low <= int(bound) <= high:
                    return f"'{cron}': '{bound}' is not a valid {name} ({low}-{high})"
    return None


def _check_config(config: EvalConfig, file: str) -> None:
    """Rules across fields, after the types are right."""
    if config.evaluation.schedule is not None:
        problem = cron_problem(config.evaluation.schedule)
        if problem:
            raise InputError(file, problem, entry="evaluation", field="schedule")
    judge = config.judge
    if config.evaluation.qualitative and judge is None:
        raise InputError(file, "qualitative: true needs a `judge:` section (provider and model)",
                         entry="evaluation", field="qualitative")
    if judge is not None:
        for rubric, prompt in judge.prompts.items():
            if rubric not in RUBRICS:
                hint = difflib.get_close_matches(rubric, RUBRICS, n=1, cutoff=0.6)
                mean = f"did you mean '{hint[0]}'? " if hint else ""
                raise InputError(file, f"unknown rubric '{rubric}'; {mean}allowed: {', '.join(RUBRICS)}",
                                 entry="judge", field=f"prompts.{rubric}")
            if len(prompt) > MAX_PROMPT_CHARS:
                raise InputError(file, f"prompt is {len(prompt)} characters; at most {MAX_PROMPT_CHARS}",
                                 entry="judge", field=f"prompts.{rubric}")
    first_index: dict[str, int] = {}
    for index, model in enumerate(config.models):
        key = model.partition_key
        if key in first_index:
            field = "key" if model.key else "model"
            raise InputError(
                file,
                f"partition key '{key}' is also the key of models[{first_index[key]}]; "
                "give one of them a distinct `key:`",
                entry=f"models[{index}]", field=field,
            )
        first_index[key] = index
    target = config.agent
    if target.command is not None and not target.command:
        raise InputError(file, "command must not be empty", entry="agent", field="command")
    if target.command and target.url:
        raise InputError(file, "give either command (start the agent) or url (already running), not both",
                         entry="agent", field="url")


# ---------------------------------------------------------------------------------------
# tasks.json


def _task_entry(index: int, item: Any) -> str:
    task_id = item.get("id") if isinstance(item, dict) else None
    return f"tasks[{index}] (id '{task_id}')" if isinstance(task_id, str) and task_id else f"tasks[{index}]"


def load_tasks(path: str | Path, warnings: list[str] | None = None) -> list[Task]:
    """The dataset: a JSON array of tasks (SPEC §3), read as `bat eval` reads it.

    Unknown keys are ignored, each with a warning appended to `warnings` (a key one edit
    away from a known one is refused as a typo); scalars are coerced as bat-cli's records
    do ("3" → 3, "true" → true); a null `expected_outcome` is empty. Refuses (InputError
    with file, `tasks[i] (id 'x')` and field) a missing file, text that is not JSON (line
    and column), a top level that is not an array, an empty array, a task that does not
    validate, and an id used twice (both indexes named).
    """
    path = Path(path)
    file = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(file, "dataset not found (evaluation.dataset in eval.yaml names it)") from None
    except OSError as exc:
        raise InputError(file, f"cannot read: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(file, f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    if not isinstance(data, list):
        raise InputError(file, f"the top level must be an array of tasks, got {_kind(data, json_words=True)}")
    if not data:
        raise InputError(file, "the dataset has no tasks")
    tasks: list[Task] = []
    first_index: dict[str, int] = {}
    for index, item in enumerate(data):
        entry = _task_entry(index, item)
        if not isinstance(item, dict):
            raise InputError(file, f"expected a task object, got {_kind(item, json_words=True)}", entry=entry)
        item = json.loads(json.dumps(item))  # a private copy: unknown keys are removed from it
        expected = item.get("expected")
        if isinstance(expected, dict) and expected.get("expected_outcome", "") is None:
            expected["expected_outcome"] = ""
        found = _drop_unknown_keys(item, Task, file, lambda loc, entry=entry: (entry, _dotted(loc)))
        if warnings is not None:
            warnings.extend(found)
        try:
            task = Task.model_validate(item, strict=False)
        except ValidationError as exc:
            error, more = _first_error(exc)
            message = _explain(error, Task, json_words=True)
            if more:
                message += f" (and {more} more problem{'s' if more > 1 else ''})"
            raise InputError(file, message, entry=entry, field=_dotted(tuple(error["loc"])) or None) from None
        if task.id in first_index:
            raise InputError(file, f"duplicate id '{task.id}' (also tasks[{first_index[task.id]}])",
                             entry=entry, field="id")
        first_index[task.id] = index
        tasks.append(task)
    check_task_file_names(tasks, file)
    return tasks


def check_task_file_names(tasks: list[Task], file: str) -> None:
    """Refuse ids whose episode files would clash: an id starting with `.` (a hidden or
    relative name), and two ids that become the same file name once sanitised (`a/b`
    and `a_b`); both ids are named. Long ids never clash (see `task_file_stem`)."""
    owner: dict[str, tuple[int, str]] = {}
    for index, task in enumerate(tasks):
        entry = _task_entry(index, {"id": task.id})
        if task.id.startswith("."):
            raise InputError(file, f"id '{task.id}' starts with '.': episode files are named after "
                             "the id, and such a name is hidden or points outside its folder",
                             entry=entry, field="id")
        stem = task_file_stem(task.id)
        if stem in owner:
            other_index, other = owner[stem]
            raise InputError(file, f"ids '{other}' (tasks[{other_index}]) and '{task.id}' give the same "
                             f"episode file name '{stem}__try<n>.json' (characters outside "
                             "[A-Za-z0-9_.-] become '_'): rename one", entry=entry, field="id")
        owner[stem] = (index, task.id)
