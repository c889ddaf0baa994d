"""The command line's conventions (issue 36): `--version`, "did you mean" for a mistyped
command, option or choice, help for every argument, one meaning per option name, and
messages that say which kind of path was missing."""

from __future__ import annotations

import argparse
from importlib.metadata import version

import pytest

from bat_pipeline.cli import AGENT_HELP, _agent_id, _subparsers, build_parser, main
from bat_pipeline.engine.agent_folder import resolve_agent_dir
from bat_pipeline.engine.errors import InputError
from bat_pipeline.locations import BUNDLED_AGENT_DIR


def fails(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as exited:
        main(list(argv))
    assert exited.value.code == 2
    return capsys.readouterr().err


def test_version(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"bat-pipeline {version('bat_pipeline')}"


def test_a_mistyped_command_option_or_choice_gets_a_suggestion(capsys):
    assert "invalid choice: 'rnu'" in (err := fails(capsys, "rnu")) and err.rstrip().endswith("(did you mean run?)")
    err = fails(capsys, "run", "--modle", "openai-competent")
    # The command's own usage and name, not the top level's.
    assert err.startswith("usage: bat-pipeline run ")
    assert "bat-pipeline run: error: unrecognized arguments: --modle" in err
    assert err.rstrip().endswith("(did you mean --model?)")
    assert fails(capsys, "report", "--format", "htm").rstrip().endswith("(did you mean html?)")
    assert fails(capsys, "compare", "a", "b", "--confidense=0.9").rstrip().endswith("(did you mean --confidence?)")
    # Nothing close: no suggestion.
    assert "did you mean" not in fails(capsys, "run", "--zzzzzz")


def test_every_argument_of_every_command_has_help():
    parser = build_parser()
    missing = [
        f"{name} {action.dest}"
        for name, command in [("", parser), *_subparsers(parser).items()]
        for action in command._actions
        if not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction))
        if not (action.help or "").strip()
    ]
    assert missing == []


def test_agent_means_the_same_everywhere(tmp_path, monkeypatch):
    commands = _subparsers(build_parser())
    helps = {
        name: next(a.help for a in command._actions if "--agent" in a.option_strings)
        for name, command in commands.items()
        if any("--agent" in a.option_strings for a in command._actions)
    }
    assert set(helps) == {"export", "report", "compare"} and set(helps.values()) == {AGENT_HELP}
    # A folder (or eval file) is read for its id; anything else is the id itself.
    assert _agent_id(str(BUNDLED_AGENT_DIR)) == "weather_agent"
    assert _agent_id(str(BUNDLED_AGENT_DIR / "eval" / "eval.yaml")) == "weather_agent"
    assert _agent_id("some-agent") == "some-agent"
    # Without --agent: the agent folder the command starts in, else any agent's.
    monkeypatch.chdir(tmp_path)
    assert _agent_id(None) is None
    monkeypatch.chdir(BUNDLED_AGENT_DIR)
    assert _agent_id(None) == "weather_agent"


def test_a_missing_path_is_named_as_what_was_expected(tmp_path):
    with pytest.raises(InputError, match=r"no such file \(an eval file was expected here\)"):
        resolve_agent_dir("evals/missing.yaml", tmp_path)
    with pytest.raises(InputError, match=r"no such folder or file \(an agent folder or an eval file"):
        resolve_agent_dir("no_agent_here", tmp_path)
