"""An agent that only exports OTLP (issue 35), end to end: `bat-pipeline run` starts an OTLP
receiver per partition, points the test agent (bat_pipeline_tests/otlp_agent: a2a-sdk, the
OpenTelemetry SDK and its stock OTLP/HTTP exporter with a BatchSpanProcessor, GenAI spans)
at it, and its tool, agent-call and limit checks come out as the bundled agent's do on the
same tasks and scripted models."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from bat_pipeline_tests.support.example_agent import run
from bat_pipeline_tests.support.paths import BAT_PIPELINE
from bat_pipeline_tests.support.processes import leftover_agents

pytestmark = pytest.mark.slow(seconds=25)

MODELS = ("openai-competent", "openai-sloppy")
TASKS = ("weather_paris", "add_numbers", "forecast_from_subagent", "compare_two_cities", "madrid_token_budget")
CHECKED = ("tool_call", "agent_call", "model_calls", "tokens", "no_errors")
"""The checks that read the trajectory (their names start so)."""
OTLP_AGENT = {
    # It exits without flushing: the last turns' spans arrive only through the wait for
    # exported spans after the conversations (the batch processor sends them a delay later).
    "command": ["{python}", "-m", "bat_pipeline_tests.otlp_agent", "--port", "{port}", "--no-flush-at-exit"],
    "spans": "otlp",
    # The stock batch processor, with its delay cut from 5 s to 1 s (a standard variable).
    "env": {"OTEL_BSP_SCHEDULE_DELAY": "1000"},
}


def verdict_checks(run_dir: Path) -> dict[tuple[str, str], list[tuple[str, bool]]]:
    """(model key, task) → the trajectory checks of its episode's verdict."""
    out = {}
    for model in MODELS:
        for path in (run_dir / model / "episodes").glob("*.json"):
            episode = json.loads(path.read_text())
            checks = [(c["check"], c["passed"]) for c in episode["verdict"]["checks"] if c["check"].startswith(CHECKED)]
            out[(model, episode["task_id"])] = checks
    return out


@pytest.fixture(scope="module")
def evaluated(workspace_factory):
    common = {"tasks": TASKS, "models": MODELS, "evaluation": {"qualitative": False}}
    bundled = workspace_factory("otlp_bundled", **common)
    otlp = workspace_factory(
        "otlp_agent", tasks=TASKS, models=MODELS, evaluation={"qualitative": False, "extra_spans": []}, agent=OTLP_AGENT
    )
    # The OTLP agent has no config.yaml and no other span file: its spans come only over OTLP.
    (otlp.agent / "config.yaml").unlink()
    with subprocess.Popen(
        [str(BAT_PIPELINE), "run", str(bundled.agent)],
        env=bundled.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    ) as reference:
        result = run([str(BAT_PIPELINE), "run", str(otlp.agent)], otlp.env)
        reference_out, _ = reference.communicate(timeout=240)
    assert reference.returncode == 0, reference_out[-4000:]
    return bundled, otlp, result


def test_the_otlp_agent_gets_the_bundled_agents_verdicts(evaluated):
    bundled, otlp, result = evaluated
    assert result.returncode == 0, result.stdout[-4000:]
    expected = verdict_checks(bundled.only_run_dir())
    got = verdict_checks(otlp.only_run_dir())
    assert sorted(got) == sorted(expected) and len(got) == len(MODELS) * len(TASKS)
    assert got == expected
    # Both ways of every kind of check occur: the comparison is not vacuous.
    outcomes = {(check.split(":")[0], passed) for checks in got.values() for check, passed in checks}
    assert {("tool_call", True), ("tool_call", False), ("agent_call", True), ("agent_call", False)} <= outcomes
    assert {("model_calls", True), ("tokens", True)} <= outcomes


def test_spans_came_over_otlp_into_the_partition_span_file(evaluated):
    _, otlp, _ = evaluated
    run_dir = otlp.only_run_dir()
    for model in MODELS:
        lines = (run_dir / model / "spans" / "agent.jsonl").read_text().splitlines()
        names = {json.loads(line)["name"] for line in lines}
        assert {"invoke_agent OtelWeather", f"chat {model.split('-')[1]}", "execute_tool get_weather"} <= names
        partition = json.loads((run_dir / model / "partition.json").read_text())
        assert partition["span_files"] == ["spans/agent.jsonl"]
    # The Forecaster, a process of its own, exported to the same receiver.
    competent = (run_dir / "openai-competent" / "spans" / "agent.jsonl").read_text()
    assert "execute_tool forecast_table" in competent
    assert leftover_agents(otlp.agent, str(otlp.dagster_home)) == []
