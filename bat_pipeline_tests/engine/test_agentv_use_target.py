"""AgentV 4.42.4's targets as it finds and follows them (issue 29 points 1, 4, 11): the
repository's `.agentv/targets.yaml` found upward from the eval file, `use_target` chains
with `${{ VAR }}` read from the shell or the `.env` files up to the repository root,
`default` when the file names no target, an LLM target grading its own answers, and the
cwd of a target and of its healthcheck resolved against the eval file's folder."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from bat_pipeline.engine.datasets.agentv import load_suite
from bat_pipeline.engine.datasets.agentv_targets import TargetOptions
from bat_pipeline.engine.errors import InputError
from bat_pipeline.resources.targets.run import healthcheck_problem

ROOT_TARGETS = [
    {"name": "default", "use_target": "${{ AGENT_TARGET }}"},
    {"name": "llm", "use_target": "${{ LLM_TARGET }}"},
    {"name": "grader", "use_target": "${{ GRADER_TARGET }}"},
    {
        "name": "openai",
        "provider": "openai",
        "base_url": "${{ OPENAI_ENDPOINT }}",
        "api_key": "${{ OPENAI_API_KEY }}",
        "model": "${{ OPENAI_MODEL }}",
    },
    {"name": "copilot", "provider": "copilot-cli", "model": "${{ COPILOT_MODEL }}", "grader_target": "grader"},
    {"name": "local", "provider": "cli", "command": "python3 agent.py {PROMPT}", "grader_target": "grader"},
]
DOTENV = "LLM_TARGET=openai\nOPENAI_ENDPOINT=http://127.0.0.1:9/v1\nOPENAI_MODEL=gpt-test\nGRADER_TARGET=openai\n"


def write(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def repo(tmp_path: Path, targets=ROOT_TARGETS, dotenv: str = DOTENV) -> Path:
    """A repository laid out as AgentV's: the targets at its root, an example two levels down."""
    (tmp_path / ".git").mkdir(parents=True)
    write(tmp_path / ".agentv" / "targets.yaml", {"targets": targets})
    write(tmp_path / ".env", dotenv)
    return tmp_path / "examples" / "features" / "demo"


def eval_file(folder: Path, execution: dict | None = None, graders: list | None = None) -> Path:
    data: dict = {"description": "demo"}
    if execution is not None:
        data["execution"] = execution
    data["tests"] = [{"id": "t1", "input": "hi", "criteria": "says hi", "assertions": graders or ["Greets the user"]}]
    return write(folder / "demo.eval.yaml", data)


def test_a_target_that_names_another_by_variable_is_that_target(tmp_path):
    path = eval_file(repo(tmp_path), {"target": "llm"})
    suite = load_suite(path, TargetOptions(environ={}))
    [target] = suite.targets
    # It keeps the name the file gives it; the rest is the target it names (from the root .env).
    assert (target.name, target.provider) == ("llm", "openai")
    assert target.llm.model == "gpt-test" and target.llm.base_url == "http://127.0.0.1:9/v1"
    assert target.llm.api_key_env == "OPENAI_API_KEY"
    # No grader_target: the LLM target grades its own answers, as AgentV's `graderTarget ?? name`.
    assert suite.judge["provider"] == "openai" and suite.judge["model"] == "gpt-test"


def test_the_shell_wins_over_dotenv_and_the_nearest_dotenv_over_the_root(tmp_path):
    folder = repo(tmp_path)
    targets = [*ROOT_TARGETS, {**ROOT_TARGETS[3], "name": "other", "model": "gpt-other"}]
    write(tmp_path / ".agentv" / "targets.yaml", {"targets": targets})
    path = eval_file(folder, {"target": "llm"})
    assert load_suite(path, TargetOptions(environ={"LLM_TARGET": "other"})).targets[0].llm.model == "gpt-other"
    write(folder / ".env", "OPENAI_MODEL=gpt-nearest\n")
    assert load_suite(path, TargetOptions(environ={})).targets[0].llm.model == "gpt-nearest"


def test_the_repository_root_bounds_the_dotenv_search(tmp_path):
    write(tmp_path / ".env", "LLM_TARGET=openai\nOPENAI_MODEL=gpt-outside\n")
    path = eval_file(repo(tmp_path / "repo", dotenv="OPENAI_ENDPOINT=http://127.0.0.1:9/v1\n"), {"target": "llm"})
    with pytest.raises(InputError, match="LLM_TARGET is not set"):
        load_suite(path, TargetOptions(environ={}))


def test_chains_are_followed_and_the_judge_target_too(tmp_path):
    targets = [
        {"name": "agent", "use_target": "middle"},
        {"name": "middle", "use_target": "${{ AGENT_TARGET }}"},
        *ROOT_TARGETS[1:],
    ]
    path = eval_file(repo(tmp_path, targets), {"target": "agent"})
    suite = load_suite(path, TargetOptions(environ={"AGENT_TARGET": "local"}))
    [target] = suite.targets
    assert (target.name, target.provider, target.command) == ("agent", "cli", "python3 agent.py {PROMPT}")
    # local's grader_target is `grader`, itself `use_target: ${{ GRADER_TARGET }}` (= openai).
    assert suite.judge["model"] == "gpt-test" and suite.judge["api_key_env"] == "OPENAI_API_KEY"


def test_a_file_that_names_no_target_runs_default(tmp_path):
    path = eval_file(repo(tmp_path), None, graders=[{"type": "contains", "value": "hi"}])
    [target] = load_suite(path, TargetOptions(environ={"AGENT_TARGET": "local"})).targets
    assert (target.name, target.provider) == ("default", "cli")


