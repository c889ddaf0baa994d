"""Hostile files given to every reader of every format (issue 38, points 6-8): an alias
bomb, nesting deeper than the limit and deeper than Python's recursion limit, bytes that
are not UTF-8 and a lone surrogate are each refused as an InputError naming the hostile
file (engine.config.files) — never a traceback, never a document expanded in memory.

Each reader gets a realistic file: the hostile value sits where such a file has a value
(a test's metadata, a task's meta, a rubric's description, ...), and the file that holds
it may be one the first file names (an AgentV `tests: cases.jsonl`, an EvalBench
`model_config`, a targets file)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from bat_pipeline.engine.config import load_tasks
from bat_pipeline.engine.config.files import MAX_DEPTH
from bat_pipeline.engine.datasets.agentv import load_suite
from bat_pipeline.engine.errors import InputError
from bat_pipeline.report_commands import evaluate_command
from bat_pipeline_tests.support.readers import (
    AGENTV_TEST,
    JSON_READERS,
    TARGETS,
    YAML_READERS,
    agent_dotenv,
    agentv_file,
    agentv_jsonl,
    eval_yaml,
    put,
    run_config,
)

BIN = Path(sys.executable).parent / "bat-pipeline"


def alias_bomb() -> str:
    """Nine levels of nine aliases, in flow style on one line: ~9^9 nodes once expanded."""
    levels = ["&l0 [x, x, x, x, x, x, x, x, x]"]
    levels += [f"&l{n} [{', '.join([f'*l{n - 1}'] * 9)}]" for n in range(1, 9)]
    return "{" + ", ".join(f"k{n}: {level}" for n, level in enumerate(levels)) + "}"


YAML_VALUES: dict[str, tuple[bytes, str]] = {
    "alias bomb": (alias_bomb().encode(), "alias bomb"),
    "deep nesting": (b"[" * (MAX_DEPTH + 50) + b"]" * (MAX_DEPTH + 50), f"nesting deeper than {MAX_DEPTH}"),
    "nesting past the recursion limit": (b"[" * 20_000 + b"]" * 20_000, f"nesting deeper than {MAX_DEPTH}"),
    "not UTF-8": ('"café"'.encode("latin-1"), "not UTF-8 text: byte 0xe9"),
    "lone surrogate": (b'"caf\\ud800"', "lone surrogate \\ud800"),
}
JSON_VALUES: dict[str, tuple[bytes, str]] = {
    "deep nesting": (b"[" * (MAX_DEPTH + 50) + b"]" * (MAX_DEPTH + 50), f"nesting deeper than {MAX_DEPTH}"),
    "nesting past the recursion limit": (b"[" * 20_000 + b"]" * 20_000, f"nesting deeper than {MAX_DEPTH}"),
    "not UTF-8": ('"café"'.encode("latin-1"), "not UTF-8 text: byte 0xe9"),
    "lone surrogate": (b'"caf\\ud800"', "lone surrogate \\ud800"),
}

CASES = [
    *[(reader, value) for reader in YAML_READERS for value in YAML_VALUES],
    *[(reader, value) for reader in JSON_READERS for value in JSON_VALUES],
]


@pytest.mark.parametrize(("reader", "value"), CASES, ids=[f"{r}: {v}" for r, v in CASES])
def test_hostile_value_refused_naming_the_file(reader, value, tmp_path):
    build = {**YAML_READERS, **JSON_READERS}[reader]
    text, said = (YAML_VALUES if reader in YAML_READERS else JSON_VALUES)[value]
    read, bad = build(tmp_path, text)
    with pytest.raises(InputError) as caught:
        read()
    message = str(caught.value)
    assert str(bad.resolve()) in message or str(bad) in message, message
    assert said in message, message


@pytest.mark.parametrize("reader", [*YAML_READERS, *JSON_READERS])
def test_the_same_files_load_with_a_harmless_value(reader, tmp_path):
    """The fixtures are valid files but for the hostile value: the refusals above are the
    value's, not the fixture's."""
    build = {**YAML_READERS, **JSON_READERS}[reader]
    read, _ = build(tmp_path, b'"harmless"')
    read()


def test_an_agent_dotenv_not_utf8_names_the_file(tmp_path):
    read, bad = agent_dotenv(tmp_path, "café".encode("latin-1"))
    with pytest.raises(InputError) as caught:
        read()
    assert str(bad) in str(caught.value) and "not UTF-8 text: byte 0xe9" in str(caught.value)
    agent_dotenv(tmp_path, b"fine")[0]()


def test_lone_surrogate_in_a_turn_names_the_entry_and_field(tmp_path):
    bad = put(tmp_path / "tasks.json", b'[{"id": "a", "turns": ["ok"]}, {"id": "b", "turns": ["hi", "x\\udc00y"]}]')
    with pytest.raises(InputError) as caught:
        load_tasks(bad)
    message = str(caught.value)
    for said in (str(bad), "tasks[1] (id 'b')", "field 'turns[1]'", "lone surrogate \\udc00 at character 1"):
        assert said in message, message


def test_prompt_file_not_utf8_names_the_file(tmp_path):
    """An AgentV llm-grader's `prompt: file://...` and a composite's aggregator prompt."""
    put(tmp_path / "grade.txt", "Grade the café".encode("latin-1"))
    put(tmp_path / ".agentv" / "targets.yaml", TARGETS)
    graders = {
        "llm": "      - type: llm-grader\n        prompt: file://grade.txt\n",
        "composite": (
            "      - type: composite\n        assertions:\n          - type: contains\n            value: hi\n"
            "        aggregator:\n          type: llm-grader\n          prompt: file://grade.txt\n"
        ),
    }
    for name, grader in graders.items():
        evalfile = put(tmp_path / f"{name}.yaml", "execution:\n  target: t\ntests:\n" + AGENTV_TEST.decode())
        evalfile.write_text(evalfile.read_text() + "    assertions:\n" + grader)
        with pytest.raises(InputError) as caught:
            load_suite(evalfile)
        message = str(caught.value)
        assert str(evalfile) in message and "grade.txt" in message and "not UTF-8" in message, message


@pytest.mark.parametrize("value", sorted(JSON_VALUES))
def test_results_file_refused_naming_it(value, tmp_path, capsys):
    """`bat-pipeline evaluate RESULTS`: load errors exit 1 there (agentic-v2-eval's codes)."""
    bad = put(tmp_path / "results.json", b'[{"input": "x", "output": ' + JSON_VALUES[value][0] + b"}]")
    assert evaluate_command(str(bad), "default", None, None, None, None) == 1
    err = capsys.readouterr().err
    assert str(bad) in err and JSON_VALUES[value][1] in err, err


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "BAT_PIPELINE_HOME": str(cwd / "home")}

    def bounded() -> None:  # the alias bomb expanded would need gigabytes
        resource.setrlimit(resource.RLIMIT_AS, (1 << 31, 1 << 31))

    return subprocess.run(
        [str(BIN), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120, preexec_fn=bounded
    )


def test_cli_refuses_hostile_files_with_exit_2(tmp_path):
    """A representative few through the console script, in a 2 GiB address space: exit 2,
    `error:` naming the file, no traceback."""
    cases = [
        (["run"], agentv_file, YAML_VALUES["alias bomb"]),
        (["show"], eval_yaml, YAML_VALUES["not UTF-8"]),
        (["show"], run_config, YAML_VALUES["nesting past the recursion limit"]),
    ]
    for n, (command, build, (text, said)) in enumerate(cases):
        folder = tmp_path / str(n)
        _, bad = build(folder, text)
        target = folder if build is eval_yaml else bad
        done = _cli([*command, str(target)], folder)
        assert done.returncode == 2, (done.stdout, done.stderr)
        assert "Traceback" not in done.stderr + done.stdout
        assert done.stderr.startswith("error: ") and str(bad) in done.stderr and said in done.stderr, done.stderr
    results = put(tmp_path / "results.json", b'[{"output": "caf\\ud800"}]')
    done = _cli(["evaluate", str(results)], tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert str(results) in done.stderr and "lone surrogate" in done.stderr, done.stderr


def test_json_jsonl_lines_say_their_line(tmp_path):
    read, bad = agentv_jsonl(tmp_path, b'"caf\\ud800"')
    with pytest.raises(InputError) as caught:
        read()
    assert "line 2" in str(caught.value) and "field 'metadata.note'" in str(caught.value)
    assert json.loads(bad.read_text().splitlines()[0]) == {"id": "u", "input": "hello"}
