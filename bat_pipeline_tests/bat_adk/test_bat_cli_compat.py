"""`bat-pipeline run` against what the published `bat eval run` wrote for the same agent
(fixtures/bat-cli-sample, made by scripts/make-bat-cli-sample): the standalone bat-adk agent,
both scripted models, k=2, the scripted judge, the judge's key only in the agent's `.env`.

- The files a bat-cli tool reads (episodes, summary.json, metrics.json) hold every key
  bat-cli writes, with the same JSON type (ours may hold more).
- The pass counts per task are bat-cli's.
- Without the key anywhere, the run is refused before any agent starts.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bat_pipeline_tests.support.bat_adk import STANDALONE, copy_agent
from bat_pipeline_tests.support.files import read_json
from bat_pipeline_tests.support.paths import FIXTURES
from bat_pipeline_tests.support.pipeline_runs import PipelineRun, pipeline_env, start_pipeline
from bat_pipeline_tests.support.processes import working_in

pytestmark = pytest.mark.slow(seconds=17)

SAMPLE = FIXTURES / "bat-cli-sample"
RUN_NAME = "benchmark"
MODELS = ("openai:competent", "openai:sloppy")
KEY_VAR = "BAT_JUDGE_API_KEY"


def sample_dir(model: str) -> Path:
    return SAMPLE / f"{RUN_NAME}_{model.replace(':', '-')}"


def _agent_copy(base: Path, name: str, *, dotenv: str | None) -> Path:
    """The standalone agent with the sample's eval.yaml (the judge on the scripted server)."""
    agent = copy_agent(STANDALONE, base / name)
    eval_text = (SAMPLE / "eval.yaml").read_text().replace("http://127.0.0.1:PORT", "${BAT_DEMO_LLM_URL}")
    (agent / "eval" / "eval.yaml").write_text(eval_text)
    if dotenv is not None:
        (agent / ".env").write_text(dotenv)
    return agent


def _shell_without_keys(bat_adk_env, scripted_llm, home: Path) -> dict[str, str]:
    env = pipeline_env(bat_adk_env, home, scripted_llm.url)
    for name in (KEY_VAR, "OPENAI_API_KEY"):
        env.pop(name, None)
    return env


@pytest.fixture(scope="module")
def judged_run(bat_adk_env, scripted_llm, tmp_path_factory) -> PipelineRun:
    base = tmp_path_factory.mktemp("bat_cli_compat")
    agent = _agent_copy(base, "weather", dotenv=f"{KEY_VAR}=key-only-in-the-dotenv\n")
    home = base / "home"
    run = start_pipeline(agent, _shell_without_keys(bat_adk_env, scripted_llm, home), home)
    run.wait()
    return run


# --- shapes ------------------------------------------------------------------------------


def _type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def shape(documents: list[Any]) -> dict[str, set[str]]:
    """JSON path → the JSON types seen there over all documents. List items share one
    path (`[]`), by `kind` when they have one (`steps[kind=tool]`)."""
    found: dict[str, set[str]] = defaultdict(set)

    def walk(value: Any, path: str) -> None:
        found[path].add(_type(value))
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{path}.{key}")
        elif isinstance(value, list):
            for item in value:
                kind = f"kind={item['kind']}" if isinstance(item, dict) and isinstance(item.get("kind"), str) else ""
                walk(item, f"{path}[{kind}]")

    for document in documents:
        walk(document, "$")
    return found


def shape_gaps(theirs: dict[str, set[str]], ours: dict[str, set[str]]) -> list[str]:
    """What a reader of bat-cli's files would miss in ours: a path bat-cli writes that we
    do not, a value of another JSON type, or null where bat-cli never writes null."""
    gaps = []
    for path, types in sorted(theirs.items()):
        if path not in ours:
            gaps.append(f"{path}: missing (bat-cli writes {sorted(types)})")
            continue
        mine = ours[path]
        other = (mine - {"null"}) - types
        if other:
            gaps.append(f"{path}: {sorted(other)} where bat-cli writes {sorted(types)}")
        if "null" in mine and "null" not in types:
            gaps.append(f"{path}: null where bat-cli writes {sorted(types)}")
        if types - {"null"} and not mine - {"null"}:
            gaps.append(f"{path}: always null, bat-cli writes {sorted(types)}")
    return gaps


