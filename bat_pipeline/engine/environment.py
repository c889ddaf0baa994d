"""The environments an evaluation hands out, as `bat eval` builds them (SPEC §2): the
agent's, one per model, and the judge's, which holds the judge's API key.

Both start from the project's environment: the agent project's `.env` (`find_dotenv`)
overlaid by the shell. Pure functions over mappings; reading the `.env` file is the only
input taken from outside, and only when no values are given.
"""

from __future__ import annotations

import io
import os
from collections.abc import Mapping
from pathlib import Path

from dotenv import dotenv_values

from bat_pipeline.engine.agent_folder import is_blueprint_root
from bat_pipeline.engine.contracts.config import EvalConfig, JudgeSettings, ModelSpec
from bat_pipeline.engine.errors import InputError

JUDGE_KEY_ENV: dict[str, str | None] = {
    "anthropic": "ANTHROPIC_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "nvidia": "NVIDIA_API_KEY",
    "ollama": None,
    "openai": "OPENAI_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "vertex": "GOOGLE_OAUTH_ACCESS_TOKEN",
}
"""Where each provider's client reads its key (bat-cli's own table); a local ollama needs
none. `judge.api_key_env` is copied onto this variable in the judge's environment. For
`vertex` the "key" is an OAuth access token (`gcloud auth print-access-token`)."""
KEY_FALLBACK_ENV: dict[str, tuple[str, ...]] = {
    "gemini": ("GOOGLE_API_KEY",),
    "vertex": ("CLOUDSDK_AUTH_ACCESS_TOKEN",),
}
"""Variables read, in order, when the provider's own one is unset: Google's SDKs take the
Google AI key from either name, gcloud its access token from CLOUDSDK_AUTH_ACCESS_TOKEN."""
VERTEX_PROJECT_ENV = "GOOGLE_CLOUD_PROJECT"
VERTEX_LOCATION_ENV = "GOOGLE_CLOUD_LOCATION"
"""Where a `vertex` model's project and location are read (Google's Gen AI SDK's names)."""
MODEL_KEY_ENV: dict[str, str | None] = {**JUDGE_KEY_ENV, "ollama": "OLLAMA_API_KEY"}
"""The variable an agent reads its model's key from, per MODEL_PROVIDER (a hosted ollama
takes one)."""

MINIMAL_SHELL_NAMES = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "LANG",
        "TZ",
        "TMPDIR",
        "TEMP",
        "TMP",
        "VIRTUAL_ENV",
        "REQUESTS_CA_BUNDLE",
        "CURL_CA_BUNDLE",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "NO_PROXY",
        "http_proxy",
        "https_proxy",
        "no_proxy",
        "SYSTEMROOT",
    }
)
"""What an isolated agent (`agent.inherit_env: false`) takes from the shell by name: what
`uv run` and an HTTP client need."""
MINIMAL_SHELL_PREFIXES = ("LC_", "UV_", "PYTHON", "SSL_CERT_")


class MissingJudgeKey(ValueError):
    """The judge is on and its API key is nowhere to be found; the message names the
    variable and where it was looked for, never a value."""


# ---------------------------------------------------------------------------------------
# The project's environment


def dotenv_path(agent_dir: Path) -> Path:
    """Where the project's `.env` is (or would be): the agent folder's own, else, for an
    agent of a blueprint, the blueprint root's (where `bat eval` reads it)."""
    agent_dir = Path(agent_dir)
    own = agent_dir / ".env"
    if not own.is_file() and is_blueprint_root(agent_dir.parent):
        return agent_dir.parent / ".env"
    return own


def find_dotenv(agent_dir: Path) -> Path | None:
    """The project's `.env` when it exists (see dotenv_path)."""
    path = dotenv_path(agent_dir)
    return path if path.is_file() else None


