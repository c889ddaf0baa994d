"""engine.config.load_eval_config: eval/eval.yaml (SPEC §2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bat_pipeline.engine.config import load_eval_config
from bat_pipeline.engine.errors import InputError

ENV = {"HOME": "/home/u", "MY_KEY": "secret", "HOST": "gpu1"}


def agent(tmp_path: Path, eval_yaml: str) -> Path:
    folder = tmp_path / "agent"
    (folder / "eval").mkdir(parents=True)
    (folder / "eval" / "eval.yaml").write_text(eval_yaml)
    return folder


def refused(tmp_path: Path, eval_yaml: str, environ=ENV) -> InputError:
    folder = agent(tmp_path, eval_yaml)
    with pytest.raises(InputError) as caught:
        load_eval_config(folder, environ=environ)
    assert str(folder / "eval" / "eval.yaml") in str(caught.value)
    return caught.value


def assert_names(error: InputError, entry: str | None, field: str | None, *phrases: str) -> None:
    text = str(error)
    assert error.entry == entry
    assert error.field == field
    if entry:
        assert entry in text
    if field:
        assert f"field '{field}'" in text
    for phrase in phrases:
        assert phrase in text


# --- accepted ---------------------------------------------------------------------------


def test_defaults(tmp_path):
    config = load_eval_config(agent(tmp_path, "models: ['openai:gpt-x']"), environ=ENV)
    ev = config.evaluation
    assert (ev.dataset, ev.output_dir, ev.k, ev.qualitative, ev.run_name) == (
        "eval/input/tasks.json",
        "eval/output",
        1,
        False,
        "benchmark",
    )
    assert (ev.agent_startup_timeout_s, ev.agent_shutdown_timeout_s, ev.concurrency) == (45, 10, 4)
    assert config.judge is None and config.agent.command is None


def test_shorthand_splits_at_first_colon(tmp_path):
    config = load_eval_config(agent(tmp_path, "models: ['ollama:llama3:8b']"), environ=ENV)
    assert (config.models[0].provider, config.models[0].model) == ("ollama", "llama3:8b")


def test_agent_dir_and_source_set(tmp_path):
    folder = agent(tmp_path, "models: ['openai:m']")
    config = load_eval_config(folder, environ=ENV)
    assert config.agent_dir == folder.resolve()
    assert config.source == (folder / "eval" / "eval.yaml").resolve()


def test_relative_paths_stay_relative(tmp_path):
    config = load_eval_config(agent(tmp_path, "evaluation: {dataset: data/t.json}\nmodels: ['openai:m']"), environ=ENV)
    assert config.evaluation.dataset == "data/t.json"
    assert config.resolve(config.evaluation.dataset) == config.agent_dir / "data" / "t.json"


def test_var_expansion_in_env_and_base_url(tmp_path):
    text = """
models:
  - provider: ollama
    model: m
    base_url: http://${HOST}:11434
    env: {A: $MY_KEY, B: "${HOME}/x", C: "cost $$5", PORT: 8080}
judge: {provider: openai, model: j, base_url: "http://$HOST", env: {K: $MY_KEY}}
agent: {env: {D: "$HOME"}}
"""
    config = load_eval_config(agent(tmp_path, text), environ=ENV)
    assert config.models[0].base_url == "http://gpu1:11434"
    assert config.models[0].env == {"A": "secret", "B": "/home/u/x", "C": "cost $5", "PORT": "8080"}
    assert config.judge.base_url == "http://gpu1" and config.judge.env == {"K": "secret"}
    assert config.agent.env == {"D": "/home/u"}


def test_default_environ_reads_dotenv_then_shell(tmp_path, monkeypatch):
    folder = agent(tmp_path, "models: [{provider: openai, model: m, env: {A: $FROM_DOTENV_ONLY}}]")
    (folder / ".env").write_text("FROM_DOTENV_ONLY=dotenv-value\n")
    monkeypatch.delenv("FROM_DOTENV_ONLY", raising=False)
    assert load_eval_config(folder).models[0].env == {"A": "dotenv-value"}


def test_additions_are_read(tmp_path):
    text = """