def _documents(folder: Path, kind: str) -> list[Any]:
    if kind == "episode":
        return [read_json(p) for p in sorted((folder / "episodes").glob("*.json"))]
    return [read_json(folder / f"{kind}.json")]


@pytest.mark.parametrize("kind", ["episode", "summary", "metrics"])
def test_every_key_bat_cli_writes_is_there_with_its_type(judged_run, kind):
    assert judged_run.proc.returncode == 0, judged_run.output[-4000:]
    theirs = [d for model in MODELS for d in _documents(sample_dir(model), kind)]
    ours = [d for model in MODELS for d in _documents(judged_run.reference_dir(RUN_NAME, model), kind)]
    assert theirs and len(ours) == len(theirs)
    assert shape_gaps(shape(theirs), shape(ours)) == []


def test_summary_values_read_as_bat_cli_writes_them(judged_run):
    for model in MODELS:
        summary = read_json(judged_run.reference_dir(RUN_NAME, model) / "summary.json")
        sample = read_json(sample_dir(model) / "summary.json")
        assert summary["model_name"] == sample["model_name"] == model.split(":", 1)[1]
        assert summary["passed"] == sample["passed"]
        # YYYYMMDD_HHMMSS, UTC: when the model's evaluation started (the run id starts
        # with the run's UTC start, YYYYMMDDTHHMMSSZ).
        stamp = datetime.strptime(summary["timestamp_utc"], "%Y%m%d_%H%M%S")
        started = datetime.strptime(judged_run.run_id[:16], "%Y%m%dT%H%M%SZ")
        assert timedelta(0) <= stamp - started < timedelta(minutes=5), (summary["timestamp_utc"], judged_run.run_id)
        metrics = read_json(judged_run.reference_dir(RUN_NAME, model) / "metrics.json")
        assert metrics["summary"]["episodes"] == read_json(sample_dir(model) / "metrics.json")["summary"]["episodes"]
        for row in metrics["per_episode"]:
            reasons = row["qualitative"]["judge_reasoning"]
            assert set(reasons) == {"relevance", "task_completion", "hallucination", "tool_call"}, row


def pass_counts(summary: dict) -> dict[str, int]:
    return {a["task_id"]: a["passed"] for a in summary["attempts"]}


def test_judge_key_only_in_the_dotenv_gives_bat_clis_pass_counts(judged_run):
    assert judged_run.proc.returncode == 0, judged_run.output[-4000:]
    for model in MODELS:
        ours = read_json(judged_run.reference_dir(RUN_NAME, model) / "summary.json")
        theirs = read_json(sample_dir(model) / "summary.json")
        assert list(pass_counts(ours).items()) == list(pass_counts(theirs).items()), model
        # The judge ran with the key from the .env: every asked rubric has a score.
        for path in (judged_run.reference_dir(RUN_NAME, model) / "episodes").glob("*.json"):
            scores = read_json(path)["qualitative_scores"]
            assert scores["task_completion_quality"] is not None, (path.name, scores)


def test_no_judge_key_anywhere_is_refused_before_any_agent_starts(bat_adk_env, scripted_llm, tmp_path):
    agent = _agent_copy(tmp_path, "weather", dotenv=None)
    home = tmp_path / "home"
    asked = scripted_llm.count()
    run = start_pipeline(agent, _shell_without_keys(bat_adk_env, scripted_llm, home), home)
    assert run.wait(120) == 2, run.output[-4000:]
    message = run.output
    assert KEY_VAR in message and "judge.api_key_env" in message
    assert f"{agent / '.env'} (no such file)" in message
    assert "the shell" in message and "judge.env" in message
    assert "Traceback" not in message
    assert list(home.rglob("agent.log")) == [] and not (home / "runs").exists()
    assert not (agent / "eval" / "output").exists()
    assert scripted_llm.count() == asked
    assert working_in(agent) == []
