"""The targets of an AgentV eval file (SPEC §12, §13): which are evaluated and how each is
defined.

Which: the seed's `providers:` (a list of names, or a mapping of definitions), 4.x
`execution.target(s)` / `target`; with none named, a 4.x file runs `default` when it is
defined (as AgentV 4.42.4), else every target defined. Where the definitions come from,
first found wins per name: the `providers:` mapping of the file, `--providers FILE`,
`agentv-providers.yaml` beside the file, then `.agentv/targets.yaml` and
`.agentv/providers.yaml` searched upward from the file's folder (also `.agentv/targets.yml`).

A target that says `use_target: NAME` (or `use_target: ${{ VAR }}`, the name read from the
environment) is the target it names, followed through chains as AgentV 4.42.4 follows
them (`resolve_use_target`); it keeps its own name. `${{ VAR }}` values come from the shell,
else the `.env` files from the eval file's folder up to the repository root, the nearest
winning (`agentv_environ`, AgentV's `loadEnvFromHierarchy`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bat_pipeline.engine.config.files import read_yaml
from bat_pipeline.engine.config.messages import kind
from bat_pipeline.engine.contracts.agentv import AgentvFormat, AgentvTarget, Healthcheck
from bat_pipeline.engine.datasets.agentv_agents import (
    LLM_PROVIDERS,
    LLM_TIMEOUT_S,
    PROVIDER_ALIASES,
    REFUSED_HINTS,
    a2a_agent,
    api_key_variable,
    llm_model,
    validated,
)
from bat_pipeline.engine.environment import dotenv_hierarchy
from bat_pipeline.engine.errors import InputError

BESIDE = "agentv-providers.yaml"
UPWARD = (Path(".agentv") / "targets.yaml", Path(".agentv") / "targets.yml", Path(".agentv") / "providers.yaml")
RUN_PROVIDERS = ("cli", "a2a", *LLM_PROVIDERS)
"""Target kinds this release runs; others are refused by name before a run starts."""
_VAR = re.compile(r"\$\{\{\s*([A-Za-z_]\w*)\s*\}\}|\{\{\s*env\.([A-Za-z_]\w*)\s*\}\}")
"""`${{ VAR }}` (4.x) and `{{ env.VAR }}` (newer provider files)."""
_USE_TARGET_VAR = re.compile(r"^\$\{\{\s*([A-Za-z0-9_]+)\s*\}\}$")
"""A `use_target` that is one `${{ VAR }}` and nothing else (AgentV's USE_TARGET_ENV_PATTERN)."""
MAX_USE_TARGET_DEPTH = 10
"""AgentV 4.42.4 follows at most 10 `use_target` steps (providers/targets.ts)."""
OPTIONAL_ENV_FIELDS = ("cwd", "healthcheck.cwd")
"""Fields AgentV reads with `optionalEnv`: an unset `${{ VAR }}` leaves the field out (the
eval file's folder is used) instead of refusing the target."""
DEFAULT_TARGET = "default"
"""The target a 4.x file runs when it names none (AgentV's `pickTargetName`)."""


@dataclass(frozen=True)
class TargetOptions:
    """What the command line adds to the file."""

    providers_file: Path | None = None
    """`--providers FILE`: target definitions."""
    threshold: float | None = None
    """`--threshold`: replaces the file's."""
    environ: Mapping[str, str] | None = None
    """For `${{ VAR }}`; default os.environ."""
    trust_datasets: bool = False
    """`--trust-datasets`: script graders of an external tests file are taken (engine.datasets.trust)."""


def load_targets(
    data: Mapping[str, Any], path: Path, fmt: AgentvFormat, options: TargetOptions
) -> tuple[list[AgentvTarget], list[str]]:
    """The targets the file evaluates, in the order it names them, and warnings."""
    file = str(path)
    environ = agentv_environ(path, options)
    defined = defined_targets(data, path, options)
    named: list[str] = []
    providers = data.get("providers")
    if isinstance(providers, dict):
        named = [str(n) for n in providers]
    elif providers is not None:
        named = _names(providers, file, "providers")
    execution: dict[str, Any] = data["execution"] if isinstance(data.get("execution"), dict) else {}
    for field, value in (
        ("execution.targets", execution.get("targets")),
        ("execution.target", execution.get("target")),
        ("target", data.get("target")),
    ):
        if value is not None and not named:
            named = _names(value, file, field)
    if not named:
        named = [DEFAULT_TARGET] if fmt == "v4" and DEFAULT_TARGET in defined else list(defined)
    if not named:
        raise InputError(
            file,
            "no targets: name them under `providers:` (seed format) or `execution.target` and "
            f"define them in the file, {BESIDE} beside it, .agentv/targets.yaml or --providers FILE",
        )
    targets = []
    for name in dict.fromkeys(named):
        if name not in defined:
            raise InputError(
                file,
                f"target '{name}' is not defined (looked in the file's providers mapping, "
                f"--providers, {BESIDE} beside the file and .agentv/targets.yaml upward)",
                field="providers" if fmt == "seed" else "execution.target",
            )
        body, where = resolve_use_target(name, defined, environ)
        if body.get("provider") in PROVIDER_ALIASES:
            body = {**body, "provider": PROVIDER_ALIASES[body["provider"]]}
        # The key stays a variable's name: its value is read when the partition runs.
        key_variable = api_key_variable(body, where) if body.get("provider") in LLM_PROVIDERS else None
        body = {k: v for k, v in body.items() if k not in ("api_key", "apiKey")}
        body = {k: v for k, v in body.items() if k not in ("use_target", "name")}
        _runnable(name, body, where)
        targets.append(_target(name, _expand(body, environ, where), path, where, key_variable, fmt))
    return targets, []


def agentv_environ(path: Path, options: TargetOptions) -> dict[str, str]:
    """The variables `${{ VAR }}` reads for the eval file at `path` (engine.environment's
    dotenv_hierarchy of its folder, the shell being `options.environ`, default os.environ)."""
    return dotenv_hierarchy(path.parent, options.environ)


def resolve_use_target(
    name: str, defined: Mapping[str, tuple[dict[str, Any], str]], environ: Mapping[str, str]
) -> tuple[dict[str, Any], str]:
    """The definition target `name` stands for: its own, or, when it says `use_target`,
    the one that names, followed until a definition without `use_target` (at most
    MAX_USE_TARGET_DEPTH steps). A `${{ VAR }}` that is unset, a name not defined and a
    cycle are refused, naming the targets involved."""
    body, where = defined[name]
    chain = [name]
    for _ in range(MAX_USE_TARGET_DEPTH):
        raw = body.get("use_target")
        if raw is None:
            return body, where
        if not isinstance(raw, str):
            raise InputError(where, f"use_target names a target, got {kind(raw)}", field="use_target")
        written = raw.strip()
        variable = _USE_TARGET_VAR.match(written)
        target = (environ.get(variable.group(1)) or "").strip() if variable else written
        if not target:
            if variable:
                raise InputError(
                    where,
                    f"target '{chain[-1]}' uses use_target: {written}, but {variable.group(1)} is not set: "
                    "set it (in the shell or a .env) to the name of a target",
                    field="use_target",
                )
            raise InputError(where, f"target '{chain[-1]}' has an empty use_target: name a target", field="use_target")
        if target not in defined:
            via = f" ({written} is '{target}')" if variable else ""
            raise InputError(
                where,
                f"target '{chain[-1]}' uses use_target '{target}'{via}, and no target of that name is defined "
                f"(defined: {', '.join(defined)})",
                field="use_target",
            )
        if target in chain:
            raise InputError(
                where,
                f"use_target cycle: {' -> '.join([*chain, target])}: point one of them at a target with a `provider`",
                field="use_target",
            )
        chain.append(target)
        body, where = defined[target]
    raise InputError(
        where,
        f"target '{name}' follows more than {MAX_USE_TARGET_DEPTH} use_target steps ({' -> '.join(chain)})",
        field="use_target",
    )


def defined_targets(
    data: Mapping[str, Any], path: Path, options: TargetOptions
) -> dict[str, tuple[dict[str, Any], str]]:
    """Every target definition the file can use, by name: (its fields as written, where it
    is written); the first found per name wins (module docstring)."""
    file = str(path)
    defined: dict[str, tuple[dict[str, Any], str]] = {}
    providers = data.get("providers")
    if isinstance(providers, dict):
        for name, body in providers.items():
            defined.setdefault(str(name), (_body(body, file, f"providers.{name}"), f"{file}, providers.{name}"))
    sources = [options.providers_file] if options.providers_file else []
    sources += [path.parent / BESIDE, *_upward(path.parent)]
    for source in sources:
        if source is not None and Path(source).is_file():
            for name, body, where in _definitions(Path(source)):
                defined.setdefault(name, (body, where))
    if options.providers_file is not None and not Path(options.providers_file).is_file():
        raise InputError(str(options.providers_file), "providers file not found (--providers)")
    execution = data.get("execution")
    refs = execution.get("targets") if isinstance(execution, dict) else None
    for i, ref in enumerate(refs if isinstance(refs, list) else []):
        # as AgentV: `{name, use_target}` in the eval file stands for the target it names
        if isinstance(ref, dict) and isinstance(ref.get("use_target"), str) and ref.get("name"):
            defined.setdefault(str(ref["name"]), ({"use_target": ref["use_target"]}, f"{file}, execution.targets[{i}]"))
    return defined


def expand(value: Any, environ: Mapping[str, str], where: str, field: str = "") -> Any:
    """`_expand` for other readers of target definitions (the judge target)."""
    return _expand(value, environ, where, field)


def _names(value: Any, file: str, field: str) -> list[str]:
    items = value if isinstance(value, list) else [value]
    names = []
    for item in items:
        if isinstance(item, str):
            names.append(item)
        elif isinstance(item, dict) and any(k in item for k in ("name", "id", "label")):
            names.append(str(item.get("name") or item.get("id") or item.get("label")))
        else:
            raise InputError(file, f"expected target names, got {kind(item)}", field=field)
    return names


def _body(body: Any, file: str, entry: str) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise InputError(file, f"a target definition is a mapping, got {kind(body)}", entry=entry)
    config = body.get("config")
    return {**body, **config} if isinstance(config, dict) else dict(body)


def _definitions(source: Path) -> list[tuple[str, dict[str, Any], str]]:
    """Every definition of a targets file: `targets:`/`providers:` as a list of
    `{name|id|label, ...}` or a mapping name → definition."""
    data = read_yaml(source, core_schema=True)
    items = data.get("targets", data.get("providers", data)) if isinstance(data, dict) else data
    out = []
    if isinstance(items, dict):
        for name, body in items.items():
            out.append((str(name), _body(body, str(source), str(name)), f"{source}, {name}"))
    elif isinstance(items, list):
        for i, body in enumerate(items):
            body = _body(body, str(source), f"targets[{i}]")
            name = body.get("name") or body.get("id") or body.get("label")
            if not name:
                raise InputError(str(source), "a target needs a `name`", entry=f"targets[{i}]")
            out.append((str(name), body, f"{source}, targets[{i}] ({name})"))
    else:
        raise InputError(str(source), f"expected `targets:` as a list, got {kind(items)}")
    return out


def _upward(folder: Path) -> list[Path]:
    """`.agentv/targets.yaml` and `.agentv/providers.yaml` in the folder and each parent:
    the nearest of each kind."""
    found = []
    for relative in UPWARD:
        for parent in [folder, *folder.parents]:
            if (parent / relative).is_file():
                found.append(parent / relative)
                break
    return found


def _expand(value: Any, environ: Mapping[str, str], where: str, field: str = "") -> Any:
    """`${{ VAR }}` and `{{ env.VAR }}` from the environment in every string; an unset
    variable is refused, naming the field it is in."""
    if isinstance(value, str):

        def one(match: re.Match[str]) -> str:
            name = match.group(1) or match.group(2)
            if name not in environ:
                raise InputError(
                    where,
                    f"{match.group(0)} is not set: set {name} in the shell or a .env beside the eval file "
                    "(or in a folder above it)",
                    field=field or None,
                )
            return environ[name]

        return _VAR.sub(one, value)
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            at = f"{field}.{k}" if field else str(k)
            if at in OPTIONAL_ENV_FIELDS and isinstance(v, str) and _unset(v, environ):
                continue  # as AgentV's optionalEnv: the field is left out
            out[k] = _expand(v, environ, where, at)
        return out
    if isinstance(value, list):
        return [_expand(v, environ, where, f"{field}[{i}]") for i, v in enumerate(value)]
    return value


def _runnable(name: str, body: Mapping[str, Any], where: str) -> None:
    """Refuse, before its fields are read, a target of a kind this release cannot run."""
    provider = str(body.get("provider") or "")
    if not provider:
        raise InputError(
            where,
            f"target '{name}' has no `provider` (nor `use_target` naming a target that has one): "
            f"add one of {', '.join(RUN_PROVIDERS)}",
            field="provider",
        )
    if provider not in RUN_PROVIDERS:
        hint = f"; {REFUSED_HINTS[provider]}" if provider in REFUSED_HINTS else ""
        raise InputError(
            where,
            f"target '{name}': provider '{provider}' cannot be run yet "
            f"(this release runs: {', '.join(RUN_PROVIDERS)}){hint}",
            field="provider",
        )


_WHOLE_VAR = re.compile(r"^\$\{\{\s*([A-Za-z_]\w*)\s*\}\}$")
_ONE_VAR = re.compile(r"\$\{\{\s*([A-Za-z_]\w*)\s*\}\}")
_PLAIN_NUMBER = re.compile(r"^-?(?:0|[1-9]\d*)(?:\.\d+)?$")


def interpolate_env(value: Any, environ: Mapping[str, str]) -> Any:
    """A 4.x eval file's (or external tests file's) values with `${{ VAR }}` filled, as
    AgentV 4.42.4's interpolateEnv: an unset variable is empty; a value that is one
    `${{ VAR }}` alone becomes true / false / a number when the variable reads so."""
    if isinstance(value, str):
        whole = _WHOLE_VAR.match(value)
        if whole:
            text = environ.get(whole.group(1), "")
            if text in ("true", "false"):
                return text == "true"
            if _PLAIN_NUMBER.match(text):
                number = float(text)
                return int(number) if number.is_integer() else number
            return text
        return _ONE_VAR.sub(lambda m: environ.get(m.group(1), ""), value)
    if isinstance(value, list):
        return [interpolate_env(v, environ) for v in value]
    if isinstance(value, dict):
        return {k: interpolate_env(v, environ) for k, v in value.items()}
    return value


def _unset(value: str, environ: Mapping[str, str]) -> bool:
    return any((m.group(1) or m.group(2)) not in environ for m in _VAR.finditer(value))


def _target(
    name: str, body: dict[str, Any], path: Path, where: str, key_variable: str | None, fmt: AgentvFormat
) -> AgentvTarget:
    provider = str(body.get("provider") or "")
    common: dict[str, Any] = {
        "name": name,
        "provider": provider,
        "cwd": path.parent,
        "workers": body.get("workers"),
        "source": where,
    }
    if provider == "a2a":
        return validated(where, lambda: AgentvTarget(**common, a2a=a2a_agent(body, path.parent, where)))
    if provider in LLM_PROVIDERS:
        timeout = float(body.get("timeout_seconds", body.get("timeout_s", LLM_TIMEOUT_S)))
        return validated(
            where, lambda: AgentvTarget(**common, llm=llm_model(body, key_variable, where, fmt), timeout_s=timeout)
        )
    command = body.get("command", body.get("command_template"))
    if not isinstance(command, (str, list)) or not command:
        raise InputError(where, "a cli target needs a `command`", field="command")
    cwd = _folder(body.get("cwd"), path.parent)
    timeout = body.get("timeout_seconds", body.get("timeout_s", 300))
    try:
        return AgentvTarget(
            name=name,
            provider=provider,
            command=command,
            cwd=cwd,
            timeout_s=float(timeout),
            batch=bool(body.get("batch_requests", body.get("provider_batching", False))),
            workers=body.get("workers"),
            env={str(k): str(v) for k, v in (body.get("env") or {}).items()},
            files_format=_files_format(body, where),
            # AgentV 4.42.4 resolves a healthcheck's cwd against the eval file's folder, as the
            # target's (normalizeCliHealthcheck); the seed's provider files against the target's.
            healthcheck=_healthcheck(body.get("healthcheck"), command, cwd, where, path.parent if fmt == "v4" else cwd),
            source=where,
        )
    except (ValidationError, ValueError, TypeError) as exc:
        raise InputError(where, str(exc).splitlines()[0]) from None


def _files_format(body: Mapping[str, Any], where: str) -> str | None:
    value = body.get("files_format", body.get("attachments_format"))
    if value is not None and not isinstance(value, str):
        raise InputError(
            where, f"files_format is a template such as '--file {{path}}', got {kind(value)}", field="files_format"
        )
    return value


def _folder(value: Any, base: Path) -> Path:
    if not value:
        return base
    folder = Path(str(value)).expanduser()
    return (folder if folder.is_absolute() else base / folder).resolve()


def _healthcheck(value: Any, command: str | list[str], cwd: Path, where: str, base: Path) -> Healthcheck | None:
    """A command (text or argv), `true` (the target's program with `--healthcheck`), both
    run in the target's `cwd`, or `{command, cwd, timeout_seconds}` (its `cwd` relative to
    `base`, default `base`) / `{url}`."""
    if value is None or value is False:
        return None
    if value is True:
        return Healthcheck(command=[*program(command), "--healthcheck"], cwd=cwd)
    if isinstance(value, (str, list)):
        return Healthcheck(command=value, cwd=cwd)
    if isinstance(value, dict) and ("command" in value or "command_template" in value or "url" in value):
        return Healthcheck(
            command=value.get("command", value.get("command_template")),
            url=value.get("url"),
            cwd=_folder(value.get("cwd"), base),
            timeout_s=float(value.get("timeout_seconds") or value.get("timeout_s") or 60),
        )
    raise InputError(
        where, "healthcheck is a command, true, or {command, cwd, timeout_seconds} / {url}", field="healthcheck"
    )


def program(command: str | list[str]) -> list[str]:
    """The words of a command before its first option or placeholder: `python3 run.py`
    of `python3 run.py --eval {EVAL_FILE}`."""
    words = shlex.split(command) if isinstance(command, str) else list(command)
    out = []
    for word in words:
        if word.startswith("-") or "{" in word:
            break
        out.append(word)
    return out or words[:1]
