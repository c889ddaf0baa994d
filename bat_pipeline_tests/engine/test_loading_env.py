"""engine.loading.agent_environment: what the agent process gets for one model (SPEC §2)."""

from __future__ import annotations

import pytest

from bat_pipeline.engine.loading import agent_environment, load_eval_config

EVAL = """
judge: {provider: openai, model: j, api_key_env: JUDGE_KEY}
agent: {env: {LAYER: agent, AGENT_ONLY: a}}
models:
  - {provider: ollama, model: m1, base_url: "http://gpu:11434", env: {LAYER: model}}
  - "openai:m2"
"""


@pytest.fixture
def config(tmp_path):
    folder = tmp_path / "agent"
    (folder / "eval").mkdir(parents=True)
    (folder / "eval" / "eval.yaml").write_text(EVAL)
    (folder / ".env").write_text("LAYER=dotenv\nDOTENV_ONLY=d\nMODEL=from-dotenv\nSHELL_WINS=dotenv\n")
    return load_eval_config(folder, environ={})


SHELL = {"PATH": "/bin", "SHELL_WINS": "shell", "LAYER": "shell", "JUDGE_KEY": "canary-judge",
         "OPENAI_API_KEY": "openai-key", "UNRELATED": "u", "UV_CACHE_DIR": "/c", "LC_ALL": "C",
         "BASE_URL": "http://shell"}


def test_dotenv_read_then_shell_wins(config):
    env = agent_environment(config, config.models[0], base_env=SHELL)
    assert env["DOTENV_ONLY"] == "d" and env["SHELL_WINS"] == "shell"


def test_model_variables_override_dotenv_and_shell(config):
    env = agent_environment(config, config.models[0], base_env=SHELL)
    assert (env["MODEL_PROVIDER"], env["MODEL"], env["BASE_URL"]) == ("ollama", "m1", "http://gpu:11434")


def test_base_url_only_when_the_model_sets_it(config):
    assert "BASE_URL" not in agent_environment(config, config.models[1], base_env={})


def test_agent_env_then_model_env_win(config):
    assert agent_environment(config, config.models[0], base_env=SHELL)["LAYER"] == "model"
    env = agent_environment(config, config.models[1], base_env=SHELL)
    assert env["LAYER"] == "agent" and env["AGENT_ONLY"] == "a"


def test_dotenv_argument_mapping(config):
    env = agent_environment(config, config.models[1], base_env={}, dotenv={"X": "1"})
    assert env["X"] == "1" and "DOTENV_ONLY" not in env


def test_full_mode_passes_the_shell(config):
    assert agent_environment(config, config.models[1], base_env=SHELL)["UNRELATED"] == "u"


def test_minimal_keeps_only_the_allow_list_from_the_shell(config):
    env = agent_environment(config, config.models[1], base_env=SHELL, minimal=True)
    assert env["PATH"] == "/bin" and env["UV_CACHE_DIR"] == "/c" and env["LC_ALL"] == "C"
    assert "UNRELATED" not in env and "SHELL_WINS" in env and env["SHELL_WINS"] == "dotenv"


def test_minimal_excludes_the_judge_key_canaries(config):
    env = agent_environment(config, config.models[1], base_env=SHELL, dotenv={"JUDGE_KEY": "canary-dotenv"},
                            minimal=True)
    assert "canary" not in " ".join(env.values()) and "JUDGE_KEY" not in env


def test_minimal_keeps_a_key_the_model_lists(config):
    model = config.models[1].model_copy(update={"env": {"JUDGE_KEY": "agent-own"}})
    env = agent_environment(config, model, base_env=SHELL, minimal=True)
    assert env["JUDGE_KEY"] == "agent-own"


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


def test_minimal_passes_the_model_provider_key(config):
    env = agent_environment(config, config.models[0], base_env={**SHELL, "OLLAMA_API_KEY": "agent-key"},
                            minimal=True)
    assert env["OLLAMA_API_KEY"] == "agent-key" and "OPENAI_API_KEY" not in env


def test_minimal_keeps_the_provider_key_when_the_judge_has_its_own(config):
    env = agent_environment(config, config.models[1], base_env=SHELL, minimal=True)
    assert env["OPENAI_API_KEY"] == "openai-key" and "JUDGE_KEY" not in env


def test_minimal_keeps_a_key_shared_by_the_judge_and_the_model_provider(tmp_path):
    folder = tmp_path / "a"
    (folder / "eval").mkdir(parents=True)
    (folder / "eval" / "eval.yaml").write_text("judge: {provider: openai, model: j}\nmodels: ['openai:m', 'ollama:n']\n")
    config = load_eval_config(folder, environ={})
    assert agent_environment(config, config.models[0], base_env=SHELL, minimal=True)["OPENAI_API_KEY"] == "openai-key"
    assert "OPENAI_API_KEY" not in agent_environment(config, config.models[1], base_env=SHELL, minimal=True)
