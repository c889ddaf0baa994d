"""resources.scripted_llm: `{scripted_llm}` in eval.yaml filled with the address of a real
scripted model server, started by the run that needs it and stopped with it, also when
the run fails; resources.evaluation's use of it."""

from __future__ import annotations

import os

import dagster as dg
import httpx
import pytest

from bat_pipeline.engine.config import load_eval_config
from bat_pipeline.engine.environment import require_judge_key
from bat_pipeline.engine.errors import InputError
from bat_pipeline.locations import BUNDLED_AGENT_DIR
from bat_pipeline.resources.evaluation import EvaluationResource
from bat_pipeline.resources.process_group import group_members
from bat_pipeline.resources.scripted_llm import URL_VAR, ScriptedLlmResource, uses_scripted_llm, with_scripted_llm
from bat_pipeline_tests.support import local_http
from bat_pipeline_tests.support.polling import wait_for

EVAL = """
agent: {env: {HELPER_URL: "{scripted_llm}/helper", LOG_LEVEL: info}}
judge: {provider: openai, model: judge, base_url: "{scripted_llm}", env: {J: "{scripted_llm}/j"}}
models:
  - {provider: openai, model: competent, base_url: "{scripted_llm}/v1", env: {OTHER: "{scripted_llm}"}}
  - {provider: ollama, model: m, base_url: "http://gpu:11434"}
"""


@pytest.fixture
def folder(tmp_path):
    agent = tmp_path / "agent"
    (agent / "eval").mkdir(parents=True)
    (agent / "eval" / "eval.yaml").write_text(EVAL)
    return agent


def test_every_placeholder_is_filled_and_nothing_else_changes(folder):
    config = load_eval_config(folder)
    assert uses_scripted_llm(config)
    filled = with_scripted_llm(config, "http://127.0.0.1:5/")
    assert filled.judge.base_url == "http://127.0.0.1:5" and filled.judge.env == {"J": "http://127.0.0.1:5/j"}
    assert filled.models[0].base_url == "http://127.0.0.1:5/v1"
    assert filled.models[0].env == {"OTHER": "http://127.0.0.1:5"}
    assert filled.models[1].base_url == "http://gpu:11434"
    assert filled.agent.env == {"HELPER_URL": "http://127.0.0.1:5/helper", "LOG_LEVEL": "info"}
    assert [m.partition_key for m in filled.models] == [m.partition_key for m in config.models]
    assert not uses_scripted_llm(filled)


def test_the_bundled_example_needs_no_environment():
    config = load_eval_config(BUNDLED_AGENT_DIR, environ={})
    assert uses_scripted_llm(config)
    require_judge_key(config, shell={})  # the judge's key is in the example's .env
    assert [m.partition_key for m in config.models] == ["openai-competent", "openai-sloppy", "anthropic-competent"]


def _run(folder, check, monkeypatch, scripted=None):
    """A run of one asset that hands the evaluation resource to `check`."""
    monkeypatch.delenv(URL_VAR, raising=False)

    @dg.asset
    def reads_models(evaluation: EvaluationResource) -> None:
        check(evaluation)

    resource = EvaluationResource(
        agent_dir=str(folder), storage_root=str(folder / "home"), scripted_llm=scripted or ScriptedLlmResource()
    )
    return dg.materialize([reads_models], resources={"evaluation": resource}, raise_on_error=False)


def test_a_run_starts_the_server_and_stops_its_group_when_it_fails(folder, monkeypatch):
    seen = {}

    def check(evaluation):
        url = evaluation.config().judge.base_url
        seen["url"], seen["pid"] = url, evaluation.scripted_llm.pid
        models = local_http.get(url + "/v1/models", timeout=10).json()
        seen["models"] = {m["id"] for m in models["data"]}
        assert evaluation.config() is evaluation.config()  # one server per run
        raise RuntimeError("the step fails after using the server")

    result = _run(folder, check, monkeypatch)
    assert not result.success
    assert seen["url"].startswith("http://127.0.0.1:") and {"competent", "judge"} <= seen["models"]
    # Started in its own group, which the run's end killed whole.
    assert seen["pid"] not in (os.getpid(), None)
    wait_for(lambda: not group_members(seen["pid"]), 10, what="the scripted server's group to end")
    with pytest.raises(httpx.TransportError):
        local_http.get(seen["url"] + "/v1/models", timeout=2)


def test_a_step_that_reads_no_model_starts_nothing(folder, monkeypatch):
    seen = {}

    def check(evaluation):
        seen["judge"] = evaluation.config(models=False).judge.base_url
        seen["pid"] = evaluation.scripted_llm.pid

    assert _run(folder, check, monkeypatch).success
    assert seen == {"judge": "{scripted_llm}", "pid": None}


def test_a_given_server_is_used_and_none_started(folder, monkeypatch):
    seen = {}

    def check(evaluation):
        seen["base_url"] = evaluation.config().models[0].base_url
        seen["pid"] = evaluation.scripted_llm.pid

    assert _run(folder, check, monkeypatch, ScriptedLlmResource(url="http://127.0.0.1:7/")).success
    assert seen == {"base_url": "http://127.0.0.1:7/v1", "pid": None}


def test_without_the_resource_a_placeholder_is_refused(folder):
    evaluation = EvaluationResource(agent_dir=str(folder), storage_root=str(folder / "home"))
    with pytest.raises(InputError, match=r"\{scripted_llm\}.*no scripted_llm resource"):
        evaluation.config()
    assert evaluation.config(models=False).judge.base_url == "{scripted_llm}"
