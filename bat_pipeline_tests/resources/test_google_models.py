"""Gemini models over Google's generateContent (`gemini`: the Google AI API, `vertex`:
Vertex AI) as judge, simulated user and LLM target, against the scripted server speaking
that API on 127.0.0.1; credentials and places as Google's conventions name them."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess

import pytest

from bat_pipeline.engine.contracts import JudgeSettings
from bat_pipeline.engine.contracts.config import SimulatedUserSettings
from bat_pipeline.engine.environment import MissingJudgeKey, judge_key, judge_key_names
from bat_pipeline.resources.judge import JudgeClient, JudgeConfigError, judge_episodes
from bat_pipeline.resources.llm.google_generate import GoogleGenerate, Place
from bat_pipeline.resources.llm.providers import endpoint_url
from bat_pipeline.resources.llm.wire import ChatRequest, UnreadableAnswer
from bat_pipeline.resources.simulated_user import SimulatedUserClient
from bat_pipeline_tests.support.judge_server import weather_episode, weather_task
from bat_pipeline_tests.support.paths import VENV_BIN

KEY = "AIza-CANARY-5b2d46807f3a9c1e"
TOKEN = "ya29.CANARY-4680-token"
GEMINI_PATH = "/v1beta/models/{}:generateContent"
VERTEX_PATH = "/v1/projects/proj-1/locations/europe-west4/publishers/google/models/{}:generateContent"


def judged(client: JudgeClient):
    return asyncio.run(judge_episodes(client, [weather_episode()], [weather_task()]))


def test_the_google_ai_api_judges_with_its_key_in_x_goog_api_key(scripted_llm):
    before = scripted_llm.count(path=GEMINI_PATH.format("judge"))
    settings = JudgeSettings(provider="gemini", model="judge", base_url=scripted_llm.url, max_retries=0)
    with scripted_llm.restoring():
        scripted_llm.set(echo_key=True)
        result = judged(JudgeClient(settings, environ={"GOOGLE_API_KEY": KEY}))
    [scores] = result.scores
    assert scores.judge_errors == {}
    assert scores.task_completion_quality is not None and scores.response_relevance is not None
    # The key went in x-goog-api-key (the server quoted it), and never comes back out.
    assert KEY not in str(scores.judge_reasoning) and "for key [redacted]" in str(scores.judge_reasoning)
    assert scripted_llm.count(path=GEMINI_PATH.format("judge")) - before == result.stats.requests == 4
    assert result.stats.tokens_in > 0 and result.stats.tokens_out > 0  # from usageMetadata


def test_vertex_judges_with_a_bearer_token_at_its_project_and_location(scripted_llm):
    before = scripted_llm.count(path=VERTEX_PATH.format("judge"))
    settings = JudgeSettings(
        provider="vertex",
        model="judge",
        env={"GOOGLE_CLOUD_PROJECT": "proj-1", "GOOGLE_CLOUD_LOCATION": "europe-west4"},
        max_retries=0,
    )
    environ = {"GOOGLE_OAUTH_ACCESS_TOKEN": TOKEN, "GOOGLE_VERTEX_BASE_URL": scripted_llm.url}
    result = judged(JudgeClient(settings, environ=environ))
    assert result.scores[0].judge_errors == {}
    assert scripted_llm.count(path=VERTEX_PATH.format("judge")) - before == 4


def test_a_server_without_json_schema_is_asked_in_plain_text(scripted_llm):
    settings = JudgeSettings(provider="gemini", model="judge", base_url=scripted_llm.url, max_retries=0)
    with scripted_llm.restoring():
        scripted_llm.set(no_structured_output=True)
        result = judged(JudgeClient(settings, environ={"GEMINI_API_KEY": KEY}))
    assert result.scores[0].judge_errors == {}
    assert result.stats.text_fallbacks


def test_vertex_plays_the_simulated_user(scripted_llm):
    settings = SimulatedUserSettings(
        provider="vertex", model="user", env={"GOOGLE_CLOUD_PROJECT": "proj-1"}, base_url=scripted_llm.url
    )
    client = SimulatedUserClient(settings, environ={"CLOUDSDK_AUTH_ACCESS_TOKEN": TOKEN})
    reply = asyncio.run(client.reply("You want the weather in Paris.", []))
    assert reply.text.strip() and reply.requests == 1 and reply.tokens_in > 0


@pytest.mark.parametrize(
    ("provider", "environ", "says"),
    [
        ("gemini", {}, "needs an API key in GEMINI_API_KEY or GOOGLE_API_KEY"),
        (
            "vertex",
            {"GOOGLE_CLOUD_PROJECT": "p"},
            "needs an OAuth access token (e.g. from `gcloud auth print-access-token`) in "
            "GOOGLE_OAUTH_ACCESS_TOKEN or CLOUDSDK_AUTH_ACCESS_TOKEN",
        ),
        ("vertex", {"GOOGLE_OAUTH_ACCESS_TOKEN": TOKEN}, "needs its Google Cloud project: set GOOGLE_CLOUD_PROJECT"),
    ],
)
def test_missing_credentials_or_project_are_refused_by_name(provider, environ, says):
    with pytest.raises(JudgeConfigError) as refused:
        JudgeClient(JudgeSettings(provider=provider, model="gemini-2.5-pro"), environ=environ)
    assert says in str(refused.value)


def test_default_endpoints_are_googles():
    assert endpoint_url("gemini", None, "gemini-2.5-flash", {}) == (
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"
    )
    assert endpoint_url("vertex", None, "gemini-2.5-pro", {"GOOGLE_CLOUD_PROJECT": "p"}) == (
        "https://aiplatform.googleapis.com/v1/projects/p/locations/global/publishers/google/models/"
        "gemini-2.5-pro:generateContent"
    )
    place = {"GOOGLE_CLOUD_PROJECT": "p", "GOOGLE_CLOUD_LOCATION": "us-central1"}
    assert endpoint_url("vertex", None, "m", place).startswith("https://us-central1-aiplatform.googleapis.com/v1/")


def test_the_request_and_answer_shapes():
    wire = GoogleGenerate(Place("p", "global"))
    request = ChatRequest(
        "m",
        [
            {"role": "system", "content": "grade"},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello"},
        ],
        schema={"type": "object"},
        temperature=0.0,
        max_tokens=64,
    )
    assert wire.body(request) == {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}, {"role": "model", "parts": [{"text": "hello"}]}],
        "systemInstruction": {"parts": [{"text": "grade"}]},
        "generationConfig": {
            "temperature": 0.0,
            "maxOutputTokens": 64,
            "responseMimeType": "application/json",
            "responseJsonSchema": {"type": "object"},
        },
    }
    assert wire.headers(TOKEN) == {"Authorization": f"Bearer {TOKEN}"}
    assert GoogleGenerate().headers(KEY) == {"x-goog-api-key": KEY}
    answer = {"candidates": [{"content": {"parts": [{"text": "plan", "thought": True}, {"text": "ok"}]}}]}
    assert wire.answer_text(answer) == "ok"
    with pytest.raises(UnreadableAnswer, match="SAFETY"):
        wire.answer_text({"candidates": [{"finishReason": "SAFETY"}]})
    with pytest.raises(UnreadableAnswer, match="blocked"):
        wire.answer_text({"promptFeedback": {"blockReason": "OTHER"}})


def test_a_vertex_judge_without_its_project_is_refused_before_the_run():
    with pytest.raises(MissingJudgeKey, match="needs its Google Cloud project in GOOGLE_CLOUD_PROJECT"):
        judge_key(JudgeSettings(provider="vertex", model="g"), {"GOOGLE_OAUTH_ACCESS_TOKEN": TOKEN})
    place = JudgeSettings(provider="vertex", model="g", env={"GOOGLE_CLOUD_PROJECT": "p"})
    assert judge_key(place, {"GOOGLE_OAUTH_ACCESS_TOKEN": TOKEN}) == TOKEN


def test_the_google_keys_never_reach_the_agent():
    judge = JudgeSettings(provider="gemini", model="g")
    assert {"GEMINI_API_KEY", "GOOGLE_API_KEY"} <= judge_key_names(judge)
    vertex = JudgeSettings(provider="vertex", model="g")
    assert {"GOOGLE_OAUTH_ACCESS_TOKEN", "CLOUDSDK_AUTH_ACCESS_TOKEN"} <= judge_key_names(vertex)


def test_a_run_config_whose_vertex_judge_has_no_token_is_refused_before_it_starts(tmp_path):
    """Exit 2 naming the file, the entry and the variable; no traceback."""
    gemini = {"generator": "gcp_vertex_gemini", "vertex_model": "gemini-2.5-pro", "gcp_project_id": "p"}
    (tmp_path / "gemini.yaml").write_text(json.dumps(gemini))
    (tmp_path / "agent.yaml").write_text(json.dumps({"generator": "cli", "command": ["true"]}))
    (tmp_path / "set.json").write_text(json.dumps({"scenarios": [{"id": "a", "starting_prompt": "hi"}]}))
    run = {
        "dataset_config": "set.json",
        "model_config": "agent.yaml",
        "simulated_user_model_config": "gemini.yaml",
        "scorers": {"goal_completion": {"model_config": "gemini.yaml"}},
    }
    (tmp_path / "run.yaml").write_text(json.dumps(run))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "CLOUDSDK_"))}
    result = subprocess.run(
        [str(VENV_BIN / "bat-pipeline"), "run", str(tmp_path / "run.yaml")],
        env={**env, "BAT_PIPELINE_HOME": str(tmp_path / "home")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    said = result.stdout + result.stderr
    assert result.returncode == 2, said
    assert "run.yaml" in said and "GOOGLE_OAUTH_ACCESS_TOKEN or CLOUDSDK_AUTH_ACCESS_TOKEN" in said, said
    assert "Traceback" not in said
