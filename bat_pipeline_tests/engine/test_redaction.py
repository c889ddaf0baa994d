"""engine.redaction: which values are secrets, and the Redactor over text, data and records;
resources.evaluation's redactor of an agent folder."""

from __future__ import annotations

import json

import pytest

from bat_pipeline.engine.config import load_eval_config
from bat_pipeline.engine.contracts import A2AEvent, Episode, EpisodeTrace
from bat_pipeline.engine.redaction import MIN_SECRET_CHARS, REDACTED, Redactor, looks_secret, secret_values
from bat_pipeline.resources.evaluation import EvaluationResource

EVAL = """
judge: {provider: openai, model: j, api_key_env: JUDGE_KEY, env: {JUDGE_TOKEN: judge-token-0123456789}}
agent: {env: {SERVICE_PASSWORD: agent-password-0123456, LOG_LEVEL: debug-verbose-mode}}
models:
  - {provider: anthropic, model: m1, env: {HF_TOKEN: model-token-0123456789, BASE_URL: "http://gpu:11434/v1"}}
  - "openai:m2"
"""
DOTENV = "JUDGE_KEY=judge-key-from-dotenv-01\nDB_SECRET=dotenv-secret-0123456\nGREETING=hello-there-everyone\n"
SHELL = {
    "PATH": "/bin",
    "OPENAI_API_KEY": "openai-shell-key-0123456",
    "ANTHROPIC_API_KEY": "anthropic-key-0123456",
    "GITHUB_TOKEN": "shell-only-token-0123456",
}


@pytest.fixture
def folder(tmp_path):
    agent = tmp_path / "agent"
    (agent / "eval").mkdir(parents=True)
    (agent / "eval" / "eval.yaml").write_text(EVAL)
    (agent / ".env").write_text(DOTENV)
    return agent


def test_names_that_say_secret():
    for name in ("OPENAI_API_KEY", "HF_TOKEN", "DB_PASSWORD", "client_secret", "AUTH_HEADER", "AWS_CREDENTIALS"):
        assert looks_secret(name), name
    for name in ("BASE_URL", "MODEL", "LOG_LEVEL", "PATH", "HOME"):
        assert not looks_secret(name), name


def test_secret_values_come_from_the_keys_the_layers_and_the_inherited_environment(folder):
    config = load_eval_config(folder, environ={})
    agent_envs = {
        "anthropic-m1": {"ANTHROPIC_API_KEY": "anthropic-key-0123456", "OPENAI_API_KEY": "not-its-key-012"},
        "openai-m2": {"OPENAI_API_KEY": "openai-shell-key-0123456"},
    }
    values = secret_values(
        config,
        judge_key="the-judge-key-0123456",
        agent_envs=agent_envs,
        dotenv={"DB_SECRET": "dotenv-secret-0123456", "GREETING": "hello-there-everyone"},
        inherited={
            "GITHUB_TOKEN": "shell-only-token-0123456",
            "PGPASSWORD": "shell-db-password-0123",
            "SSH_AUTH_SOCK": "/tmp/ssh-XXXXabcdef/agent.1234",  # a path, not a secret
            "EDITOR": "emacs-with-long-name",
        },
    )
    assert sorted(values) == sorted(
        [
            "the-judge-key-0123456",
            "anthropic-key-0123456",
            "openai-shell-key-0123456",
            "dotenv-secret-0123456",
            "agent-password-0123456",
            "model-token-0123456789",
            "judge-token-0123456789",
            "not-its-key-012",  # secret-named in an agent's environment
            "shell-only-token-0123456",  # inherited from the shell
            "shell-db-password-0123",
        ]
    )


def test_the_resource_redacts_what_an_agent_folder_makes_secret(folder, monkeypatch):
    for name in list(SHELL):
        monkeypatch.setenv(name, SHELL[name])
    monkeypatch.delenv("JUDGE_KEY", raising=False)
    redactor = EvaluationResource(agent_dir=str(folder), storage_root=str(folder / "home")).redactor()
    assert set(redactor.values) == {
        "judge-key-from-dotenv-01",  # the judge's key, found in the .env
        "dotenv-secret-0123456",
        "agent-password-0123456",
        "model-token-0123456789",
        "judge-token-0123456789",
        "anthropic-key-0123456",
        "openai-shell-key-0123456",  # each model's provider key, as its agent gets it
        "shell-only-token-0123456",  # a secret the agent and the judge inherit from the shell
    }
    assert redactor.text("shell-only-token-0123456 hello-there-everyone") == f"{REDACTED} hello-there-everyone"


def test_short_values_are_not_secrets():
    short = "x" * (MIN_SECRET_CHARS - 1)
    redactor = Redactor([short, "y" * MIN_SECRET_CHARS])
    assert redactor.values == ("y" * MIN_SECRET_CHARS,)
    assert redactor.text(f"{short} {'y' * MIN_SECRET_CHARS}") == f"{short} {REDACTED}"
    assert redactor.plus("abc").text("abc abc") == f"{REDACTED} {REDACTED}"
    assert not Redactor([short]) and Redactor([short]).text(short) == short


def test_longest_first_and_json_escaped_forms():
    inner, outer = "sk-inner-0123456789", "prefix/sk-inner-0123456789/suffix"
    redactor = Redactor([inner, outer])
    assert redactor.text(f"{outer} and {inner}") == f"{REDACTED} and {REDACTED}"
    quoted = 'pass"word\\0123456789'
    line = json.dumps({"output": f"the key is {quoted}"})
    assert quoted not in json.loads(Redactor([quoted]).text(line))["output"]
    assert json.loads(Redactor([quoted]).text(line)) == {"output": f"the key is {REDACTED}"}


def test_data_and_records():
    secret = "sk-record-canary-42abcdef"
    redactor = Redactor([secret])
    assert redactor.data({secret: [secret, 3, None, (f"a{secret}",)]}) == {
        REDACTED: [REDACTED, 3, None, (f"a{REDACTED}",)]
    }
    episode = Episode(
        model_name="openai:m",
        task_id="t",
        final_status="completed",
        final_output=f"key {secret}",
        aux={"attempt_index": 0},
        trace=EpisodeTrace(events=[A2AEvent(t_ms=1, task_status="completed", content_preview=secret)]),
    )
    clean = redactor.record(episode)
    assert isinstance(clean, Episode) and secret not in clean.model_dump_json()
    assert clean.final_output == f"key {REDACTED}" and clean.trace.events[0].content_preview == REDACTED
    assert clean.attempt_index == 0 and episode.final_output == f"key {secret}"
    untouched = Episode(model_name="openai:m", task_id="t", final_output="nothing to hide", aux={"attempt_index": 1})
    assert redactor.record(untouched) is untouched
