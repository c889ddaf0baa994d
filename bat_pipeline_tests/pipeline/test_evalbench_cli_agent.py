"""A CLI agent holding multi-turn EvalBench scenarios (issue 16 point 4): one invocation per
turn, `{SESSION_DIR}` kept for the episode and used as HOME, the scenario's `env` applied,
the simulated user (the scripted server) answering in between; a failing invocation ends
the conversation as the agent's failure."""

from __future__ import annotations

import json
import sys
import textwrap

import yaml

from bat_pipeline_tests.support.example_agent import pipeline_env, run
from bat_pipeline_tests.support.paths import VENV_BIN

AGENT = textwrap.dedent("""
    import json, os, sys
    prompt, session = sys.argv[1], sys.argv[2]
    assert os.environ["HOME"] == session, "HOME is the session folder"
    history = os.path.join(session, "history.txt")
    said = open(history).read().splitlines() if os.path.exists(history) else []
    with open(history, "a") as out:
        out.write(prompt + "\\n")
    if "fail" in prompt:
        print("the agent broke", file=sys.stderr)
        sys.exit(3)
    calls = [{"tool": "get_weather", "input": {"city": "Paris"}, "output": "sunny"}] if "weather" in prompt else []
    text = f"turn {len(said) + 1} for {os.environ.get('SCENARIO_VAR', '-')}; earlier: {' | '.join(said) or 'none'}"
    print(json.dumps({"text": text, "output": [{"role": "assistant", "content": text, "tool_calls": calls}]}))
""")


def test_a_cli_agent_holds_a_conversation_in_its_session(tmp_path, scripted_llm):
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "set.json").write_text(
        json.dumps(
            {
                "scenarios": [
                    {
                        "id": "remembers",
                        "starting_prompt": "What is the weather?",
                        "env": {"SCENARIO_VAR": "s1"},
                        "conversation_plan": "Then say 'Thanks, and the day after?'.",
                        "expected_trajectory": ["get_weather"],
                        "max_turns": 3,
                    },
                    {
                        "id": "breaks",
                        "starting_prompt": "hello",
                        "conversation_plan": "Then say 'please fail now'. Then 'x'.",
                        "max_turns": 3,
                    },
                ]
            }
        )
    )
    (tmp_path / "cli.yaml").write_text(
        yaml.safe_dump(
            {
                "generator": "cli",
                "name": "script-agent",
                "command": [sys.executable, str(tmp_path / "agent.py"), "{PROMPT}", "{SESSION_DIR}"],
            }
        )
    )
    (tmp_path / "user.yaml").write_text(
        yaml.safe_dump(
            {
                "provider": "openai",
                "model": "scripted-user",
                "base_url": "{scripted_llm}/v1",
                "api_key_env": "BAT_DEMO_JUDGE_KEY",
            }
        )
    )
    run_config = tmp_path / "run_config.yaml"
    run_config.write_text(
        yaml.safe_dump(
            {
                "dataset_config": "set.json",
                "model_config": "cli.yaml",
                "simulated_user_model_config": "user.yaml",
                "scorers": {"trajectory_matcher": {}, "turn_count": {}},
            }
        )
    )
    root = tmp_path / "home"
    result = run(
        [str(VENV_BIN / "bat-pipeline"), "run", str(run_config)], pipeline_env(run_config, root, scripted_llm.url)
    )
    assert "script-agent 2/2" in result.stdout, result.stdout

    [partition] = (root / "runs").glob("*/script-agent")
    episodes = {p.stem: json.loads(p.read_text()) for p in (partition / "episodes").glob("*.json")}
    remembers = episodes["remembers__try0"]
    log = remembers["aux"]["conversation"]
    assert log["ended"] == "terminated"
    assert [(t["user"], t["generated"]) for t in log["turns"]] == [
        ("What is the weather?", False),
        ("Thanks, and the day after?", True),
    ]
    assert log["turns"][0]["agent"] == "turn 1 for s1; earlier: none"
    assert log["turns"][1]["agent"] == "turn 2 for s1; earlier: What is the weather?"  # the session persists
    rows = {r["criterion"]: r for r in remembers["scores"]}
    assert rows["trajectory_matcher"]["value"] == 1.0 and remembers["verdict"]["passed"] is True
    assert remembers["trace"]["trajectory"]["turns"][0]["steps"][0]["name"] == "get_weather"

    broken = episodes["breaks__try0"]["aux"]["conversation"]
    assert broken["ended"] == "agent_failed" and len(broken["turns"]) == 2
    assert broken["turns"][1]["status"] == "error" and "the agent broke" in broken["turns"][1]["agent"]
    assert "eval_error" not in episodes["breaks__try0"]["aux"]


def test_a_scenarios_variable_that_loads_code_runs_only_in_trusted_datasets(tmp_path, scripted_llm):
    """`PYTHONPATH` in a scenario's `env` makes the CLI agent's Python import the dataset's
    `sitecustomize.py`: `bat-pipeline run` refuses the dataset (exit 2, naming it), nothing
    runs; with `--trust-datasets` the variable reaches the agent (the steps' processes got
    the flag)."""
    evil = tmp_path / "evil"
    evil.mkdir()
    marker = tmp_path / "code-ran"
    (evil / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'a').write('ran\\n')\n")
    (tmp_path / "agent.py").write_text(AGENT)
    dataset = tmp_path / "set.json"
    scenario = {"id": "s", "starting_prompt": "hello", "env": {"PYTHONPATH": str(evil)}, "max_turns": 1}
    dataset.write_text(json.dumps({"scenarios": [scenario]}))
    (tmp_path / "cli.yaml").write_text(
        yaml.safe_dump(
            {
                "generator": "cli",
                "name": "script-agent",
                "command": [sys.executable, str(tmp_path / "agent.py"), "{PROMPT}", "{SESSION_DIR}"],
            }
        )
    )
    run_config = tmp_path / "run_config.yaml"
    run_config.write_text(yaml.safe_dump({"dataset_config": "set.json", "model_config": "cli.yaml"}))
    root = tmp_path / "home"
    env = pipeline_env(run_config, root, scripted_llm.url)
    refused = run([str(VENV_BIN / "bat-pipeline"), "run", str(run_config)], env)
    assert refused.returncode == 2, refused.stdout
    assert f"error: {dataset}, scenario 's', field 'env.PYTHONPATH': the variable PYTHONPATH" in refused.stdout
    assert "--trust-datasets" in refused.stdout and "Traceback" not in refused.stdout
    assert not marker.exists() and not (root / "runs").exists()

    trusted = run([str(VENV_BIN / "bat-pipeline"), "run", "--trust-datasets", str(run_config)], env)
    assert "script-agent 1/1" in trusted.stdout, trusted.stdout
    assert marker.read_text() == "ran\n"
