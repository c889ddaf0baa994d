"""The scripted model server as a process, and `{scripted_llm}` in eval.yaml: what both the
resource (scripted_llm) and `bat-pipeline run`, before it imports Dagster, use.

An eval.yaml asks for the server by writing `{scripted_llm}` in a value that names a model
server: `judge.base_url`, `judge.env`, a model's `base_url` or `env`, `agent.env`; an
AgentV target its `base_url` (an LLM target, or the model of an a2a target) or `env`. Each
`{scripted_llm}` becomes the server's address, `http://127.0.0.1:<port>` (no trailing
slash: write `"{scripted_llm}/v1"` for an OpenAI client); `simulated_user.base_url` and
`simulated_user.env` too. The server speaks the OpenAI,
Anthropic and Ollama APIs, answers per model name (`competent`, `sloppy`, `judge`) and
takes any API key.
"""

from __future__ import annotations

import select
import subprocess
import sys
import time

from bat_pipeline.engine.contracts import EvalConfig, ModelSpec
from bat_pipeline.engine.contracts.agentv import AgentvTarget
from bat_pipeline.resources.process_group import prepare_child, stop_process_group

PLACEHOLDER = "{scripted_llm}"
URL_VAR = "BAT_DEMO_LLM_URL"
"""An already running scripted server's address: when set, runs use it and start none."""
START_TIMEOUT_S = 30.0
STOP_GRACE_S = 5.0


class ScriptedLlmStartError(RuntimeError):
    """The server exited, or did not say where it listens within START_TIMEOUT_S."""


def start_scripted_llm(
    extra_args: list[str] | None = None, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen, str]:
    """A scripted model server on a free 127.0.0.1 port, in its own process group, and its
    base URL. It gets SIGTERM when the thread that started it ends (Linux), so start it
    from a thread that lives as long as the server is needed; stop it with
    `stop_process_group`."""
    process = subprocess.Popen(
        [sys.executable, "-m", "bat_pipeline.example.scripted_llm", "--port", "0", *(extra_args or [])],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
        preexec_fn=prepare_child,
        env=env,
    )
    deadline = time.monotonic() + START_TIMEOUT_S
    assert process.stdout is not None
    # It prints one line, `LISTENING <url>`, once it accepts connections, and nothing after.
    while (remaining := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([process.stdout], [], [], remaining)
        if not ready:
            break
        line = process.stdout.readline()
        if not line:
            break
        if line.startswith("LISTENING "):
            return process, line.split(" ", 1)[1].strip()
    stop_process_group(process, STOP_GRACE_S)
    raise ScriptedLlmStartError(
        f"the scripted model server did not start (exit code {process.returncode}, "
        f"waited up to {START_TIMEOUT_S:.0f} s for its address)"
    )


def _fill(value: str | None, url: str) -> str | None:
    return value.replace(PLACEHOLDER, url) if value else value


def _fill_env(env: dict[str, str], url: str) -> dict[str, str]:
    return {name: value.replace(PLACEHOLDER, url) for name, value in env.items()}


def uses_scripted_llm(config: EvalConfig) -> bool:
    """Whether any value `with_scripted_llm` fills holds `{scripted_llm}`."""
    values = [*config.agent.env.values()]
    for model in config.models:
        values += [model.base_url or "", *model.env.values(), *_target_values(model.target)]
    for llm in (config.judge, config.simulated_user):
        if llm is not None:
            values += [llm.base_url or "", *llm.env.values()]
    return any(PLACEHOLDER in value for value in values)


def _target_values(target: AgentvTarget | None) -> list[str]:
    if target is None:
        return []
    values = [target.llm.base_url or ""] if target.llm is not None else []
    if target.a2a is not None:
        values += [target.a2a.base_url or "", *target.a2a.model_env.values(), *target.a2a.agent.env.values()]
    return values


def _fill_model(model: ModelSpec, url: str) -> ModelSpec:
    update: dict = {"base_url": _fill(model.base_url, url), "env": _fill_env(model.env, url)}
    target = model.target
    if target is not None and target.llm is not None:
        update["target"] = target.model_copy(
            update={"llm": target.llm.model_copy(update={"base_url": _fill(target.llm.base_url, url)})}
        )
    elif target is not None and target.a2a is not None:
        a2a = target.a2a
        agent = a2a.agent.model_copy(update={"env": _fill_env(a2a.agent.env, url)})
        update["target"] = target.model_copy(
            update={
                "a2a": a2a.model_copy(
                    update={
                        "base_url": _fill(a2a.base_url, url),
                        "model_env": _fill_env(a2a.model_env, url),
                        "agent": agent,
                    }
                )
            }
        )
    return model.model_copy(update=update)


def with_scripted_llm(config: EvalConfig, url: str) -> EvalConfig:
    """`config` with every `{scripted_llm}` replaced by `url` (see the module's docstring);
    the partition keys, and everything else, stay as they were."""
    url = url.rstrip("/")
    update: dict = {
        "agent": config.agent.model_copy(update={"env": _fill_env(config.agent.env, url)}),
        "models": [_fill_model(m, url) for m in config.models],
    }
    for name in ("judge", "simulated_user"):
        llm = getattr(config, name)
        if llm is not None:
            update[name] = llm.model_copy(update={"base_url": _fill(llm.base_url, url), "env": _fill_env(llm.env, url)})
    return config.model_copy(update=update)
