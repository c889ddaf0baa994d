"""The fields of AgentV targets that are not commands (SPEC §12, issue 15 point 2): an A2A
agent (`provider: a2a`) and a plain LLM (`provider: openai | anthropic | ollama | ...`).

AgentV 4.42 has no A2A target; its fields here are ours, named after bat-cli's `agent:`
block. LLM targets take AgentV 4.x's fields: `model` (or `deployment` / `variant`),
`base_url` (or `endpoint`), `api_key: ${{ VAR }}`, `temperature`, `max_output_tokens`,
`max_retries`, `timeout_seconds`.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypedDict, TypeVar

from pydantic import ValidationError

from bat_pipeline.engine.agent_folder import EVAL_FILE, detect_layout
from bat_pipeline.engine.config.eval_file import load_eval_config
from bat_pipeline.engine.config.messages import kind
from bat_pipeline.engine.contracts.agent import AgentTarget
from bat_pipeline.engine.contracts.agentv import A2aAgent, AgentvFormat, LlmModel
from bat_pipeline.engine.contracts.config import PROVIDERS, EvaluationSettings
from bat_pipeline.engine.errors import InputError

T = TypeVar("T")

LLM_PROVIDERS = PROVIDERS
"""The judge's providers, run as plain LLM targets through the same wire formats."""
REFUSED_HINTS = {
    "azure": "use `provider: openai` with the deployment's `base_url` (its /openai/v1 endpoint)",
    "azure-openai": "use `provider: openai` with the deployment's `base_url` (its /openai/v1 endpoint)",
    "openrouter": "use `provider: openai` with `base_url: https://openrouter.ai/api/v1`",
}
"""What to write instead, for kinds that have an OpenAI-compatible way in."""
LLM_TIMEOUT_S = 120.0
URL_SPANS_SETTLE_S = 2.0
"""How long the span files of an agent at a `url` must be quiet before they are read
(`spans_settle_seconds`): it exports while it keeps running, not when it stops."""
KEY_VARIABLE = re.compile(
    r"^\s*(?:\$\{\{\s*([A-Za-z_]\w*)\s*\}\}|\{\{\s*env\.([A-Za-z_]\w*)\s*\}\}"
    r"|([A-Z_][A-Z0-9_]*))\s*$"
)
"""How a targets file names the variable holding a key: `${{ VAR }}` (4.x), `{{ env.VAR }}`
(newer provider files) or the bare upper-case name; anything else is taken for a key."""
PROVIDER_ALIASES = {"openai-compatible": "openai"}


def api_key_variable(body: dict[str, Any], where: str) -> str | None:
    """The variable an LLM target's key is in: `api_key` (`apiKey`) as KEY_VARIABLE reads
    it, or `api_key_env: VAR`. A key written in the file is refused, as AgentV 4.42 refuses
    it: files get shared."""
    raw = body.get("api_key", body.get("apiKey"))
    if raw is None:
        named = body.get("api_key_env")
        if named is not None and (not isinstance(named, str) or not re.fullmatch(r"[A-Za-z_]\w*", named)):
            raise InputError(where, f"api_key_env names a variable, got {named!r}", field="api_key_env")
        return named
    match = KEY_VARIABLE.match(raw) if isinstance(raw, str) else None
    if match is None:
        raise InputError(
            where,
            "write the key as `api_key: ${{ VARIABLE }}` and set the variable in the "
            "environment or the .env beside the eval file; a key is never written in the file",
            field="api_key",
        )
    return next(group for group in match.groups() if group)


def llm_model(body: dict[str, Any], key_variable: str | None, where: str, fmt: AgentvFormat) -> LlmModel:
    """The model of an LLM target; `model` (or `deployment`, `variant`) is required. In a
    4.x file an `openai` base URL gets `/v1` unless it ends so, as AgentV 4.42 does."""
    model = body.get("model", body.get("deployment", body.get("variant")))
    if not isinstance(model, str) or not model.strip():
        raise InputError(where, f"an LLM target needs a `model`, got {kind(model)}", field="model")
    base_url = body.get("base_url", body.get("endpoint", body.get("baseUrl")))
    if fmt == "v4" and body.get("provider") == "openai" and isinstance(base_url, str):
        base_url = base_url.strip().rstrip("/")
        if not base_url.endswith("/v1") and not re.search(r"\.openai\.azure\.com/openai/deployments/[^/]+$", base_url):
            base_url += "/v1"
    try:
        return LlmModel(
            model=model.strip(),
            base_url=base_url,
            api_key_env=key_variable,
            temperature=body.get("temperature"),
            max_output_tokens=body.get("max_output_tokens", body.get("max_tokens")),
            max_retries=body.get("max_retries", 4),
        )
    except ValidationError as exc:
        error = exc.errors()[0]
        raise InputError(where, error["msg"], field=".".join(map(str, error["loc"]))) from None