@pytest.mark.parametrize(
    ("targets", "environ", "message"),
    [
        (ROOT_TARGETS, {}, r"target 'default' uses use_target: \$\{\{ AGENT_TARGET \}\}, but AGENT_TARGET is not set"),
        (ROOT_TARGETS, {"AGENT_TARGET": "nope"}, r"use_target 'nope' \(\$\{\{ AGENT_TARGET \}\} is 'nope'\), and no"),
        (
            [
                {"name": "default", "use_target": "b"},
                {"name": "b", "use_target": "c"},
                {"name": "c", "use_target": "b"},
            ],
            {},
            r"use_target cycle: default -> b -> c -> b",
        ),
        ([{"name": "default", "model": "m"}], {}, r"target 'default' has no `provider` \(nor `use_target`"),
        (ROOT_TARGETS, {"AGENT_TARGET": "copilot"}, r"provider 'copilot-cli' cannot be run yet"),
    ],
)
def test_what_cannot_be_followed_is_refused_by_name(tmp_path, targets, environ, message):
    path = eval_file(repo(tmp_path, targets, dotenv=""), None, graders=[{"type": "contains", "value": "hi"}])
    with pytest.raises(InputError, match=message) as caught:
        load_suite(path, TargetOptions(environ=environ))
    assert caught.value.field in ("use_target", "provider")
    assert str(tmp_path / ".agentv" / "targets.yaml") in str(caught.value)


def test_cwd_and_healthcheck_cwd_are_the_eval_files_folders(tmp_path):
    """Point 4: AgentV resolves a healthcheck's cwd against the eval file's folder, not the
    target's cwd; point 11: the target's own cwd likewise, and an unset `${{ VAR }}` there
    leaves the eval file's folder (AgentV's optionalEnv)."""
    folder = repo(tmp_path, dotenv="")
    write(
        folder / "tools" / "ready.py", "import pathlib, sys\nsys.exit(0 if pathlib.Path('marker').is_file() else 3)\n"
    )
    write(folder / "tools" / "marker", "")
    targets = [
        {
            "name": "default",
            "provider": "cli",
            "command": f"{sys.executable} agent.py {{PROMPT}}",
            "cwd": "agent",
            "healthcheck": {"command": f"{sys.executable} ready.py", "cwd": "tools"},
        },
        {"name": "unset", "provider": "cli", "command": "python3 agent.py", "cwd": "${{ NOT_SET_ANYWHERE }}"},
        {"name": "plain", "provider": "cli", "command": "python3 agent.py", "healthcheck": {"command": "true"}},
    ]
    write(tmp_path / ".agentv" / "targets.yaml", {"targets": targets})
    path = eval_file(folder, {"targets": ["default", "unset", "plain"]}, graders=[{"type": "contains", "value": "x"}])
    main, unset, plain = load_suite(path, TargetOptions(environ={})).targets
    assert main.cwd == folder / "agent" and main.healthcheck.cwd == folder / "tools"
    assert healthcheck_problem(main.healthcheck, {}) is None  # it runs where its marker is
    assert unset.cwd == folder and plain.healthcheck.cwd == folder


def test_the_command_line_refuses_an_unset_use_target_with_exit_2(tmp_path, capsys, monkeypatch):
    from bat_pipeline import cli

    monkeypatch.setenv("BAT_PIPELINE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AGENT_TARGET", raising=False)
    path = eval_file(repo(tmp_path / "r", dotenv=""), None, graders=[{"type": "contains", "value": "hi"}])
    assert cli.main(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert "target 'default' uses use_target" in err and "field 'use_target'" in err and "Traceback" not in err


def test_the_eval_file_may_name_a_target_by_use_target(tmp_path):
    path = eval_file(repo(tmp_path), {"targets": [{"name": "mine", "use_target": "${{ LLM_TARGET }}"}]})
    [target] = load_suite(path, TargetOptions(environ={})).targets
    assert (target.name, target.provider, target.llm.model) == ("mine", "openai", "gpt-test")


def test_a_targets_yml_is_found_too(tmp_path):
    folder = repo(tmp_path)
    (tmp_path / ".agentv" / "targets.yaml").rename(tmp_path / ".agentv" / "targets.yml")
    [target] = load_suite(eval_file(folder, {"target": "llm"}), TargetOptions(environ={})).targets
    assert target.llm.model == "gpt-test" and target.source.startswith(str(tmp_path / ".agentv" / "targets.yml"))


def test_keys_are_found_in_the_dotenv_files_up_to_the_repository_root(tmp_path):
    """The judge's and the LLM target's keys are read as AgentV reads `${{ VAR }}`: from the
    shell, else the `.env` files from the eval file's folder up to the repository root."""
    from bat_pipeline.engine.config.project import load_project
    from bat_pipeline.engine.environment import require_judge_key
    from bat_pipeline.engine.target_inputs import require_target_keys

    folder = repo(tmp_path, dotenv=DOTENV + "OPENAI_API_KEY=sk-root-dotenv\n")
    config = load_project(eval_file(folder, {"target": "llm"}))
    assert config.evaluation.qualitative and config.judge.api_key_env == "OPENAI_API_KEY"
    require_judge_key(config, shell={})
    require_target_keys(config, shell={})
    write(tmp_path / ".env", DOTENV)
    with pytest.raises(InputError, match=r"the \.env files from .* up to the repository root"):
        require_judge_key(config, shell={})
    with pytest.raises(InputError, match="needs an API key in OPENAI_API_KEY"):
        require_target_keys(config, shell={})