def read_dotenv(path: Path | None) -> dict[str, str]:
    """The variables of a `.env` file, values as written; {} for None. A name without a
    value (`NAME` alone on a line) is left out."""
    if path is None:
        return {}
    # interpolate=False: python-dotenv would fill `${VAR}` from os.environ, not from the
    # environment the caller passes in.
    # Read as every input file is (engine.config.files): bytes that are not UTF-8 are
    # refused naming the file and the offset, not a traceback. Imported here: engine.config
    # imports this module.
    from bat_pipeline.engine.config.files import read_text

    values = dotenv_values(stream=io.StringIO(read_text(path)), interpolate=False)
    return {name: value for name, value in values.items() if value is not None}


def project_environ(agent_dir: Path, shell: Mapping[str, str] | None = None) -> dict[str, str]:
    """The project's `.env` overlaid by the shell (`shell`, default `os.environ`): the shell
    wins, as under `bat eval`."""
    environ = read_dotenv(find_dotenv(agent_dir))
    environ.update(os.environ if shell is None else shell)
    return environ


def dotenv_hierarchy(folder: Path, shell: Mapping[str, str] | None = None) -> dict[str, str]:
    """The shell (default os.environ) over every `.env` from `folder` up to the repository
    root (the first folder with `.git`, else the filesystem root), the nearest `.env`
    winning: how AgentV 4.42.4 reads an eval file's environment (loadEnvFromHierarchy)."""
    environ: dict[str, str] = {}
    for place in [folder, *folder.parents]:
        dotenv = place / ".env"
        for name, value in read_dotenv(dotenv if dotenv.is_file() else None).items():
            environ.setdefault(name, value)
        if (place / ".git").exists():
            break
    environ.update(os.environ if shell is None else shell)
    return environ


def config_environ(config: EvalConfig, shell: Mapping[str, str] | None = None) -> dict[str, str]:
    """The project's environment for its judge, simulated user and LLM targets: for an
    AgentV file, dotenv_hierarchy of its folder; else project_environ (bat eval's)."""
    if config.agentv is not None:
        return dotenv_hierarchy(config.agent_dir, shell)
    return project_environ(config.agent_dir, shell)


def config_key_sources(config: EvalConfig) -> str:
    """Where config_environ looks, in words (judge_key_sources for a BAT agent)."""
    if config.agentv is not None:
        return f"the .env files from {config.agent_dir} up to the repository root, the shell and judge.env"
    return judge_key_sources(config.agent_dir)


# ---------------------------------------------------------------------------------------
# The judge's environment and key


def map_judge_key(environ: Mapping[str, str], provider: str, api_key_env: str | None) -> dict[str, str]:
    """`environ` with the value of `api_key_env` copied onto the provider's key variable
    (api_key_env MY_KEY, provider openai → OPENAI_API_KEY = $MY_KEY), as bat-cli does
    before the judge's `env` is read. Unchanged when api_key_env is unset or empty, or
    the provider has no key variable."""
    mapped = dict(environ)
    target = JUDGE_KEY_ENV.get(provider)
    if api_key_env and target and mapped.get(api_key_env):
        mapped[target] = mapped[api_key_env]
    elif target and not mapped.get(target) and not api_key_env:
        fallback = next((mapped[name] for name in KEY_FALLBACK_ENV.get(provider, ()) if mapped.get(name)), None)
        if fallback:
            mapped[target] = fallback
    return mapped


def judge_environment(judge: JudgeSettings, base: Mapping[str, str]) -> dict[str, str]:
    """The judge's environment: `base` (the project's environment, see project_environ),
    then `judge.api_key_env` copied onto the provider's variable (map_judge_key), then
    `judge.env` (its `$VAR`s were expanded by the loader against this same environment)."""
    environ = map_judge_key(base, judge.provider, judge.api_key_env)
    environ.update(judge.env)
    return environ