evaluation: {concurrency: 2, schedule: "0 3 * * *", watch: true, gate: {min_pass_rate: 0.8}}
judge: {provider: openai, model: j, max_concurrency: 3, timeout_s: 30, max_retries: 0}
agent: {command: "python server.py --port {port}", spans: [out/spans.jsonl]}
models: [{provider: openai, model: m, key: fast}]
"""
    config = load_eval_config(agent(tmp_path, text), environ=ENV)
    assert config.evaluation.gate.min_pass_rate == 0.8 and config.evaluation.watch
    assert config.judge.max_concurrency == 3
    assert config.agent.command == ["python", "server.py", "--port", "{port}"]
    assert config.model("fast").model == "m"


def test_eval_file_argument(tmp_path):
    folder = agent(tmp_path, "models: ['openai:a']")
    (folder / "eval" / "other.yaml").write_text("models: ['openai:b']")
    assert load_eval_config(folder, "eval/other.yaml", environ=ENV).models[0].model == "b"


# --- refused ----------------------------------------------------------------------------


def test_missing_eval_yaml_suggests_init(tmp_path):
    with pytest.raises(InputError) as caught:
        load_eval_config(tmp_path, environ=ENV)
    assert str(tmp_path / "eval" / "eval.yaml") in str(caught.value)
    assert "bat-pipeline init" in str(caught.value)


def test_yaml_syntax_error_has_line(tmp_path):
    error = refused(tmp_path, "models:\n  - openai:m\n bad: [\n")
    assert "line 3" in str(error)


def test_duplicate_yaml_key(tmp_path):
    error = refused(tmp_path, "models: ['openai:a']\nmodels: ['openai:b']\n")
    assert "appears twice" in str(error) and "line 2" in str(error)


def test_top_level_not_mapping(tmp_path):
    assert "must be a mapping" in str(refused(tmp_path, "- openai:m\n"))


def test_no_models(tmp_path):
    assert_names(refused(tmp_path, "evaluation: {k: 1}\n"), "top level", "models", "no models")


def test_empty_models(tmp_path):
    assert_names(refused(tmp_path, "models: []\n"), "top level", "models", "no models")


def test_unknown_provider_lists_valid(tmp_path):
    error = refused(tmp_path, "models: ['openai:a', 'opnai:b']\n")
    assert_names(error, "models[1]", "provider", "opnai", "anthropic, deepseek, nvidia, ollama, openai")


def test_unknown_judge_provider(tmp_path):
    error = refused(tmp_path, "judge: {provider: bedrock, model: j}\nmodels: ['openai:a']\n")
    assert_names(error, "judge", "provider", "valid:")


def test_qualitative_without_judge(tmp_path):
    error = refused(tmp_path, "evaluation: {qualitative: true}\nmodels: ['openai:a']\n")
    assert_names(error, "evaluation", "qualitative", "judge")


def test_unknown_prompt_key_lists_allowed(tmp_path):
    error = refused(tmp_path, "judge: {provider: openai, model: j, prompts: {relevence: x}}\nmodels: ['openai:a']\n")
    assert_names(
        error,
        "judge",
        "prompts.relevence",
        "did you mean 'relevance'",
        "relevance, task_completion, hallucination, tool_call",
    )


def test_prompt_too_long(tmp_path):
    long = "x" * 1001
    error = refused(
        tmp_path, f"judge: {{provider: openai, model: j, prompts: {{tool_call: {long}}}}}\nmodels: ['openai:a']\n"
    )
    assert_names(error, "judge", "prompts.tool_call", "1001", "1000")


@pytest.mark.parametrize("field", ["k", "agent_startup_timeout_s", "agent_shutdown_timeout_s", "concurrency"])
def test_below_one(tmp_path, field):
    error = refused(tmp_path, f"evaluation: {{{field}: 0}}\nmodels: ['openai:a']\n")
    assert_names(error, "evaluation", field, "at least 1")


def test_wrong_type_says_expected_and_given(tmp_path):
    error = refused(tmp_path, "evaluation: {k: 'three'}\nmodels: ['openai:a']\n")
    assert_names(error, "evaluation", "k", "expected an integer", "a string ('three')")


def test_wrong_type_in_model_env(tmp_path):
    error = refused(tmp_path, "models: [{provider: openai, model: a, env: {FLAG: [1]}}]\n")
    assert_names(error, "models[0]", "env.FLAG", "expected a string", "a list")


def test_duplicate_model_keys_name_both(tmp_path):
    error = refused(tmp_path, "models: ['openai:a', {provider: openai, model: b, key: openai-a}]\n")
    assert_names(error, "models[1]", "key", "models[0]", "openai-a")


def test_duplicate_models_without_key(tmp_path):
    error = refused(tmp_path, "models: ['openai:a', 'openai:a']\n")
    assert_names(error, "models[1]", "model", "models[0]")


def test_unknown_top_level_field_did_you_mean(tmp_path):
    error = refused(tmp_path, "modles: ['openai:a']\n")
    assert_names(error, "top level", "modles", "did you mean 'models'")


def test_unknown_nested_field_did_you_mean(tmp_path):
    error = refused(tmp_path, "models: [{provider: openai, model: a, bse_url: x}]\n")
    assert_names(error, "models[0]", "bse_url", "did you mean 'base_url'")


def test_unset_variable_named(tmp_path):
    error = refused(tmp_path, "models: [{provider: openai, model: a, env: {K: $NOT_SET_ANYWHERE}}]\n")
    assert_names(error, "models[0]", "env.K", "NOT_SET_ANYWHERE")


def test_unset_variable_in_judge_base_url(tmp_path):
    error = refused(tmp_path, "judge: {provider: ollama, model: j, base_url: 'http://${NOPE}'}\nmodels: ['openai:a']\n")
    assert_names(error, "judge", "base_url", "NOPE")


def test_bad_shorthand(tmp_path):
    assert_names(refused(tmp_path, "models: ['gpt-x']\n"), "models[0]", "model", "<provider>:<model>")


def test_command_and_url_together(tmp_path):
    error = refused(tmp_path, "agent: {command: [a], url: 'http://x'}\nmodels: ['openai:a']\n")
    assert_names(error, "agent", "url", "not both")


def test_shorthand_with_space_explained(tmp_path):
    error = refused(tmp_path, "models:\n  - ollama: llama3\n")
    assert_names(error, "models[0]", "ollama", "'ollama:llama3'")


def test_unbalanced_command_quotes(tmp_path):
    error = refused(tmp_path, "agent: {command: \"python 'server.py\"}\nmodels: ['openai:a']\n")
    assert_names(error, "agent", "command", "cannot split")


@pytest.mark.parametrize(
    ("cron", "phrase"),
    [
        ("0 3 * *", "has 4 fields"),
        ("0 25 * * *", "'25' is not a valid hour (0-23)"),
        ("*/x * * * *", "step 'x'"),
        ("0 3 * * funday", "'funday' is not a valid day of week"),
    ],
)
def test_a_schedule_that_would_not_run_is_refused(tmp_path, cron, phrase):
    error = refused(tmp_path, f"evaluation: {{schedule: '{cron}'}}\nmodels: ['openai:m']\n")
    assert_names(error, "evaluation", "schedule", phrase)


@pytest.mark.parametrize("cron", ["0 3 * * *", "*/15 8-18 * * mon-fri", "0 0 1,15 jan,jul 0", "@daily"])
def test_schedules_dagster_takes(tmp_path, cron):
    assert (
        load_eval_config(
            agent(tmp_path, f"evaluation: {{schedule: '{cron}'}}\nmodels: ['openai:m']\n"), environ=ENV
        ).evaluation.schedule
        == cron
    )
