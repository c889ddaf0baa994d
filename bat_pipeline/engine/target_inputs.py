"""What an A2A or LLM target is given, from an AgentV test and target (SPEC §12, issue 15
point 2): the chat messages of a test, its conversation turns, an A2A target as the
agent partition bat-cli would run, and where an LLM target's key is.

The messages: a 4.x test's `input`, or a seed test whose prompt is its input as it is
(`prompts: ["{{ input }}"]`); a seed test rendered through another template is one user
message, the rendered prompt. An A2A conversation has one turn, the prompt, unless those
messages hold several user messages: then each is a turn; system messages (A2A has none)
go before the first turn, assistant messages are left out (the agent gives its own
answers).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from bat_pipeline.engine.contracts.agentv import AgentvCase, AgentvTarget, Message
from bat_pipeline.engine.contracts.config import EvalConfig, EvaluationSettings, ModelSpec
from bat_pipeline.engine.datasets.agentv import content_text, messages_text
from bat_pipeline.engine.datasets.agentv_content import llm_messages
from bat_pipeline.engine.environment import (
    KEY_FALLBACK_ENV,
    MODEL_KEY_ENV,
    agent_environment,
    dotenv_hierarchy,
    find_dotenv,
    read_dotenv,
)
from bat_pipeline.engine.errors import InputError
from bat_pipeline.engine.redaction import looks_secret

CHAT_ROLES = ("system", "user", "assistant")


def case_messages(case: AgentvCase) -> list[Message]:
    """The test's input as chat messages (module docstring)."""
    if case.format == "v4" or case.prompt == messages_text(case.input):
        return list(case.input)
    return [Message(role="user", content=case.prompt)]


def chat_messages(case: AgentvCase) -> list[dict[str, str]]:
    """The messages an LLM target is sent: a 4.x test's as AgentV 4.42.4 sends them (its
    file parts' text embedded, engine.datasets.agentv_content.llm_messages); a seed test's
    `case_messages` as text (structured content as JSON), roles other than system and
    assistant sent as user."""
    if case.format == "v4":
        return llm_messages(case.input)
    return [
        {"role": m.role if m.role in CHAT_ROLES else "user", "content": content_text(m.content)}
        for m in case_messages(case)
    ]


def case_turns(case: AgentvCase) -> list[str]:
    """The turns of the test's conversation: one turn, the prompt (what a cli target gets
    as {PROMPT}), unless the messages hold several user messages: then those (module
    docstring)."""
    items = case_messages(case)
    turns = [content_text(m.content) for m in items if m.role not in ("system", "assistant")]
    if len(turns) < 2:
        return [case.prompt]
    system = "\n\n".join(content_text(m.content) for m in items if m.role == "system")
    if system:
        turns[0] = f"{system}\n\n{turns[0]}"
    return turns


def agent_partition(config: EvalConfig, model_key: str) -> tuple[EvalConfig, ModelSpec]:
    """The evaluation and the model an agent partition is started and talked to with: the
    partition's own for a BAT agent; for an AgentV `provider: a2a` target, its agent
    folder (or URL), the model the agent runs on and the agent's timings, the rest of the
    AgentV evaluation kept. The partition keeps its key."""
    model = config.model(model_key)
    target = model.target
    if target is None or target.a2a is None:
        return config, model
    a2a = target.a2a
    settings: EvaluationSettings = config.evaluation.model_copy(
        update={
            "agent_startup_timeout_s": a2a.startup_timeout_s,
            "agent_shutdown_timeout_s": a2a.shutdown_timeout_s,
            "turn_timeout_s": a2a.turn_timeout_s,
            "spans_settle_s": a2a.spans_settle_s,
            "extra_spans": list(a2a.extra_spans),
        }
    )
    spec = ModelSpec(
        provider=a2a.model_provider or "openai",
        model=a2a.model or target.name,
        base_url=a2a.base_url,
        env=dict(a2a.model_env),
        key=model_key,
    )
    agent_config = config.model_copy(
        update={"agent": a2a.agent, "agent_dir": a2a.folder, "evaluation": settings, "models": [spec]}
    )
    return agent_config, spec


def starts_agent(model: ModelSpec) -> bool:
    """Whether the partition talks to an agent over A2A (a BAT agent, or an a2a target)."""
    return model.target is None or model.target.a2a is not None


def llm_key_variable(target: AgentvTarget) -> str | None:
    """Where an LLM target's key is read: its `api_key` variable, else the provider's
    usual one (OPENAI_API_KEY, ANTHROPIC_API_KEY, OLLAMA_API_KEY, ...)."""
    assert target.llm is not None
    return target.llm.api_key_env or MODEL_KEY_ENV.get(target.provider)


def llm_key(target: AgentvTarget, environ: Mapping[str, str], looked_in: str) -> str | None:
    """The key of an LLM target from `environ`; None for a provider that runs without one
    (ollama) when none is set. InputError naming the variable and `looked_in`, never a
    value, when it is needed and missing."""
    variable = llm_key_variable(target)
    value = environ.get(variable) if variable else None
    if value:
        return value
    named = target.llm is not None and target.llm.api_key_env
    fallbacks = () if named else KEY_FALLBACK_ENV.get(target.provider, ())
    for name in fallbacks:
        if environ.get(name):
            return environ[name]
    if target.provider == "ollama" and not (target.llm and target.llm.api_key_env):
        return None
    raise InputError(
        target.source,
        f"target '{target.name}' ({target.provider}:"
        f"{target.llm.model if target.llm else ''}) needs an API key in "
        f"{' or '.join([str(variable), *fallbacks])}, and it is not "
        f"set: looked in {looked_in}",
        field="api_key",
    )


def target_keys_looked_in(folder: Path) -> str:
    """Where an LLM target's key is looked for (agentv_targets.folder_environ), in words."""
    return f"the shell and the .env files from {folder} up to the repository root"


def require_target_keys(config: EvalConfig, shell: Mapping[str, str] | None = None) -> None:
    """Refuse, before anything starts, an LLM target without its key (InputError)."""
    environ = dotenv_hierarchy(config.agent_dir, shell)
    looked_in = target_keys_looked_in(config.agent_dir)
    for model in config.models:
        if model.target is not None and model.target.llm is not None:
            llm_key(model.target, environ, looked_in)


def target_secrets(config: EvalConfig, shell: Mapping[str, str]) -> list[str]:
    """The secrets AgentV targets add to an evaluation's: each LLM target's key, and for an
    a2a agent folder the secret-named values of its `.env`, its `agent.env` and its
    model's `env`, and the model provider's key as its agent gets it."""
    values: list[str] = []
    for model in config.models:
        target = model.target
        if target is not None and target.llm is not None:
            variable = llm_key_variable(target)
            found = dotenv_hierarchy(config.agent_dir, shell).get(variable) if variable else None
            values += [found] if found else []
        elif target is not None and target.a2a is not None:
            agent_config, spec = agent_partition(config, model.partition_key)
            environ = agent_environment(agent_config, spec, base_env=shell)
            named = [*read_dotenv(find_dotenv(agent_config.agent_dir)), *agent_config.agent.env, *spec.env]
            values += [environ[n] for n in named if looks_secret(n) and environ.get(n)]
            provider_key = MODEL_KEY_ENV.get(spec.provider)
            values += [environ[provider_key]] if provider_key and environ.get(provider_key) else []
    return values