def judge_key_variable(judge: JudgeSettings) -> str | None:
    """Where the judge's key is read: `judge.api_key_env`, else the provider's variable;
    None for a provider that needs no key (ollama) and names none."""
    return judge.api_key_env or JUDGE_KEY_ENV.get(judge.provider)


def judge_key_names(judge: JudgeSettings) -> set[str]:
    """Every variable that may hold the judge's key or its settings: `api_key_env`, the
    provider's variable it is copied onto, the variables read in its stead
    (KEY_FALLBACK_ENV) and the names in `judge.env`."""
    names = set(judge.env)
    names.update(name for name in (judge.api_key_env, JUDGE_KEY_ENV.get(judge.provider)) if name)
    names.update(KEY_FALLBACK_ENV.get(judge.provider, ()))
    return names


def judge_key(judge: JudgeSettings, environ: Mapping[str, str], *, looked_in: str = "the environment") -> str | None:
    """The judge's API key from its environment (`environ`: the project's environment or
    the judge's own; judge_environment is applied either way). None when the provider
    needs none (ollama; its `api_key_env`, when named and set, is still used).

    Raises MissingJudgeKey naming the variable and `looked_in` when a key is needed and
    the variable is unset or empty (for `vertex`, also when its project is not set). A
    named `api_key_env` that is unset is refused even when the provider's own variable is
    set: the user asked for that key, not another."""
    variable = judge_key_variable(judge)
    if variable is None:
        return None
    value = judge_environment(judge, environ).get(variable)
    if value and judge.provider == "vertex" and not judge_environment(judge, environ).get(VERTEX_PROJECT_ENV):
        raise MissingJudgeKey(
            f"the judge ({judge.provider}:{judge.model}) needs its Google Cloud project in "
            f"{VERTEX_PROJECT_ENV} (an EvalBench model config's gcp_project_id sets it), and it is "
            f"not set: looked in {looked_in}"
        )
    if value:
        return value
    if JUDGE_KEY_ENV.get(judge.provider) is None:
        return None
    source = (
        "judge.api_key_env"
        if judge.api_key_env
        else f"the {judge.provider} provider's variable; judge.api_key_env can name another"
    )
    fallbacks = () if judge.api_key_env else KEY_FALLBACK_ENV.get(judge.provider, ())
    also = f" or {' or '.join(fallbacks)}" if fallbacks else ""
    what = (
        "an OAuth access token (e.g. from `gcloud auth print-access-token`)"
        if judge.provider == "vertex"
        else "an API key"
    )
    raise MissingJudgeKey(
        f"the judge ({judge.provider}:{judge.model}) needs {what} in {variable}{also} ({source}), "
        f"and it is not set: looked in {looked_in}"
    )


def judge_key_sources(agent_dir: Path) -> str:
    """Where the judge's key is looked for, in words: the `.env` path, the shell, judge.env."""
    path = dotenv_path(agent_dir)
    dotenv = str(path) if path.is_file() else f"{path} (no such file)"
    return f"{dotenv}, the shell and judge.env of eval.yaml"


def require_judge_key(config: EvalConfig, shell: Mapping[str, str] | None = None) -> None:
    """Refuse, before anything starts, a run whose judge is on (`evaluation.qualitative`)
    and has no key: InputError on eval.yaml, entry `judge`, naming the variable and where
    it was looked for. Nothing to check when the judge is off or needs no key."""
    judge = config.judge
    if not config.evaluation.qualitative or judge is None:
        return
    try:
        judge_key(judge, config_environ(config, shell), looked_in=config_key_sources(config))
    except MissingJudgeKey as exc:
        raise InputError(
            str(config.source), str(exc), entry="judge", field="api_key_env" if judge.api_key_env else None
        ) from None


def _as_user(message: str) -> str:
    return message.replace("the judge (", "the simulated user (").replace(
        "judge.api_key_env", "simulated_user.api_key_env"
    )


