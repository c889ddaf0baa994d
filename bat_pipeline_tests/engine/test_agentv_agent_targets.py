"""AgentV a2a and LLM targets read into records (issue 15 point 2): their fields, the
refusals naming the field, what a test sends them (messages, turns), an a2a target as an
agent partition, and where an LLM target's key is looked for."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bat_pipeline.engine.config.project import load_project, suite_tasks
from bat_pipeline.engine.errors import InputError
from bat_pipeline.engine.target_inputs import (
    agent_partition,
    case_turns,
    chat_messages,
    llm_key,
    require_target_keys,
    starts_agent,
    target_secrets,
)
from bat_pipeline.locations import BUNDLED_AGENT_DIR

EXAMPLE = BUNDLED_AGENT_DIR.parent / "assistants" / "assistants.yaml"
TESTS = [{"id": "one", "vars": {"input": "What is the capital of France?"}}]


def write(folder: Path, providers: dict, tests: list | None = None, **top) -> Path:
    path = folder / "e.yaml"
    data = {"providers": providers, "tests": tests or TESTS, **top}
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_the_example_has_an_a2a_target_and_three_llm_targets():
    config = load_project(EXAMPLE)
    kinds = {m.partition_key: m.provider for m in config.models}
    assert kinds == {
        "weather_agent": "a2a",
        "openai_competent": "openai",
        "anthropic_competent": "anthropic",
        "ollama_sloppy": "ollama",
    }
    a2a = config.model("weather_agent").target.a2a
    assert a2a.folder == BUNDLED_AGENT_DIR and (a2a.model_provider, a2a.model) == ("openai", "competent")
    # The folder's own eval.yaml says how the agent starts and where its sub-agent's spans are.
    assert a2a.agent.command == ["{python}", "-m", "bat_pipeline.example.agent"]
    assert a2a.extra_spans == [str(BUNDLED_AGENT_DIR / "eval/output/spans/forecaster.jsonl")]
    llm = config.model("openai_competent").target.llm
    assert (llm.model, llm.base_url, llm.api_key_env) == ("competent", "{scripted_llm}/v1", "SCRIPTED_LLM_KEY")
    assert config.model("ollama_sloppy").target.llm.api_key_env is None
    assert [starts_agent(m) for m in config.models] == [True, False, False, False]


def test_a2a_target_becomes_the_agent_partition_keeping_its_key():
    config = load_project(EXAMPLE)
    agent_config, spec = agent_partition(config, "weather_agent")
    assert spec.partition_key == "weather_agent" and spec.name == "openai:competent"
    assert spec.base_url == "{scripted_llm}/v1"
    assert agent_config.agent_dir == BUNDLED_AGENT_DIR and agent_config.agent.command[1:] == [
        "-m",
        "bat_pipeline.example.agent",
    ]
    # The AgentV evaluation's identity, attempts and workers stay.
    assert agent_config.agent_id == "assistants" and agent_config.evaluation.k == config.evaluation.k
    assert agent_config.evaluation.extra_spans == [str(BUNDLED_AGENT_DIR / "eval/output/spans/forecaster.jsonl")]
    # A BAT agent's partition is its own.
    assert agent_partition(config, "openai_competent")[0] is config


def test_a2a_url_target_and_overrides(tmp_path):
    (tmp_path / "spans").mkdir()
    path = write(
        tmp_path,
        {
            "remote": {
                "provider": "a2a",
                "url": "http://127.0.0.1:9/",
                "spans": ["spans/agent.jsonl"],
                "timeout_seconds": 30,
            },
            "local": {
                "provider": "a2a",
                "agent": str(BUNDLED_AGENT_DIR),
                "model": "anthropic:sloppy",
                "base_url": "http://x",
                "command": "python3 -m my_agent",
                "env": {"A": "1"},
            },
        },
    )
    config = load_project(path)
    remote = config.model("remote").target.a2a
    assert remote.agent.url == "http://127.0.0.1:9" and remote.agent.spans == [str(tmp_path / "spans/agent.jsonl")]
    assert remote.turn_timeout_s == 30
    agent_config, _ = agent_partition(config, "remote")
    assert agent_config.agent.url == "http://127.0.0.1:9" and agent_config.evaluation.turn_timeout_s == 30
    local = config.model("local").target.a2a
    assert (local.model_provider, local.model, local.base_url) == ("anthropic", "sloppy", "http://x")
    assert local.agent.command == ["python3", "-m", "my_agent"] and local.agent.env == {"A": "1"}


@pytest.mark.parametrize(
    "body, field, message",
    [
        ({"provider": "a2a"}, "agent", "either `url`"),
        ({"provider": "a2a", "url": "http://a", "agent": "."}, "url", "either `url`"),
        ({"provider": "a2a", "url": "ftp://a"}, "url", "http"),
        ({"provider": "a2a", "agent": "nowhere"}, "agent", "agent folder not found"),
        ({"provider": "a2a", "agent": "."}, "agent", "give the target a `command`"),
        ({"provider": "a2a", "agent": ".", "command": "run"}, "model", "which model the agent runs on"),
        ({"provider": "openai"}, "model", "needs a `model`"),
        ({"provider": "openai", "model": "m", "api_key": "sk-written-in-the-file"}, "api_key", "never written"),
        ({"provider": "openai", "model": "m", "apiKey": "${{ A }} and more"}, "api_key", "never written"),
        ({"provider": "openai", "model": "m", "max_retries": -1}, "max_retries", "greater than or equal"),
        ({"provider": "azure", "model": "m"}, "provider", "provider: openai` with the deployment"),
    ],
)
def test_refusals_name_the_field(tmp_path, body, field, message):
    path = write(tmp_path, {"t": body})
    with pytest.raises(InputError) as caught:
        load_project(path)
    assert message in str(caught.value) and caught.value.field == field


def test_what_a_test_sends(tmp_path):
    tests = [
        {"id": "plain", "vars": {"input": "hi"}},
        {
            "id": "system",
            "vars": {"input": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": {"q": 1}}]},
        },
        {
            "id": "two-turns",
            "vars": {
                "input": [
                    {"role": "system", "content": "Be brief."},
                    {"role": "user", "content": "first"},
                    {"role": "assistant", "content": "ok"},
                    {"role": "user", "content": "second"},
                ]
            },
        },
    ]
    config = load_project(write(tmp_path, {"t": {"provider": "ollama", "model": "m"}}, tests))
    cases = {t.id: t for t in suite_tasks(config.agentv)}
    assert chat_messages(cases["plain"].agentv) == [{"role": "user", "content": "hi"}]
    assert chat_messages(cases["system"].agentv) == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": '{"q": 1}'},
    ]
    # One user message: one turn, the prompt as a cli target gets it.
    assert cases["system"].turns == [cases["system"].agentv.prompt]
    assert cases["two-turns"].turns == ["Be brief.\n\nfirst", "second"]
    assert case_turns(cases["two-turns"].agentv) == cases["two-turns"].turns
    # Another template: one user message, the rendered prompt.
    config = load_project(
        write(tmp_path, {"t": {"provider": "ollama", "model": "m"}}, tests, prompts=["Answer: {{ input }}"])
    )
    case = suite_tasks(config.agentv)[0].agentv
    assert chat_messages(case) == [{"role": "user", "content": "Answer: hi"}]


def test_llm_key_is_read_by_name_and_never_kept(tmp_path):
    path = write(
        tmp_path,
        {
            "o": {"provider": "openai", "model": "m", "api_key": "${{ MY_KEY }}"},
            "e": {"provider": "openai-compatible", "model": "m", "api_key": "{{ env.E_KEY }}"},
            "b": {"provider": "deepseek", "model": "m", "apiKey": "BARE_KEY"},
            "a": {"provider": "anthropic", "model": "m"},
            "l": {"provider": "ollama", "model": "m"},
        },
    )
    config = load_project(path)
    assert "sk-" not in config.model_dump_json()
    target = config.model("o").target
    assert llm_key(target, {"MY_KEY": "sk-1", "OPENAI_API_KEY": "other"}, "here") == "sk-1"
    assert config.model("e").provider == "openai" and config.model("e").target.llm.api_key_env == "E_KEY"
    assert config.model("b").target.llm.api_key_env == "BARE_KEY"
    with pytest.raises(InputError, match="needs an API key in MY_KEY, and it is not set: looked in the shell"):
        llm_key(target, {"OPENAI_API_KEY": "other"}, "the shell")
    assert llm_key(config.model("a").target, {"ANTHROPIC_API_KEY": "sk-a"}, "") == "sk-a"
    assert llm_key(config.model("l").target, {}, "") is None  # a local ollama takes none
    keys = {"MY_KEY": "sk-1", "E_KEY": "e", "BARE_KEY": "b"}
    with pytest.raises(InputError, match="ANTHROPIC_API_KEY"):
        require_target_keys(config, keys)
    require_target_keys(config, {**keys, "ANTHROPIC_API_KEY": "sk-a"})
    # The redactor learns the keys, from the .env beside the file too.
    (tmp_path / ".env").write_text("MY_KEY=sk-from-dotenv-123\n", encoding="utf-8")
    assert {"sk-from-dotenv-123", "sk-a-from-shell"} <= set(
        target_secrets(config, {"ANTHROPIC_API_KEY": "sk-a-from-shell"})
    )


def test_v4_targets_file_with_llm_targets_reads_as_agentv_442(tmp_path):
    """A 4.x file's `.agentv/targets.yaml`: `endpoint`, `deployment`, a `${{ VAR }}` key; an
    OpenAI base URL gets `/v1` as AgentV 4.42 gives it (in seed files it stays as written)."""
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text(
        yaml.safe_dump(
            {
                "targets": [
                    {
                        "name": "gpt",
                        "provider": "openai",
                        "endpoint": "http://llm.local/api",
                        "deployment": "gpt-x",
                        "api_key": "${{ LLM_KEY }}",
                        "max_output_tokens": 64,
                        "temperature": 0,
                    },
                    {"name": "versioned", "provider": "openai", "base_url": "http://llm.local/v1/", "model": "m"},
                ]
            }
        ),
        encoding="utf-8",
    )
    path = tmp_path / "e.yaml"
    path.write_text(
        yaml.safe_dump({"execution": {"targets": ["gpt", "versioned"]}, "tests": [{"id": "a", "input": "hi"}]}),
        encoding="utf-8",
    )
    config = load_project(path)
    gpt = config.model("gpt").target.llm
    assert (gpt.model, gpt.base_url, gpt.api_key_env, gpt.max_output_tokens, gpt.temperature) == (
        "gpt-x",
        "http://llm.local/api/v1",
        "LLM_KEY",
        64,
        0,
    )
    assert config.model("versioned").target.llm.base_url == "http://llm.local/v1"
    (tmp_path / "seed").mkdir()
    seed = write(tmp_path / "seed", {"gpt": {"provider": "openai", "model": "m", "base_url": "http://llm.local/api"}})
    assert load_project(seed).model("gpt").target.llm.base_url == "http://llm.local/api"
