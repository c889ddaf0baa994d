"""Plain LLM targets of AgentV files against the scripted model server over real HTTP
(issue 15 point 2): each provider's wire format, tokens and wall time on the episode,
retries on 429 and 5xx, errors that are not retried, a refused key, the key kept out of
what is stored, and the number of requests in flight."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from bat_pipeline.engine.config.project import load_project, suite_tasks
from bat_pipeline.engine.conversation import plan_attempts
from bat_pipeline.engine.errors import InputError
from bat_pipeline.resources.scripted_llm import with_scripted_llm
from bat_pipeline.resources.targets import collect_target_episodes
from bat_pipeline.resources.targets.llm import run_llm_target
from bat_pipeline_tests.support import local_http

KEY = "sk-scripted-key-0123456789"
TESTS = [
    {"id": "capital", "vars": {"input": "What is the capital of France?"}},
    {"id": "sum", "vars": {"input": "Please add 17 and 25."}},
]


@pytest.fixture
def server(scripted_llm) -> Iterator[str]:
    """The session's scripted server, its knobs as they were after the test (it changes them)."""
    with scripted_llm.restoring():
        yield scripted_llm.url


def knobs(url: str, **values) -> None:
    local_http.post(f"{url}/_control", json={"reset": True, "clear_stats": True, **values}).raise_for_status()


def stats(url: str) -> dict:
    return local_http.get(f"{url}/_stats").json()


def configured(tmp_path: Path, url: str, targets: dict, **top):
    path = tmp_path / "e.yaml"
    path.write_text(yaml.safe_dump({"providers": targets, "tests": TESTS, **top}), encoding="utf-8")
    config = with_scripted_llm(load_project(path), url)
    return config, suite_tasks(config.agentv)


def run(config, tasks, key_env: dict[str, str], monkeypatch, k: int = 1, model: int = 0):
    for name, value in key_env.items():
        monkeypatch.setenv(name, value)
    episodes = []
    collect_target_episodes(
        config.models[model].target,
        config.agentv,
        plan_attempts(tasks, k, []),
        Path("."),
        concurrency=4,
        on_episode=episodes.append,
        log=print,
    )
    return {(e.task_id, e.attempt_index): e for e in episodes}


@pytest.mark.parametrize(
    "provider, base",
    [
        ("openai", "{scripted_llm}/v1"),
        ("anthropic", "{scripted_llm}"),
        ("ollama", "{scripted_llm}"),
        ("gemini", "{scripted_llm}"),
        ("vertex", "{scripted_llm}"),
    ],
)
def test_each_provider_answers_with_tokens_and_time(tmp_path, server, monkeypatch, provider, base):
    knobs(server)
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "proj-1")  # where a vertex model is
    config, tasks = configured(
        tmp_path,
        server,
        {"t": {"provider": provider, "model": "competent", "base_url": base, "api_key": "${{ MY_KEY }}"}},
    )
    episodes = run(config, tasks, {"MY_KEY": KEY}, monkeypatch, k=2)
    assert len(episodes) == 4
    capital = episodes[("capital", 1)]
    assert capital.final_status == "completed" and capital.final_output == "The capital of France is Paris."
    assert capital.model_name == "t" and capital.aux["llm"] == f"{provider}:competent"
    usage = capital.aux["token_usage"]
    assert usage["input"] > 0 and usage["output"] > 0
    totals = capital.trace.trajectory.totals
    assert (totals.tokens_in, totals.tokens_out, totals.model_calls) == (usage["input"], usage["output"], 1)
    assert capital.trace.wall_ms > 0
    # The scripted server answered every request, on the provider's own route.
    served = stats(server)
    assert served["by_model"] == {"competent": 4}, served
    if provider in ("gemini", "vertex"):
        [path] = served["by_path"]
        assert path.endswith("/models/competent:generateContent") and ("proj-1" in path) == (provider == "vertex")


def test_rate_limits_and_server_errors_are_asked_again(tmp_path, server, monkeypatch):
    knobs(server, error_rate=0.5, error_status=429, retry_after=0)
    config, tasks = configured(
        tmp_path, server, {"t": {"provider": "openai", "model": "competent", "base_url": "{scripted_llm}/v1"}}
    )
    episodes = run(config, tasks, {"OPENAI_API_KEY": KEY}, monkeypatch)
    assert all(e.final_status == "completed" for e in episodes.values())
    # Every second request is refused: one attempt needed a second request.
    assert sorted(e.aux["requests"] for e in episodes.values()) == [1, 2]
    assert stats(server)["total"] == 3
    knobs(server, error_rate=1.0, error_status=503)
    config, tasks = configured(
        tmp_path,
        server,
        {"t": {"provider": "openai", "model": "competent", "base_url": "{scripted_llm}/v1", "max_retries": 2}},
    )
    monkeypatch.setattr("bat_pipeline.resources.targets.llm.BACKOFF_BASE_S", 0.01)
    failed = run(config, tasks, {"OPENAI_API_KEY": KEY}, monkeypatch)[("capital", 0)]
    assert failed.final_status == "error" and failed.aux["requests"] == 3
    assert failed.eval_error.startswith("target 't': HTTP 503") and "gave up after 3 requests" in failed.eval_error


