"""EvalBench's CLI generators (`claude_code`, `gemini_cli`, `codex_cli`) run as EvalBench
runs them: their command lines, fake homes and setup files, and each CLI's stream output
read into EvalBench's envelope with its tool-name canonicalisation.

The CLIs are fake executables on PATH (harness/fake_agent_cli.py behind `claude`,
`gemini`, `codex` and `npm`) printing each CLI's real stream format for the turns of
harness/transcripts.json; the runs are `bat-pipeline run` of EvalBench's own run configs
(corpus/), the Claude one with its model config as it is. Their figures are EvalBench's
(harness/expected.json) except where a CLI's stream cannot carry a transcript's number, as
EvalBench's parser of that stream reads it (named per case below)."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest
import yaml

from bat_pipeline.engine import evalbench_clis as clis
from bat_pipeline.engine.config.evalbench_run import load_run_config
from bat_pipeline.engine.contracts.agentv import AgentvTarget
from bat_pipeline.engine.contracts.config import SimulatedUserSettings
from bat_pipeline.engine.contracts.evalbench import CliHarness
from bat_pipeline.engine.contracts.scenario import Scenario
from bat_pipeline.engine.contracts.tasks import Task
from bat_pipeline.engine.conversation import Attempt
from bat_pipeline.engine.redaction import secret_values
from bat_pipeline.resources.cli_conversations import run_cli_conversations
from bat_pipeline.resources.simulated_user import SimulatedUserClient
from bat_pipeline_tests.evalbench.test_corpus import CORPUS, EXPECTED, HARNESS, VARIABLES, read, repository
from bat_pipeline_tests.evalbench.verify_harness_rules import problems
from bat_pipeline_tests.support.example_agent import pipeline_env, run
from bat_pipeline_tests.support.paths import VENV_BIN

FAKE = HARNESS / "fake_agent_cli.py"
TRANSCRIPTS = json.loads((HARNESS / "transcripts.json").read_text(encoding="utf-8"))
SMOKE = ".ci/harness_smoke.evalset.json"


def fake_path(folder: Path) -> str:
    """A PATH whose `claude`, `gemini`, `codex` and `npm` are the fake CLI."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("claude", "gemini", "codex", "npm"):
        script = folder / name
        script.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" {name} "$@"\n')
        script.chmod(0o755)
    return f"{folder}{os.pathsep}{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"


def prompts_file(repo: Path, evalset: str, path: Path) -> Path:
    """Each scenario's starting prompt (its `${VAR}`s filled) → its id, for the fake CLI."""
    scenarios = json.loads((repo / evalset).read_text(encoding="utf-8"))["scenarios"]
    fill = lambda text: re.sub(r"\$\{(\w+)\}", lambda m: VARIABLES[m.group(1)], text)  # noqa: E731
    path.write_text(json.dumps({fill(s["starting_prompt"]): s["id"] for s in scenarios}))
    return path