def a2a_agent(body: dict[str, Any], eval_folder: Path, where: str) -> A2aAgent:
    """`url` (an agent already running; `spans` lists the span files it writes), or `agent`
    (an agent folder, relative to the eval file) started per partition as `bat-pipeline`
    starts a BAT agent: the folder's own `eval/eval.yaml` `agent:` block and timings are
    taken when it has one, and its first model is the model the agent runs on unless
    `model` (`provider:model`, or with `model_provider`) and `base_url` say otherwise.
    `command`, `cwd` and `env` of the target apply on top; `timeout_seconds` bounds each
    turn, `spans_settle_seconds` is how long the span files must be quiet before they are
    read."""
    url, folder_value = body.get("url"), body.get("agent", body.get("agent_dir"))
    if bool(url) == bool(folder_value):
        raise InputError(
            where,
            "an a2a target needs either `url` (an agent already running) or `agent` (an agent folder to start)",
            field="url" if url else "agent",
        )
    spans = [str(_path(s, eval_folder)) for s in _strings(body.get("spans"), where, "spans")]
    env = {str(k): str(v) for k, v in (body.get("env") or {}).items()}
    turn_timeout = body.get("timeout_seconds", body.get("turn_timeout_seconds"))
    if url:
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise InputError(where, f"url must be an http(s) URL, got {url!r}", field="url")
        return validated(
            where,
            lambda: A2aAgent(
                agent=AgentTarget(url=url.rstrip("/"), spans=spans),
                folder=eval_folder,
                turn_timeout_s=float(turn_timeout or 300),
                spans_settle_s=float(body.get("spans_settle_seconds", URL_SPANS_SETTLE_S)),
            ),
        )
    folder = _path(folder_value, eval_folder)
    if not folder.is_dir():
        raise InputError(where, f"agent folder not found: {folder}", field="agent")
    own = load_eval_config(folder) if (folder / EVAL_FILE).is_file() else None
    agent = own.agent if own is not None else AgentTarget()
    command = body.get("command")
    if isinstance(command, str):
        command = shlex.split(command)
    update: dict[str, Any] = {"env": {**agent.env, **env}, "spans": [*agent.spans, *spans]}
    if command:
        update["command"] = [str(c) for c in command]
    if body.get("cwd"):
        update["cwd"] = str(_path(body["cwd"], eval_folder))
    agent = agent.model_copy(update=update)
    if agent.command is None and detect_layout(folder).kind == "custom":
        raise InputError(
            where,
            f"{folder} is not a BAT agent folder (config.yaml, agent.json, pyproject.toml) and "
            "has no eval/eval.yaml saying how to start it: give the target a `command`",
            field="agent",
        )
    model = _agent_model(body, own, where)
    # A folder without an eval.yaml of its own gets the timings eval.yaml defaults to.
    settings = own.evaluation if own is not None else EvaluationSettings()
    return validated(
        where,
        lambda: A2aAgent(
            agent=agent,
            folder=folder,
            **model,
            startup_timeout_s=float(body.get("startup_timeout_seconds") or settings.agent_startup_timeout_s),
            shutdown_timeout_s=settings.agent_shutdown_timeout_s,
            turn_timeout_s=float(turn_timeout or settings.turn_timeout_s),
            spans_settle_s=float(body.get("spans_settle_seconds", settings.spans_settle_s)),
            extra_spans=[str(folder / s) for s in settings.extra_spans],
        ),
    )


class _AgentModel(TypedDict):
    """The fields of A2aAgent that say which model the agent runs on."""

    model_provider: str
    model: str
    base_url: str | None
    model_env: dict[str, str]


def _agent_model(body: dict[str, Any], own: Any, where: str) -> _AgentModel:
    """The model the agent runs on: the target's `model`, else the folder's first model."""
    first = own.models[0] if own is not None else None
    model = body.get("model")
    provider = body.get("model_provider")
    if isinstance(model, str) and provider is None and ":" in model:
        provider, model = model.split(":", 1)
    if model is None and first is not None:
        return _AgentModel(
            model_provider=first.provider,
            model=first.model,
            base_url=body.get("base_url", first.base_url),
            model_env=dict(first.env),
        )
    if not isinstance(model, str) or not model or provider not in PROVIDERS:
        raise InputError(
            where,
            "say which model the agent runs on: `model: provider:model` (provider one of "
            f"{', '.join(PROVIDERS)}), or an agent folder whose eval/eval.yaml lists models",
            field="model",
        )
    return _AgentModel(model_provider=str(provider), model=model, base_url=body.get("base_url"), model_env={})


def _strings(value: Any, where: str, field: str) -> list[str]:
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    if not all(isinstance(v, str) for v in items):
        raise InputError(where, f"expected paths, got {kind(value)}", field=field)
    return items


def _path(value: Any, base: Path) -> Path:
    path = Path(str(value)).expanduser()
    return (path if path.is_absolute() else base / path).resolve()


def validated(where: str, build: Callable[[], T]) -> T:
    """`build()`, its validation errors as an InputError on `where` (naming the field)."""
    try:
        return build()
    except InputError:
        raise
    except ValidationError as exc:
        error = exc.errors()[0]
        raise InputError(where, error["msg"], field=".".join(map(str, error["loc"])) or None) from None
    except (ValueError, TypeError) as exc:
        raise InputError(where, str(exc).splitlines()[0]) from None
