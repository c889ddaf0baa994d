"""`eval/eval.yaml` (SPEC §2) into an EvalConfig."""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bat_pipeline.engine.agent_folder import EVAL_FILE
from bat_pipeline.engine.config.files import read_yaml
from bat_pipeline.engine.config.lenient import lenient_sections, normalize_models
from bat_pipeline.engine.config.messages import (
    SET_BY_LOADER,
    Loc,
    dotted,
    drop_unknown_keys,
    explain,
    first_error,
    kind,
    more_problems,
)
from bat_pipeline.engine.config.rules import check_config
from bat_pipeline.engine.contracts.config import EvalConfig
from bat_pipeline.engine.environment import map_judge_key, project_environ
from bat_pipeline.engine.errors import InputError
from bat_pipeline.engine.scorers.project import load_project_scorers
from bat_pipeline.engine.yaml_rubrics.load import resolve_rubric_names

TOP_LEVEL = "top level"
_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*)|(\$)|(\{[^}]*\}?))")


def _config_location(loc: Loc) -> tuple[str, str | None]:
    """(entry, field) of a location in eval.yaml: `models[2]` + `env.KEY`, `judge` + `model`."""
    if not loc:
        return TOP_LEVEL, None
    if loc[0] == "models" and len(loc) >= 2 and isinstance(loc[1], int):
        return f"models[{loc[1]}]", dotted(loc[2:]) or None
    if len(loc) == 1:
        return TOP_LEVEL, str(loc[0])
    return str(loc[0]), dotted(loc[1:])


def _expand(value: str, environ: Mapping[str, str], file: str, entry: str, field: str) -> str:
    """`$VAR` and `${VAR}` from environ; `$$` is a literal `$`; an unset variable is refused."""

    def replace(match: re.Match[str]) -> str:
        braced, bare, dollar, malformed = match.groups()
        if dollar:
            return "$"
        if malformed is not None:
            raise InputError(
                file,
                f"unsupported '${malformed}': write $NAME or ${{NAME}} (use $$ for a literal $)",
                entry=entry,
                field=field,
            )
        name = braced or bare
        if name not in environ:
            raise InputError(
                file,
                f"environment variable '{name}' is not set (export it or put it in the agent's .env)",
                entry=entry,
                field=field,
            )
        return environ[name]

    return _VAR.sub(replace, value)


def _env_values(section: dict[str, Any], environ: Mapping[str, str], file: str, entry: str) -> None:
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


def _judge_scope(judge: dict[str, Any], environ: Mapping[str, str]) -> Mapping[str, str]:
    provider, api_key_env = judge.get("provider"), judge.get("api_key_env")
    if isinstance(provider, str) and isinstance(api_key_env, str):
        return map_judge_key(environ, provider, api_key_env)
    return environ


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
    data = read_yaml(path)
    if data is None:
        raise InputError(file, "the file is empty; it needs at least a `models:` list", entry=TOP_LEVEL, field="models")
    if not isinstance(data, dict):
        raise InputError(file, f"the top level must be a mapping (evaluation, judge, models, agent), got {kind(data)}")
    for key in data:
        if key in SET_BY_LOADER:
            raise InputError(
                file,
                f"'{key}' is not set in eval.yaml: the pipeline sets it (the agent folder)",
                entry=TOP_LEVEL,
                field=key,
            )
    data = lenient_sections(dict(data), file)
    data["models"] = normalize_models(data.get("models"), file)
    warnings = drop_unknown_keys(data, EvalConfig, file, _config_location)
    if environ is None:
        environ = project_environ(agent_dir)

    if isinstance(data["models"], list):
        for index, model in enumerate(data["models"]):
            _env_values(model, environ, file, f"models[{index}]")
    if data["models"] is None:
        del data["models"]
    for section in ("judge", "simulated_user", "agent"):
        if isinstance(data.get(section), dict):
            data[section] = dict(data[section])
            if isinstance(data[section].get("env"), dict):
                data[section]["env"] = dict(data[section]["env"])
            # judge.env sees the judge's own environment: api_key_env already copied onto
            # the provider's variable (engine.environment.judge_environment); so does the
            # simulated user's, which is asked the same way.
            scope = environ if section == "agent" else _judge_scope(data[section], environ)
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
            {**data, "agent_dir": agent_dir, "source": path, "warnings": warnings}, strict=False
        )
    except ValidationError as exc:
        error, more = first_error(exc)
        entry, field = _config_location(tuple(error["loc"]))
        message = explain(error, EvalConfig, json_words=False)
        if error["loc"] == ("models",) and error["type"] in ("missing", "too_short"):
            message = 'no models: list at least one, e.g. `models: ["ollama:llama3"]`'
        message += more_problems(more)
        raise InputError(file, message, entry=entry, field=field) from None
    check_config(config, file)
    if config.judge is not None and config.judge.rubrics is not None:
        config.judge.rubrics = resolve_rubric_names(config.judge.rubrics, agent_dir, file, "rubrics", entry="judge")
    load_project_scorers(config)
    return config