def test_a_refused_request_is_not_asked_again(tmp_path, server, monkeypatch):
    knobs(server, fail_model=["competent"])
    config, tasks = configured(
        tmp_path, server, {"t": {"provider": "anthropic", "model": "competent", "base_url": "{scripted_llm}"}}
    )
    episodes = run(config, tasks, {"ANTHROPIC_API_KEY": KEY}, monkeypatch)
    for episode in episodes.values():
        assert episode.final_status == "error" and episode.aux["requests"] == 1
        assert "HTTP 400: scripted failure: model 'competent' is set to always fail" in episode.eval_error


def test_credentials_refused_stop_the_partition(tmp_path, monkeypatch):
    """A server that answers 401 is asked once: the other attempts fail at once."""
    from bat_pipeline_tests.support.judge_server import error, serve_judge

    with serve_judge() as fake:
        fake.script(default=error(401, "bad key"))
        config, tasks = configured(
            tmp_path,
            fake.base_url,
            {"t": {"provider": "openai", "model": "m", "base_url": fake.base_url, "workers": 1}},
        )
        episodes = run(config, tasks, {"OPENAI_API_KEY": KEY}, monkeypatch)
        assert len(fake.requests) == 1
        assert fake.requests[0]["headers"]["authorization"] == f"Bearer {KEY}"
    assert all("HTTP 401: bad key" in e.eval_error for e in episodes.values())
    assert any("no further requests" in e.eval_error for e in episodes.values())


def test_the_key_is_redacted_from_answers(tmp_path, server, monkeypatch):
    knobs(server, echo_key=True)
    config, tasks = configured(
        tmp_path, server, {"t": {"provider": "openai", "model": "competent", "base_url": "{scripted_llm}/v1"}}
    )
    episodes = run(config, tasks, {"OPENAI_API_KEY": KEY}, monkeypatch)
    answer = episodes[("capital", 0)].final_output
    assert KEY not in answer and "[redacted]" in answer


def test_missing_key_and_bad_base_url_are_refused(tmp_path, server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config, tasks = configured(tmp_path, server, {"t": {"provider": "openai", "model": "competent"}})
    with pytest.raises(InputError, match=r"needs an API key in OPENAI_API_KEY, and it is not set: looked in .*\.env"):
        run(config, tasks, {}, monkeypatch)
    config, tasks = configured(tmp_path, server, {"t": {"provider": "openai", "model": "m", "base_url": "nowhere"}})
    with pytest.raises(InputError, match="base_url must be an http"):
        run(config, tasks, {"OPENAI_API_KEY": KEY}, monkeypatch)


def test_workers_bound_requests_in_flight(tmp_path, server, monkeypatch):
    """Latency on every answer: with 2 workers, 6 attempts take three rounds."""
    knobs(server, latency_ms=300)
    config, tasks = configured(
        tmp_path,
        server,
        {"t": {"provider": "openai", "model": "competent", "base_url": "{scripted_llm}/v1", "workers": 2}},
    )
    starts = []
    target = config.models[0].target
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    run_llm_target(
        target, plan_attempts(tasks, 3, []), key=KEY, workers=2, on_episode=lambda e: starts.append(e.aux["started_at"])
    )
    assert len(starts) == 6
    assert stats(server)["max_in_flight"] == 2


def test_an_unreadable_answer_is_asked_again_then_an_error(tmp_path, server, monkeypatch):
    knobs(server, malformed=True)
    config, tasks = configured(
        tmp_path,
        server,
        {"t": {"provider": "openai", "model": "competent", "base_url": "{scripted_llm}/v1", "max_retries": 1}},
    )
    failed = run(config, tasks, {"OPENAI_API_KEY": KEY}, monkeypatch)[("capital", 0)]
    assert failed.final_status == "error" and failed.aux["requests"] == 2
    assert failed.eval_error.startswith("target 't': the response is not JSON")
    assert failed.eval_error.endswith("(gave up after 2 requests)")