def invocations(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def cache_creation(scenario: str) -> float:
    return sum(
        stats["tokens"].get("cache_creation", 0)
        for turn in TRANSCRIPTS[scenario]
        for stats in turn["stats"]["models"].values()
    )


def expected_for(generator: str, want: dict) -> float | None:
    """EvalBench's figure for one score of harness/expected.json when the harness is
    `generator`'s CLI printing that transcript; None where it is not reproducible."""
    name, score, scenario = want["comparator"], want["score"], want["scenario"]
    if generator == "claude_code" and name == "tool_call_latency":
        return 0.0  # claude_code.py _parse_stream_json: "totalDurationMs": 0 (no tool times in its stream)
    if generator == "claude_code" and name == "end_to_end_latency":
        # ... and every model of result.modelUsage gets the turn's duration_ms as its totalLatencyMs.
        return sum(
            len(turn["stats"]["models"]) * sum(m["api"]["totalLatencyMs"] for m in turn["stats"]["models"].values())
            for turn in TRANSCRIPTS[scenario]
        )
    if generator in ("gemini_cli", "codex_cli") and name in ("tokens_processed", "effective_billed_tokens"):
        # gemini_cli.py / codex_cli.py: no cache_creation in their streams' token counts.
        return score - cache_creation(scenario) * (1.0 if name == "tokens_processed" else 1.25)
    if generator == "codex_cli" and name in ("tool_call_latency", "end_to_end_latency"):
        return None  # codex_cli.py: the process's wall time and event arrival stamps
    return score


CASES = {
    "claude_code": (".ci/run_configs/claude_code.yaml", {}, "results/ci/claude_code"),
    "gemini_cli": (".ci/run_config.yaml", {"CI_HARNESS": "gemini_cli"}, "results/ci/gemini_cli"),
    "codex_cli": (".ci/run_config.yaml", {"CI_HARNESS": "codex_cli"}, "results/ci/codex_cli"),
}
MODEL_CONFIGS = {
    "gemini_cli": {
        "generator": "gemini_cli",
        "gemini_cli_version": "@google/gemini-cli@0.9.0",
        "setup": {"mcp_servers": {"cloud-sql": {"httpUrl": "https://sqladmin.googleapis.com/mcp"}}},
    },
    "codex_cli": {
        "generator": "codex_cli",
        "model": "gpt-5-codex",
        "env": {"OPENAI_API_KEY": "sk-fake-codex"},
        "setup": {"mcp_servers": {"cloud-sql": {"command": "npx", "args": ["-y", "cloud-sql-mcp"]}}},
    },
}


@pytest.mark.parametrize("generator", sorted(CASES))
def test_an_evalbench_cli_generator_runs_its_cli(generator, tmp_path, scripted_llm, vertex):
    config, extra, output = CASES[generator]
    repo = repository(tmp_path)
    if generator == "claude_code":  # the corpus's Claude model config, as it is
        (repo / "datasets/model_configs/claude_code_model.yaml").write_text(
            (CORPUS / ".ci/model_configs/claude_code_model.yaml").read_text()
        )
    else:
        (repo / f".ci/model_configs/{generator}_model.yaml").write_text(yaml.safe_dump(MODEL_CONFIGS[generator]))
    log = tmp_path / "cli.log"
    env = {
        **pipeline_env(repo / config, tmp_path / "home", scripted_llm.url),
        **VARIABLES,
        **vertex,
        **extra,
        "PATH": fake_path(tmp_path / "bin"),
        "FAKE_CLI_LOG": str(log),
        "FAKE_CLI_PROMPTS": str(prompts_file(repo, SMOKE, tmp_path / "prompts.json")),
    }
    result = run([str(VENV_BIN / "bat-pipeline"), "run", config], env, cwd=repo)
    assert result.returncode == 0, result.stdout
    assert "Traceback" not in result.stdout, result.stdout

    # The CLI as EvalBench's generator runs it: its arguments, HOME and setup.
    home = repo / ".venv" / clis.FAKE_HOME[generator]
    calls = invocations(log)
    assert len(calls) == 2 and all(call["home"] == str(home) for call in calls)
    argv = calls[0]["argv"]
    if generator == "claude_code":
        assert calls[0]["cli"] == "claude" and calls[0]["IS_SANDBOX"] == "1"
        assert (calls[0]["via"], calls[0]["package"]) == ("npm", "@anthropic-ai/claude-code@latest")
        assert calls[0]["CLAUDE_CODE_USE_VERTEX"] == "1" and calls[0]["cwd"] == str(home)
        assert argv[argv.index("--output-format") + 1] == "stream-json" and "--strict-mcp-config" in argv
        assert argv[argv.index("--model") + 1] == "claude-opus-5"
        mcp = json.loads(Path(argv[argv.index("--mcp-config") + 1]).read_text())["mcpServers"]["cloud-sql"]
        assert mcp["type"] == "http" and mcp["url"] == "https://sqladmin.googleapis.com/mcp"
        assert mcp["headers"]["X-Goog-User-Project"] == VARIABLES["EVAL_GCP_PROJECT_ID"]
        assert mcp["headers"]["Authorization"] == "Bearer " + vertex["GOOGLE_OAUTH_ACCESS_TOKEN"]
        assert "gcloud auth" in mcp["headersHelper"] and "oauth" not in mcp
    elif generator == "gemini_cli":
        assert (calls[0]["via"], calls[0]["package"]) == ("npm", "@google/gemini-cli@0.9.0")
        assert argv[:3] == ["--yolo", "--output-format", "stream-json"] and argv[3] == "--prompt"
        settings = json.loads(Path(calls[0]["GEMINI_CLI_SYSTEM_SETTINGS_PATH"]).read_text())
        assert settings["mcpServers"] == MODEL_CONFIGS["gemini_cli"]["setup"]["mcp_servers"]
    else:
        assert argv[:3] == ["exec", "--json", "--skip-git-repo-check"] and calls[0]["cwd"] == str(home)
        assert "--dangerously-bypass-approvals-and-sandbox" in argv and argv[argv.index("-m") + 1] == "gpt-5-codex"
        toml = (home / ".codex" / "config.toml").read_text()
        assert '[mcp_servers.cloud-sql]\ncommand = "npx"\nargs = ["-y", "cloud-sql-mcp"]' in toml
        assert json.loads((home / ".codex" / "auth.json").read_text())["OPENAI_API_KEY"] == "sk-fake-codex"

    # The stream read as EvalBench reads it: the figures of the same transcripts.
    [job] = (repo / output).iterdir()
    scores = {(line["comparator"], line["id"]): line for line in read(job, "scores")}
    checked = 0
    for want in EXPECTED["cases"][".ci/run_config.yaml"]["scores"]:
        figure = expected_for(generator, want)
        if figure is None:
            continue
        line = scores[(want["comparator"], want["scenario"])]
        assert line["comparison_error"] == "", line
        assert float(line["score"]) == pytest.approx(figure, abs=0.1), (generator, want, line)
        checked += 1
    assert checked >= 12
    history = json.loads(read(job, "evals")[0]["conversation_history"])
    envelope = json.loads(history[0]["agent"])  # EvalBench's history keeps the converted output
    assert envelope["session_id"].endswith("~1") and envelope["stats"]["tools"]["byName"]
    if generator == "claude_code":
        # .ci/verify_harness.py on this output: what it says of EvalBench's own (its Claude
        # parser reports no tool time, and the gate wants tool_call_latency above 0).
        found, count = problems(repo / config, repo / SMOKE, repo, env)
        assert count > 0 and sorted(found) == [
            "tool_call_latency: ci-csql-get-instance-not-found reported 0",
            "tool_call_latency: ci-csql-list-and-get reported 0",
        ]


# --- engine: commands, homes, names, streams ---------------------------------------------


def harness(generator: str, **over) -> CliHarness:
    return clis.harness_from_config(generator, {"generator": generator, **over}, Path("/work"))


def test_later_turns_resume_the_session_the_previous_turn_named():
    claude = harness("claude_code", model="m", allowed_tools=["Read"])
    assert clis.command(claude, "again", resume=True, session_id="s-1")[-6:] == [
        "--strict-mcp-config",
        "--resume",
        "s-1",
        "--fork-session",
        "--allowedTools",
        "Read",
    ]
    assert clis.command(claude, "hi", resume=False, session_id=None)[:3] == ["claude", "-p", "hi"]
    gemini = harness("gemini_cli")
    assert clis.command(gemini, "hi", resume=True, session_id="s")[:7] == [
        "npm",
        "exec",
        "--yes",
        "gemini-cli",
        "--",
        "--resume",
        "--yolo",
    ]
    codex = harness("codex_cli", sandbox_mode="workspace-write", codex_cli_version="@openai/codex@0.40")
    assert clis.command(codex, "go", resume=True, session_id="t-9") == [
        *("npm", "exec", "--yes", "@openai/codex@0.40", "--", "exec", "resume", "t-9", "--json"),
        *("--skip-git-repo-check", "--sandbox", "workspace-write", "--ask-for-approval", "never", "go"),
    ]
    assert harness("claude_code").fake_home == Path("/work/.venv/fake_home_claude")


def test_tool_names_are_canonical():
    assert clis.claude_tool_name("mcp__cloud_sql__list__all") == "cloud_sql__list__all"
    assert clis.claude_tool_name("mcp__broken") == "mcp__broken" and clis.claude_tool_name("Bash") == "Bash"
    assert clis.gemini_tool_name("mcp_cloud-sql_list_instances") == "cloud-sql__list_instances"
    assert clis.gemini_tool_name("run_shell_command") == "run_shell_command"
    assert clis.canonical_tool_name("", "shell") == "shell"


def test_vertex_claude_and_placeholder_keys_as_evalbench_sets_them():
    config = {"use_vertex": True, "vertex_project_id": "p", "env": {"ANTHROPIC_API_KEY": "<API_KEY>"}}
    env = clis.environment(harness("claude_code", **config), {"HOME": "/home/u", "CLOUD_ML_REGION": "us-east5"})
    assert env["CLAUDE_CODE_USE_VERTEX"] == "1" and "ANTHROPIC_API_KEY" not in env
    assert (env["ANTHROPIC_VERTEX_PROJECT_ID"], env["CLOUD_ML_REGION"]) == ("p", "us-east5")
    keyed = clis.environment(harness("claude_code", use_vertex=True), {"ANTHROPIC_API_KEY": "sk-a"})
    assert keyed["ANTHROPIC_API_KEY"] == "sk-a" and "CLAUDE_CODE_USE_VERTEX" not in keyed


def test_a_failed_tool_and_a_codex_error_are_read_as_evalbench_reads_them():
    claude = "\n".join(
        json.dumps(e)
        for e in [
            {"type": "system", "session_id": "c1", "model": "opus"},
            {"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "t", "name": "mcp__db__q"}]}},
            {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t", "is_error": True}]}},
            {"type": "result", "result": "gave up", "usage": {"input_tokens": 5, "output_tokens": 1}},
            "not json",
        ]
    )
    envelope = clis.claude_envelope(claude)
    assert envelope["response"] == "gave up" and envelope["tool_calls"][0]["status"] == "error"
    assert envelope["stats"]["tools"]["byName"]["db__q"]["fail"] == 1
    assert envelope["stats"]["models"]["opus"]["tokens"]["total"] == 6
    codex = json.dumps({"type": "error", "message": "quota"})
    assert clis.codex_envelope(codex)["response"] == "[error] quota"


# --- resources: a conversation of several turns ------------------------------------------


@pytest.mark.parametrize("generator", sorted(CASES))
def test_each_turn_after_the_first_resumes_the_cli_session(generator, tmp_path, scripted_llm, monkeypatch):
    """Two turns (the scripted simulated user asks the plan's quoted follow-up): the second
    invocation resumes the session the first printed; each turn is the transcript's."""
    scenario_id = "csql-easy-list-instances"
    prompt = "List my Cloud SQL instances."
    prompts = tmp_path / "prompts.json"
    prompts.write_text(json.dumps({prompt: scenario_id}))
    log = tmp_path / "cli.log"
    monkeypatch.setenv("PATH", fake_path(tmp_path / "bin"))
    monkeypatch.setenv("FAKE_CLI_LOG", str(log))
    monkeypatch.setenv("FAKE_CLI_PROMPTS", str(prompts))
    config = MODEL_CONFIGS.get(generator, {"generator": generator})
    cli = clis.harness_from_config(generator, {**config, "generator": generator}, tmp_path)
    task = Task(
        id=scenario_id,
        turns=[prompt],
        scenario=Scenario(conversation_plan="Then ask 'And which of them is running?'.", max_turns=2),
    )
    target = AgentvTarget(name=generator, provider="cli", command=[cli.cli], cwd=tmp_path, source="model.yaml")
    user = SimulatedUserClient(
        SimulatedUserSettings(provider="openai", model="scripted-user", base_url=scripted_llm.url),
        environ={"OPENAI_API_KEY": "scripted"},
    )
    episodes: list = []
    run_cli_conversations(
        target,
        [Attempt(task, 0)],
        concurrency=1,
        on_episode=episodes.append,
        user=user,
        user_max_turns=None,
        harness=cli,
    )
    [episode] = episodes
    assert episode.eval_error is None and len(episode.trace.trajectory.turns) == 2
    first, second = invocations(log)
    session = f"{scenario_id}~1"
    if generator == "claude_code":
        assert second["argv"][second["argv"].index("--resume") + 1 :][:2] == [session, "--fork-session"]
    elif generator == "gemini_cli":
        assert "--resume" not in first["argv"] and "--resume" in second["argv"]
    else:
        assert second["argv"][:3] == ["exec", "resume", session]
    want = [[c["tool_name"] for c in turn["tool_calls"]] for turn in TRANSCRIPTS[scenario_id]]
    if generator == "codex_cli":  # a native tool is Codex's `shell` (command_execution)
        want = [[n if "__" in n else "shell" for n in names] for names in want]
    got = [[s.name for s in turn.steps] for turn in episode.trace.trajectory.turns]
    assert got == want


def test_a_key_written_in_the_model_config_is_a_secret_of_the_run(tmp_path):
    (tmp_path / "model.yaml").write_text(yaml.safe_dump(MODEL_CONFIGS["codex_cli"]))
    (tmp_path / "set.json").write_text(json.dumps({"scenarios": [{"id": "a", "starting_prompt": "hi"}]}))
    (tmp_path / "run.yaml").write_text(yaml.safe_dump({"dataset_config": "set.json", "model_config": "model.yaml"}))
    config = load_run_config(tmp_path / "run.yaml")
    assert config.evalbench is not None and config.evalbench.harness is not None
    assert "sk-fake-codex" in secret_values(config, judge_key=None, agent_envs={}, dotenv={})
