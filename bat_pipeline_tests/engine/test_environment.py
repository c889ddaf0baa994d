"""engine.environment: what the agent process gets for one model and where the judge's key
comes from, as `bat eval` builds them (SPEC §2)."""

from __future__ import annotations

import pytest

from bat_pipeline.engine.config import load_eval_config
from bat_pipeline.engine.environment import (
    MissingJudgeKey,
    agent_environment,
    judge_environment,
    judge_key,
    project_environ,
    require_judge_key,
)
from bat_pipeline.engine.errors import InputError

EVAL = """
evaluation: {qualitative: true}
judge: {provider: openai, model: j, api_key_env: JUDGE_KEY, env: {JUDGE_SETTING: s}}
agent: {env: {LAYER: agent, AGENT_ONLY: a}}
models:
  - {provider: ollama, model: m1, base_url: "http://gpu:11434", env: {LAYER: model}}
  - "openai:m2"
  - "anthropic:m3"
"""


def make_agent(tmp_path, eval_text: str = EVAL, dotenv: str | None = None):
    folder = tmp_path / "agent"
    (folder / "eval").mkdir(parents=True)
    (folder / "eval" / "eval.yaml").write_text(eval_text)
    if dotenv is not None:
        (folder / ".env").write_text(dotenv)
    return folder


@pytest.fixture
def config(tmp_path):
    folder = make_agent(tmp_path, dotenv="LAYER=dotenv\nDOTENV_ONLY=d\nMODEL=from-dotenv\nSHELL_WINS=dotenv\n")
    return load_eval_config(folder, environ={})


SHELL = {
    "PATH": "/bin",
    "SHELL_WINS": "shell",
    "LAYER": "shell",
    "JUDGE_KEY": "canary-judge",
    "OPENAI_API_KEY": "openai-key",
    "JUDGE_SETTING": "canary-setting",
    "UNRELATED": "u",
    "UV_CACHE_DIR": "/c",
    "LC_ALL": "C",
    "BASE_URL": "http://shell",
}


# --- the agent's environment -----------------------------------------------------------


def test_dotenv_read_then_shell_wins(config):
    env = agent_environment(config, config.models[0], base_env=SHELL)
    assert env["DOTENV_ONLY"] == "d" and env["SHELL_WINS"] == "shell"


def test_the_whole_shell_by_default(config):
    assert config.agent.inherit_env is True
    env = agent_environment(config, config.models[1], base_env=SHELL)
    assert env["UNRELATED"] == "u" and env["PATH"] == "/bin"


def test_model_variables_override_dotenv_and_shell(config):
    env = agent_environment(config, config.models[0], base_env=SHELL)
    assert (env["MODEL_PROVIDER"], env["MODEL"], env["BASE_URL"]) == ("ollama", "m1", "http://gpu:11434")


def test_an_inherited_base_url_is_removed_when_the_model_sets_none(config):
    assert "BASE_URL" not in agent_environment(config, config.models[1], base_env=SHELL)
    assert "BASE_URL" not in agent_environment(
        config, config.models[1], base_env={}, dotenv={"BASE_URL": "http://dotenv"}
    )


def test_agent_env_then_model_env_win(config):
    assert agent_environment(config, config.models[0], base_env=SHELL)["LAYER"] == "model"
    env = agent_environment(config, config.models[1], base_env=SHELL)
    assert env["LAYER"] == "agent" and env["AGENT_ONLY"] == "a"


def test_dotenv_argument_mapping(config):
    env = agent_environment(config, config.models[1], base_env={}, dotenv={"X": "1"})
    assert env["X"] == "1" and "DOTENV_ONLY" not in env


def test_the_judge_key_never_reaches_the_agent(config):
    """api_key_env, the provider variable it maps to and judge.env's names, from the shell
    or the .env, in the default mode; an anthropic model does not need OPENAI_API_KEY."""
    env = agent_environment(
        config,
        config.models[2],
        base_env=SHELL,
        dotenv={"JUDGE_KEY": "canary-dotenv", "JUDGE_SETTING": "canary-dotenv"},
    )
    assert "canary" not in " ".join(env.values())
    assert not {"JUDGE_KEY", "JUDGE_SETTING", "OPENAI_API_KEY"} & set(env)
    assert env["UNRELATED"] == "u"


def test_the_model_providers_own_key_stays(config):
    env = agent_environment(config, config.models[1], base_env=SHELL)
    assert env["OPENAI_API_KEY"] == "openai-key" and "JUDGE_KEY" not in env


def test_a_judge_variable_set_for_the_agent_stays(config):
    model = config.models[1].model_copy(update={"env": {"JUDGE_KEY": "agent-own"}})
    assert agent_environment(config, model, base_env=SHELL)["JUDGE_KEY"] == "agent-own"
    assert agent_environment(config, config.models[0], base_env=SHELL, minimal=True).get("JUDGE_KEY") is None


def test_nothing_is_withheld_when_the_judge_is_off(tmp_path):
    folder = make_agent(tmp_path, EVAL.replace("qualitative: true", "qualitative: false"))
    config = load_eval_config(folder, environ={})
    env = agent_environment(config, config.models[2], base_env=SHELL)
    assert env["JUDGE_KEY"] == "canary-judge" and env["OPENAI_API_KEY"] == "openai-key"


