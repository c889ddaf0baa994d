"""judge_partition: the body of the judge_scores asset, over stored episodes."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from dagster import MaterializeResult, asset, materialize

from bat_pipeline import storage
from bat_pipeline.engine.contracts import EvalConfig, JudgeSettings, ModelSpec
from bat_pipeline.resources.judge import JudgeClient, JudgeConfigError, JudgeResource, judge_episodes
from bat_pipeline.resources.judge_partition import judge_partition
from bat_pipeline.storage import PartitionRef
from bat_pipeline_tests.support.judge_server import Reply, serve_judge, weather_episode, weather_task

KEY = "sk-CANARY-partition-91c2"


def make_ref(tmp_path: Path) -> PartitionRef:
    ref = PartitionRef(
        run_id="20250101T000000Z",
        run_name="benchmark",
        model_key="openai-agent-model",
        model_name="openai:agent-model",
        k=2,
        agent_dir=tmp_path,
        dir=tmp_path / "runs" / "r" / "m",
        output_dir=tmp_path / "out",
    )
    storage.store_episodes(ref, [weather_episode(attempt=0), weather_episode(attempt=1)])
    return ref


def make_config(tmp_path: Path, base_url: str, *, qualitative: bool = True, **judge) -> EvalConfig:
    settings = JudgeSettings(
        **{"provider": "openai", "model": "judge-1", "base_url": base_url, "max_retries": 0, **judge}
    )
    return EvalConfig(
        evaluation={"qualitative": qualitative},
        judge=settings,
        models=[ModelSpec(provider="openai", model="agent-model")],
        agent_dir=tmp_path,
        source=tmp_path / "eval" / "eval.yaml",
    )


def test_scores_are_written_into_episodes_and_judge_json(tmp_path):
    ref = make_ref(tmp_path)
    with serve_judge() as server:
        config = make_config(tmp_path, server.base_url)
        client = JudgeClient(config.judge, environ={"OPENAI_API_KEY": KEY})
        outcome = judge_partition(ref, config, [weather_task()], client)
    assert outcome.enabled and outcome.stats.calls == 8
    meta = outcome.metadata()
    assert meta["mean_task_completion_quality"] == 0.8 and meta["calls"] == 8
    assert meta["cache_hits"] == 0 and meta["failures"] == 0
    for episode in storage.load_episodes(ref):
        assert episode.qualitative_scores.response_relevance == 0.8
    written = storage.read_json(ref.file("judge.json"))
    assert written["enabled"] and len(written["episodes"]) == 2
    assert written["mean_scores"]["hallucination_score"] == 0.8
    for path in ref.dir.rglob("*.json"):
        assert KEY not in path.read_text()


def test_judge_off_asks_nothing_and_says_so(tmp_path):
    ref = make_ref(tmp_path)
    with serve_judge() as server:
        config = make_config(tmp_path, server.base_url, qualitative=False)
        outcome = judge_partition(ref, config, [weather_task()], JudgeResource(storage_root=str(tmp_path)))
        assert server.requests == []
    assert not outcome.enabled and "qualitative" in outcome.reason
    assert outcome.metadata()["judge"] == "off"
    assert storage.read_json(ref.file("judge.json"))["enabled"] is False
    assert all(e.qualitative_scores is None for e in storage.load_episodes(ref))


def test_resource_uses_the_cache_and_checks_the_key(tmp_path, monkeypatch):
    ref = make_ref(tmp_path)
    resource = JudgeResource(storage_root=str(tmp_path))
    with serve_judge() as server:
        config = make_config(tmp_path, server.base_url, api_key_env="PARTITION_JUDGE_KEY")
        monkeypatch.delenv("PARTITION_JUDGE_KEY", raising=False)
        with pytest.raises(JudgeConfigError, match="PARTITION_JUDGE_KEY"):
            judge_partition(ref, config, [weather_task()], resource)
        assert server.requests == []
        monkeypatch.setenv("PARTITION_JUDGE_KEY", KEY)
        first = judge_partition(ref, config, [weather_task()], resource)
        second = judge_partition(ref, config, [weather_task()], resource)
    assert first.stats.calls == 8 and second.stats.calls == 0 and second.stats.cache_hits == 8
    assert len(server.requests) == 8
    assert all(KEY not in p.read_text() for p in (tmp_path / "judge_cache").rglob("*.json"))


def test_resource_reads_the_key_from_the_agents_dotenv(tmp_path, monkeypatch):
    """As `bat eval`: the judge's key may live only in the agent project's .env."""
    ref = make_ref(tmp_path)
    resource = JudgeResource(storage_root=str(tmp_path), use_cache=False)
    monkeypatch.delenv("PARTITION_JUDGE_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "the-shells-other-key")
    with serve_judge() as server:
        config = make_config(tmp_path, server.base_url, api_key_env="PARTITION_JUDGE_KEY")
        with pytest.raises(JudgeConfigError) as missing:
            judge_partition(ref, config, [weather_task()], resource)
        assert f"{tmp_path / '.env'} (no such file), the shell" in str(missing.value)
        (tmp_path / ".env").write_text(f"PARTITION_JUDGE_KEY={KEY}\n")
        outcome = judge_partition(ref, config, [weather_task()], resource)
    assert outcome.stats.failures == 0 and len(server.requests) == 8
    assert {r["headers"]["authorization"] for r in server.requests} == {f"Bearer {KEY}"}


def test_a_broken_judge_loses_no_episode(tmp_path):
    ref = make_ref(tmp_path)
    with serve_judge() as server:
        server.script(default=Reply(status=500, error="down"))
        config = make_config(tmp_path, server.base_url)
        outcome = judge_partition(
            ref, config, [weather_task()], JudgeClient(config.judge, environ={"OPENAI_API_KEY": KEY})
        )
    assert outcome.stats.failures == 8 and outcome.mean_scores["response_relevance"] is None
    episodes = storage.load_episodes(ref)
    assert len(episodes) == 2
    assert all("HTTP 500" in e.qualitative_scores.judge_errors["relevance"] for e in episodes)


def test_unknown_task_is_a_failure_with_the_reason(tmp_path):
    ref = make_ref(tmp_path)
    with serve_judge() as server:
        config = make_config(tmp_path, server.base_url)
        outcome = judge_partition(ref, config, [], JudgeClient(config.judge, environ={"OPENAI_API_KEY": KEY}))
        assert server.requests == []
    episode = storage.load_episodes(ref)[0]
    assert "not in the dataset" in episode.qualitative_scores.judge_errors["task_completion"]
    assert outcome.stats.failures == 8


# --- against the example's scripted model server --------------------------------------


def test_scripted_llm_judge_persona(scripted_llm, tmp_path):
    with scripted_llm.restoring() as llm:
        settings = JudgeSettings(provider="openai", model="judge", base_url=llm.url, max_retries=0)
        client = JudgeClient(settings, environ={"OPENAI_API_KEY": KEY})
        result = asyncio.run(judge_episodes(client, [weather_episode()], [weather_task()]))
        scores = result.scores[0]
        assert scores.judge_errors == {}
        assert all(0 <= scores.score(r) <= 1 for r in ("relevance", "task_completion", "hallucination", "tool_call"))
        for rubric, text in scores.judge_reasoning.items():  # the persona recognised each prompt
            assert f"rubric {rubric};" in text

        llm.set(no_structured_output=True, think=True)
        fallback = JudgeClient(settings, environ={"OPENAI_API_KEY": KEY})
        again = asyncio.run(judge_episodes(fallback, [weather_episode()], [weather_task()]))
        assert again.scores[0].judge_errors == {} and sorted(again.stats.text_fallbacks) == sorted(
            ["relevance", "task_completion", "hallucination", "tool_call"]
        )

        anthropic = JudgeClient(
            settings.model_copy(update={"provider": "anthropic"}), environ={"ANTHROPIC_API_KEY": KEY}
        )
        third = asyncio.run(judge_episodes(anthropic, [weather_episode()], [weather_task()]))
        assert third.scores[0].judge_errors == {}


def test_resource_in_a_dagster_materialization(tmp_path, monkeypatch):
    ref = make_ref(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with serve_judge() as server:
        config = make_config(tmp_path, server.base_url)

        @asset
        def judge_scores(judge: JudgeResource) -> MaterializeResult:
            outcome = judge_partition(ref, config, [weather_task()], judge)
            return MaterializeResult(metadata=outcome.metadata())

        result = materialize([judge_scores], resources={"judge": JudgeResource(storage_root=str(tmp_path))})
    assert result.success
    metadata = result.asset_materializations_for_node("judge_scores")[0].metadata
    assert metadata["mean_response_relevance"].value == 0.8 and metadata["calls"].value == 8
    assert all(KEY not in str(v.value) for v in metadata.values())