def require_simulated_user_key(config: EvalConfig, shell: Mapping[str, str] | None = None) -> None:
    """Refuse, before anything starts, a simulated user without its key: InputError on
    eval.yaml, entry `simulated_user`, as for the judge (require_judge_key)."""
    user = config.simulated_user
    if user is None:
        return
    try:
        judge_key(
            user.client_settings(),
            config_environ(config, shell),
            looked_in=config_key_sources(config).replace("judge.env", "simulated_user.env"),
        )
    except MissingJudgeKey as exc:
        raise InputError(
            str(config.source),
            _as_user(str(exc)),
            entry="simulated_user",
            field="api_key_env" if user.api_key_env else None,
        ) from None


# ---------------------------------------------------------------------------------------
# The agent's environment


def _minimal_shell(shell: Mapping[str, str], model: ModelSpec) -> dict[str, str]:
    model_key = MODEL_KEY_ENV.get(model.provider)
    return {
        name: value
        for name, value in shell.items()
        if name in MINIMAL_SHELL_NAMES or name.startswith(MINIMAL_SHELL_PREFIXES) or name == model_key
    }


def agent_environment(
    config: EvalConfig,
    model: ModelSpec,
    *,
    base_env: Mapping[str, str] | None = None,
    dotenv: Path | Mapping[str, str] | None = None,
    minimal: bool | None = None,
) -> dict[str, str]:
    """The environment of the agent process for one model, later layers winning, as
    `bat eval` builds it:

    1. the project's `.env` (`dotenv`: a path or the values; default: `find_dotenv`);
    2. the whole shell (`base_env`, default `os.environ`);
    3. MODEL_PROVIDER and MODEL; BASE_URL is the model's `base_url` when it sets one and is
       *removed* otherwise (an inherited BASE_URL would point the agent at another
       model's server — bat-cli removes it too);
    4. `agent.env` of eval.yaml;
    5. the model's `env`.

    Then, when the judge is on (`evaluation.qualitative` with a judge), its key never
    reaches the agent: `judge.api_key_env`, the provider variable it maps to and the names
    in `judge.env` are removed wherever they came from (bat-cli passes them on; we do
    not), except a variable the model's own provider reads its key from (an openai judge
    and an openai model sharing OPENAI_API_KEY: the agent needs it; give the judge its own
    `api_key_env` to keep them apart) and a variable `agent.env` or the model's `env` sets.

    `minimal` (default: `not agent.inherit_env`) isolates the agent: from the shell it
    takes only MINIMAL_SHELL_NAMES, names starting with MINIMAL_SHELL_PREFIXES (LC_*,
    UV_*, PYTHON*, SSL_CERT_*) and the model provider's key variable (MODEL_KEY_ENV);
    layers 1 and 3-5 come in full.
    """
    if minimal is None:
        minimal = not config.agent.inherit_env
    shell = os.environ if base_env is None else base_env
    if dotenv is None:
        env = read_dotenv(find_dotenv(config.agent_dir))
    elif isinstance(dotenv, Mapping):
        env = {name: str(value) for name, value in dotenv.items() if value is not None}
    else:
        env = read_dotenv(Path(dotenv))
    env.update(_minimal_shell(shell, model) if minimal else shell)
    env["MODEL_PROVIDER"] = model.provider
    env["MODEL"] = model.model
    env.pop("BASE_URL", None)
    if model.base_url:
        env["BASE_URL"] = model.base_url
    env.update(config.agent.env)
    env.update(model.env)
    kept = set(config.agent.env) | set(model.env) | {MODEL_KEY_ENV.get(model.provider)}
    if config.evaluation.qualitative and config.judge is not None:
        for name in judge_key_names(config.judge) - kept:
            env.pop(name, None)
    if config.simulated_user is not None:
        # The simulated user's key, likewise (same exceptions as the judge's).
        for name in judge_key_names(config.simulated_user.client_settings()) - kept:
            env.pop(name, None)
    return env