def test_inherit_env_false_keeps_only_the_allow_list_from_the_shell(tmp_path):
    isolated = EVAL.replace("agent: {env:", "agent: {inherit_env: false, env:")
    folder = make_agent(tmp_path, isolated, dotenv="SHELL_WINS=dotenv\n")
    config = load_eval_config(folder, environ={})
    assert config.agent.inherit_env is False
    env = agent_environment(config, config.models[1], base_env=SHELL)
    assert env["PATH"] == "/bin" and env["UV_CACHE_DIR"] == "/c" and env["LC_ALL"] == "C"
    assert "UNRELATED" not in env and env["SHELL_WINS"] == "dotenv"
    assert env["OPENAI_API_KEY"] == "openai-key" and "JUDGE_KEY" not in env
    ollama = agent_environment(config, config.models[0], base_env={**SHELL, "OLLAMA_API_KEY": "agent-key"})
    assert ollama["OLLAMA_API_KEY"] == "agent-key" and "OPENAI_API_KEY" not in ollama


def test_a_key_shared_by_an_openai_judge_and_an_openai_model(tmp_path):
    folder = make_agent(
        tmp_path,
        "evaluation: {qualitative: true}\njudge: {provider: openai, model: j}\nmodels: ['openai:m', 'ollama:n']\n",
    )
    config = load_eval_config(folder, environ={})
    for minimal in (False, True):
        assert (
            agent_environment(config, config.models[0], base_env=SHELL, minimal=minimal)["OPENAI_API_KEY"]
            == "openai-key"
        )
        assert "OPENAI_API_KEY" not in agent_environment(config, config.models[1], base_env=SHELL, minimal=minimal)


def test_blueprint_root_dotenv(tmp_path):
    root = tmp_path / "bp"
    (root / "a1" / "eval").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname='bp'\n")
    (root / "__main__.py").write_text("")
    (root / ".env").write_text("ROOT_VAR=r\n")
    (root / "a1" / "config.yaml").write_text("{}")
    (root / "a1" / "eval" / "eval.yaml").write_text("models: ['openai:m']")
    config = load_eval_config(root / "a1", environ={})
    assert agent_environment(config, config.models[0], base_env={})["ROOT_VAR"] == "r"
    assert project_environ(root / "a1", {"X": "1"}) == {"ROOT_VAR": "r", "X": "1"}


# --- the judge's environment and key -----------------------------------------------------


def judge_config(tmp_path, judge: str, dotenv: str | None = None, qualitative: bool = True):
    folder = make_agent(
        tmp_path,
        f"evaluation: {{qualitative: {str(qualitative).lower()}}}\njudge: {judge}\nmodels: ['openai:m']\n",
        dotenv,
    )
    return load_eval_config(folder, environ=project_environ(folder, {}))


def test_api_key_env_is_copied_onto_the_providers_variable_then_judge_env(tmp_path):
    config = judge_config(
        tmp_path,
        "{provider: anthropic, model: j, api_key_env: MY_KEY, env: {X: '$ANTHROPIC_API_KEY'}}",
        dotenv="MY_KEY=from-dotenv\n",
    )
    assert config.judge.env == {"X": "from-dotenv"}  # $VAR sees the mapped variable
    env = judge_environment(config.judge, project_environ(config.agent_dir, {"ANTHROPIC_API_KEY": "shell"}))
    assert env["ANTHROPIC_API_KEY"] == "from-dotenv" and env["X"] == "from-dotenv"


def test_key_only_in_the_dotenv(tmp_path):
    config = judge_config(tmp_path, "{provider: openai, model: j, api_key_env: MY_KEY}", dotenv="MY_KEY=k1\n")
    assert judge_key(config.judge, project_environ(config.agent_dir, {})) == "k1"
    assert judge_key(config.judge, project_environ(config.agent_dir, {"MY_KEY": "shell"})) == "shell"
    require_judge_key(config, shell={})


def test_judge_env_may_hold_the_key(tmp_path):
    config = judge_config(tmp_path, "{provider: openai, model: j, env: {OPENAI_API_KEY: in-eval-yaml}}")
    assert judge_key(config.judge, {}) == "in-eval-yaml"


def test_missing_key_names_the_variable_and_where_it_was_looked_for(tmp_path):
    config = judge_config(tmp_path, "{provider: openai, model: j, api_key_env: MY_KEY}")
    with pytest.raises(InputError) as refused:
        require_judge_key(config, shell={"OPENAI_API_KEY": "not-the-named-one"})
    message = str(refused.value)
    assert str(config.source) in message and "MY_KEY" in message and "judge.api_key_env" in message
    assert f"{config.agent_dir / '.env'} (no such file)" in message
    assert "the shell" in message and "judge.env" in message
    assert (refused.value.entry, refused.value.field) == ("judge", "api_key_env")


def test_missing_provider_key(tmp_path):
    config = judge_config(tmp_path, "{provider: deepseek, model: j}", dotenv="OTHER=1\n")
    with pytest.raises(MissingJudgeKey, match="DEEPSEEK_API_KEY"):
        judge_key(config.judge, project_environ(config.agent_dir, {}))
    with pytest.raises(InputError, match=str(config.agent_dir / ".env") + ", the shell"):
        require_judge_key(config, shell={})


def test_no_key_needed(tmp_path):
    ollama = judge_config(tmp_path / "o", "{provider: ollama, model: j}")
    assert judge_key(ollama.judge, {}) is None
    require_judge_key(ollama, shell={})
    off = judge_config(tmp_path / "off", "{provider: openai, model: j}", qualitative=False)
    require_judge_key(off, shell={})
