"""Malformed inputs given to `bat-pipeline run` / `show`: exit code 2, a message naming the
file, the entry and the field, no traceback, and nothing already on disk rewritten.

New cases are edits of a trimmed copy of the example agent folder; a selection of the
engine's corpus (bat_pipeline_tests/engine/bad_inputs) is run through the CLI as well."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bat_pipeline import cli
from bat_pipeline.resources.warehouse import Warehouse
from bat_pipeline_tests.support.example_agent import FAULT_TASKS, copy_example_agent
from bat_pipeline_tests.support.files import tree_hashes

CORPUS = Path(__file__).resolve().parents[1] / "engine" / "bad_inputs"
CORPUS_CASES = yaml.safe_load((CORPUS / "cases.yaml").read_text())
STANDALONE = Path(__file__).resolve().parents[1] / "bat_adk" / "agents" / "standalone_weather"
EVAL, TASKS, CONFIG = "eval/eval.yaml", "eval/input/tasks.json", "config.yaml"


def _edit_yaml(path: Path, change) -> None:
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def _edit_tasks(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def _eval(change):
    return lambda agent: _edit_yaml(agent / EVAL, change)


def _tasks(change):
    return lambda agent: _edit_tasks(agent / TASKS, change)


def _write(name: str, text: str):
    return lambda agent: (agent / name).write_text(text)


def _no_config_no_command(agent: Path) -> None:
    (agent / CONFIG).unlink()
    (agent / "agent.json").unlink()
    _edit_yaml(agent / EVAL, lambda d: d.pop("agent"))


def _second(models):
    models.append(dict(models[0]))


# name → (edit of the agent copy, file refused (relative), substrings of the message)
CASES = {
    "eval_yaml_syntax": (
        _write(EVAL, "evaluation:\n  k: 1\n   run_name: x\nmodels: [openai:competent]\n"),
        EVAL,
        ["invalid YAML", "line 3"],
    ),
    "unknown_provider": (
        _eval(lambda d: d["models"].append({"provider": "bedrock", "model": "pro"})),
        EVAL,
        ["models[1]", "field 'provider'", "'bedrock'", "anthropic, deepseek, nvidia, ollama, openai, gemini, vertex"],
    ),
    "negative_k": (
        _eval(lambda d: d["evaluation"].update(k=-1)),
        EVAL,
        ["evaluation", "field 'k'", "at least 1, got -1"],
    ),
    "qualitative_without_judge": (
        _eval(lambda d: d.pop("judge")),
        EVAL,
        ["evaluation", "field 'qualitative'", "judge"],
    ),
    "duplicate_model_keys": (
        _eval(lambda d: _second(d["models"])),
        EVAL,
        ["models[1]", "field 'model'", "models[0]", "openai-competent", "distinct `key:`"],
    ),
    "unknown_field_did_you_mean": (
        _eval(lambda d: d["evaluation"].update(run_nme="x")),
        EVAL,
        ["evaluation", "field 'run_nme'", "did you mean 'run_name'?"],
    ),
    "tasks_not_json": (
        _write(TASKS, '[{"id": "a", "turns": ["hi"]},\n  {"id": b}]'),
        TASKS,
        ["invalid JSON", "line 2"],
    ),
    "tasks_not_a_list": (_write(TASKS, '{"id": "a", "turns": ["hi"]}'), TASKS, ["must be an array", "got an object"]),
    "tasks_duplicate_ids": (
        _tasks(lambda d: d.append(dict(d[0]))),
        TASKS,
        ["tasks[4] (id 'weather_paris')", "field 'id'", "duplicate id 'weather_paris'"],
    ),
    "tasks_empty_turns": (
        _tasks(lambda d: d[1].update(turns=[])),
        TASKS,
        ["tasks[1] (id 'add_numbers')", "field 'turns'", "must not be empty"],
    ),
    "tasks_unknown_expectation": (
        _tasks(lambda d: d[0]["expected"].update(output_must_contains=["x"])),
        TASKS,
        [
            "tasks[0] (id 'weather_paris')",
            "field 'expected.output_must_contains'",
            "did you mean 'output_must_contain'?",
        ],
    ),
    "scorer_module_missing": (
        _eval(lambda d: d["evaluation"].update(scorers=["bat_pipeline.engine.scorers.status", "my_scorers"])),
        EVAL,
        ["evaluation", "field 'scorers[1]'", "'my_scorers'", "No module named"],
    ),
    "no_config_no_command": (_no_config_no_command, EVAL, ["agent", "field 'command'", "agent.command"]),
    "redacting_privacy": (
        lambda a: _edit_yaml(a / CONFIG, lambda d: d["telemetry"].update(privacy="content")),
        CONFIG,
        ["telemetry", "field 'privacy'", "privacy is 'content'", "telemetry.privacy: none"],
    ),
    "unknown_model_flag": (lambda a: None, EVAL, ["field 'models'", "no model 'gpt-9'", "openai-competent"]),
}
EXTRA_ARGS = {"unknown_model_flag": ["--model", "gpt-9"]}

CORPUS_PICKS = [
    "eval_unknown_prompt.yaml",
    "eval_prompt_too_long.yaml",
    "eval_unset_variable.yaml",
    "eval_duplicate_yaml_key.yaml",
    "eval_command_and_url.yaml",
    "eval_startup_timeout_zero.yaml",
    "tasks_bad_status.json",
    "tasks_unknown_tool_field.json",
    "tasks_id_number.json",
    "tasks_missing_id.json",
    "tasks_ids_same_file_name.json",
]


@pytest.fixture(scope="module")
def earlier_run(tmp_path_factory):
    """A storage root and an agent copy holding results of an earlier run, with their hashes."""
    tmp = tmp_path_factory.mktemp("cli_bad_inputs")
    template = copy_example_agent(tmp / "template", tasks=FAULT_TASKS, models=("competent",))
    root = tmp / "home"
    episodes = root / "runs" / "20250101T000000Z" / "openai-competent" / "episodes"
    episodes.mkdir(parents=True)
    (episodes / "weather_paris__try0.json").write_text('{"task_id": "weather_paris"}\n')
    (root / "runs" / "20250101T000000Z" / "openai-competent" / "metrics.json").write_text('{"summary": {}}\n')
    with Warehouse(root / "warehouse.duckdb").connect() as conn:
        conn.execute("SELECT 1")
    output = template / "eval" / "output" / "20250101T000000Z" / "demo_openai-competent"
    output.mkdir(parents=True)
    (output / "summary.json").write_text('{"passed": true}\n')
    return template, root


def _fresh(template: Path, tmp_path: Path) -> Path:
    agent = tmp_path / "agent"
    shutil.copytree(template, agent)
    return agent


def _run_cli(args: list[str], capsys) -> tuple[int, str]:
    code = cli.main(args)
    captured = capsys.readouterr()
    return code, captured.err


def _assert_refused(code: int, err: str, file: Path, expected: list[str]) -> None:
    assert code == 2, err
    assert "Traceback" not in err
    assert err.startswith("error: ") and str(file) in err, err
    for part in expected:
        assert part in err, f"{part!r} not in {err!r}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_cli_refuses_bad_input(name, earlier_run, tmp_path, capsys, monkeypatch):
    template, root = earlier_run
    agent = _fresh(template, tmp_path)
    edit, refused, expected = CASES[name]
    edit(agent)
    monkeypatch.setenv("BAT_PIPELINE_HOME", str(root))
    monkeypatch.setenv("BAT_DEMO_LLM_URL", "http://127.0.0.1:9")
    before = (tree_hashes(root), tree_hashes(agent / "eval" / "output"))
    code, err = _run_cli(["run", str(agent), *EXTRA_ARGS.get(name, [])], capsys)
    _assert_refused(code, err, agent / refused, expected)
    assert (tree_hashes(root), tree_hashes(agent / "eval" / "output")) == before


@pytest.mark.parametrize("name", CORPUS_PICKS)
def test_cli_refuses_engine_corpus_file(name, earlier_run, tmp_path, capsys, monkeypatch):
    template, root = earlier_run
    agent = _fresh(template, tmp_path)
    target = agent / (EVAL if name.endswith(".yaml") else TASKS)
    shutil.copyfile(CORPUS / name, target)
    monkeypatch.setenv("BAT_PIPELINE_HOME", str(root))
    monkeypatch.setenv("BAT_DEMO_LLM_URL", "http://127.0.0.1:9")
    monkeypatch.delenv("BAD_INPUTS_UNSET_TOKEN", raising=False)
    before = tree_hashes(root)
    code, err = _run_cli(["run", str(agent)], capsys)
    _assert_refused(code, err, target, [str(part) for part in CORPUS_CASES[name]])
    assert tree_hashes(root) == before


def test_standalone_agent_without_uv_on_path(earlier_run, tmp_path, capsys, monkeypatch):
    _, root = earlier_run
    agent = tmp_path / "standalone_weather"
    shutil.copytree(STANDALONE, agent, ignore=shutil.ignore_patterns("output", ".venv"))
    path = os.pathsep.join(p for p in ("/usr/bin", "/bin") if Path(p).is_dir())
    assert shutil.which("uv", path=path) is None
    monkeypatch.setenv("PATH", path)
    monkeypatch.setenv("BAT_PIPELINE_HOME", str(root))
    monkeypatch.setenv("BAT_DEMO_LLM_URL", "http://127.0.0.1:9")
    before = tree_hashes(root)
    code, err = _run_cli(["run", str(agent)], capsys)
    _assert_refused(code, err, agent, ["agent", "field 'command'", "`uv` is not on PATH"])
    assert tree_hashes(root) == before
    assert not (agent / "eval" / "output").exists()


def _console(args: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(Path(sys.executable).parent / "bat-pipeline"), *args], env=env, capture_output=True, text=True, timeout=60
    )


def test_console_script_exits_2_without_traceback(earlier_run, tmp_path):
    template, root = earlier_run
    agent = _fresh(template, tmp_path)
    CASES["unknown_provider"][0](agent)
    env = {**os.environ, "BAT_PIPELINE_HOME": str(root), "BAT_DEMO_LLM_URL": "http://127.0.0.1:9"}
    before = tree_hashes(root)
    for command in (["run", str(agent)], ["show", str(agent)]):
        done = _console(command, env)
        _assert_refused(done.returncode, done.stderr, agent / EVAL, CASES["unknown_provider"][2])
        assert done.stdout == "" or "Traceback" not in done.stdout
    assert tree_hashes(root) == before


@pytest.mark.parametrize("where", ["home", "output"])
def test_results_that_cannot_be_written_are_refused_before_the_agent_starts(
    where, earlier_run, tmp_path, capsys, monkeypatch
):
    template, root = earlier_run
    agent = _fresh(template, tmp_path)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    if where == "home":
        monkeypatch.setenv("BAT_PIPELINE_HOME", str(blocker / "home"))
    else:
        monkeypatch.setenv("BAT_PIPELINE_HOME", str(root))
        eval_file = agent / EVAL
        eval_file.write_text(eval_file.read_text().replace("output_dir: eval/output", f"output_dir: {blocker}/out"))
    monkeypatch.setenv("BAT_DEMO_LLM_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("BAT_DEMO_JUDGE_KEY", "scripted-judge-takes-any-key")
    code, err = _run_cli(["run", str(agent)], capsys)
    assert code == 2 and "Traceback" not in err, err
    assert err.count("\n") == 1 and str(blocker) in err and "cannot write the" in err, err
    assert list(tmp_path.rglob("agent.log")) == []


def test_too_little_free_space_is_refused(tmp_path, monkeypatch):
    from collections import namedtuple

    from bat_pipeline.engine.errors import InputError
    from bat_pipeline.storage import check_writable

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10 << 30, (10 << 30) - (3 << 20), 3 << 20))
    with pytest.raises(InputError) as caught:
        check_writable(tmp_path / "results", "results")
    assert "only 3 MB free" in str(caught.value) and str(tmp_path / "results") in str(caught.value)
