"""`bat-pipeline run` runs that fail, each on its own trimmed copy of the example: one
model's agent cannot start (the others complete), every episode of a model errored, the
warehouse is held by another process. Each says why on the terminal and leaves no agent."""

from __future__ import annotations

import pytest

from bat_pipeline_tests.support.example_agent import FEW_TASKS, SLOPPY
from bat_pipeline_tests.support.processes import leftover_agents

pytestmark = pytest.mark.slow(seconds=40)


def test_a_model_whose_agent_cannot_start_fails_alone(workspace_factory):
    # The sloppy model's agent exits at once; the competent one starts normally.
    command = ["sh", "-c", '[ "$MODEL" = sloppy ] && exit 3; exec "{python}" -m bat_pipeline.example.agent']
    ws = workspace_factory("run_failing", models=("openai-competent", SLOPPY), agent={"command": command})
    config_before = (ws.agent / "config.yaml").read_bytes()
    eval_before = (ws.agent / "eval" / "eval.yaml").read_bytes()
    result = ws.bat_pipeline_run()
    assert result.returncode == 1, result.stdout[-4000:]
    assert f"✗ {SLOPPY} failed" in result.stdout
    assert "exited with code 3" in result.stdout
    assert "✗ openai-competent" not in result.stdout

    run_id = ws.only_run_dir().name
    assert ws.pass_counts(run_id) == {"openai-competent": dict.fromkeys(FEW_TASKS, 1)}
    assert (ws.agent / "config.yaml").read_bytes() == config_before
    assert (ws.agent / "eval" / "eval.yaml").read_bytes() == eval_before
    assert leftover_agents(ws.agent, str(ws.root)) == []


def test_a_model_whose_every_episode_errored_fails_and_says_why(workspace_factory):
    # The agent starts, but its model is unreachable: every conversation ends in error.
    ws = workspace_factory("run_all_errored", models=("openai-competent",))
    eval_file = ws.agent / "eval" / "eval.yaml"
    eval_file.write_text(eval_file.read_text().replace("{scripted_llm}/v1", "http://127.0.0.1:9/v1"))
    result = ws.bat_pipeline_run()
    assert result.returncode == 1, result.stdout[-4000:]
    assert "✗ openai-competent failed" in result.stdout
    assert "every episode of openai:competent errored (3), so nothing was measured" in result.stdout
    run_id = ws.only_run_dir().name
    # Everything is kept: the episodes, and their rows for inspection.
    assert len(list((ws.root / "runs" / run_id / "openai-competent" / "episodes").glob("*.json"))) == 3
    assert leftover_agents(ws.agent, str(ws.root)) == []


def test_a_locked_warehouse_is_reported_on_the_terminal(workspace_factory):
    import duckdb

    ws = workspace_factory("run_locked", models=("openai-competent",))
    ws.root.mkdir(parents=True, exist_ok=True)
    holder = duckdb.connect(str(ws.root / "warehouse.duckdb"))  # read-write: DuckDB locks the file
    try:
        result = ws.bat_pipeline_run(env={**ws.env, "BAT_PIPELINE_WAREHOUSE_WAIT_S": "1"})
    finally:
        holder.close()
    assert result.returncode == 1, result.stdout[-4000:]
    failure = result.stdout.split("✗ openai-competent failed", 1)[1]
    assert "step weather_agent__eval_metrics failed: could not open the warehouse" in failure
    assert "another process holds it" in failure
    assert len(list(ws.root.glob("runs/*/openai-competent/episodes/*.json"))) == 3
