"""What an AgentV test's input is, as AgentV 4.42.4 reads it (issue 29 points 3, 8): plain
YAML scalars typed by YAML 1.2's core schema (the `yaml` npm package's), not YAML 1.1's."""

from __future__ import annotations

import json

import pytest

from bat_pipeline.engine.config.files import read_yaml
from bat_pipeline.engine.datasets.agentv import load_suite
from bat_pipeline.engine.datasets.agentv_targets import TargetOptions
from bat_pipeline.engine.target_inputs import chat_messages

TARGETS = "targets:\n  - name: default\n    provider: cli\n    command: python3 agent.py {PROMPT}\n"


def test_plain_scalars_are_typed_as_yaml_1_2_core_schema(tmp_path):
    path = tmp_path / "scalars.yaml"
    path.write_text(
        "date: 2025-01-01\nstamp: 2025-01-01T10:00:00Z\nyes_: yes\noff_: off\noctal: 0o17\nhex: 0x1F\n"
        "leading: 0777\nexp: 1e3\nwhole: 1.0\nhalf: 1.5\nunder: 1_000\nbinary: 0b101\nsexa: 1:20\n"
        "truth: True\nnothing: ~\nempty:\nbase: &b {x: 1}\nmerged:\n  <<: *b\n  y: 2\n",
        encoding="utf-8",
    )
    assert read_yaml(path, core_schema=True) == {
        "date": "2025-01-01",
        "stamp": "2025-01-01T10:00:00Z",
        "yes_": "yes",
        "off_": "off",
        "octal": 15,
        "hex": 31,
        "leading": 777,
        "exp": 1000,
        "whole": 1,
        "half": 1.5,
        "under": "1_000",
        "binary": "0b101",
        "sexa": "1:20",
        "truth": True,
        "nothing": None,
        "empty": None,
        "base": {"x": 1},
        "merged": {"x": 1, "y": 2},
    }
    # Everything else keeps YAML 1.1 (PyYAML's) typing.
    assert read_yaml(path)["yes_"] is True and read_yaml(path)["octal"] == "0o17"


def test_an_unquoted_date_in_a_test_stays_text_as_written(tmp_path):
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text(TARGETS, encoding="utf-8")
    path = tmp_path / "dates.eval.yaml"
    path.write_text(
        "tests:\n"
        "  - id: due\n"
        "    input:\n"
        "      - role: user\n"
        "        content: {due: 2025-01-01, confirmed: yes, mode: 0o17}\n"
        "    expected_output: 2025-01-02\n"
        "    metadata: {created: 2025-01-01}\n"
        "    assertions:\n"
        "      - type: contains\n"
        "        value: 2025-01-01\n",
        encoding="utf-8",
    )
    suite = load_suite(path, TargetOptions(environ={}))
    [case] = suite.tests
    assert case.assertions[0].value == "2025-01-01" and case.metadata == {"created": "2025-01-01"}
    assert case.expected_output[0].content == "2025-01-02"
    system, message = chat_messages(case)
    assert system["role"] == "system" and message["role"] == "user"
    assert json.loads(message["content"]) == {"due": "2025-01-01", "confirmed": "yes", "mode": 15}
    json.dumps(case.model_dump(mode="json"))  # the records serialise (a date used to crash here)


def test_file_items_of_tests_are_the_tests_of_those_files(tmp_path):
    """AgentV 4.42.4's expandFileReferences: `file://PATH` (or a glob) in `tests` splices in
    the tests of a YAML list or a JSONL file, relative to the eval file."""
    from bat_pipeline.engine.errors import InputError

    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text(TARGETS, encoding="utf-8")
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "a.yaml").write_text("- id: from-yaml\n  input: hi\n  criteria: greets\n", encoding="utf-8")
    for name in ("b", "c"):
        line = {"id": f"from-{name}", "input": "q", "assertions": [{"type": "contains", "value": "x"}]}
        (cases / f"{name}.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    scripted = {"id": "scripted", "input": "q", "assertions": [{"type": "code-grader", "command": ["python3", "g.py"]}]}
    (tmp_path / "scripts.jsonl").write_text(json.dumps(scripted) + "\n", encoding="utf-8")
    path = tmp_path / "e.eval.yaml"
    judge = "judge: {provider: openai, model: m, base_url: 'http://127.0.0.1:9/v1'}\n"
    path.write_text(
        judge + "tests:\n  - id: inline\n    input: hi\n    criteria: greets\n"
        "  - file://cases/a.yaml\n  - file://cases/*.jsonl\n",
        encoding="utf-8",
    )
    suite = load_suite(path, TargetOptions(environ={}))
    assert [t.id for t in suite.tests] == ["inline", "from-yaml", "from-b", "from-c"]
    # A script grader from an included file runs a command: refused unless trusted, as for `tests: FILE`.
    path.write_text(judge + "tests:\n  - file://scripts.jsonl\n", encoding="utf-8")
    with pytest.raises(InputError, match="in an external tests file runs a command") as caught:
        load_suite(path, TargetOptions(environ={}))
    assert str(tmp_path / "scripts.jsonl") in str(caught.value)
    assert [t.id for t in load_suite(path, TargetOptions(environ={}, trust_datasets=True)).tests] == ["scripted"]
    path.write_text(judge + "tests:\n  - file://cases/nope.yaml\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"external tests file .*nope.yaml not found") as caught:
        load_suite(path, TargetOptions(environ={}))
    assert caught.value.field == "tests[0]"


def test_variables_in_a_4x_eval_file_are_filled_as_agentv_fills_them(tmp_path):
    """AgentV 4.42.4's interpolateEnv over the eval file: set from the shell or a .env,
    unset ones empty, a whole `${{ VAR }}` typed when it reads as true/false or a number."""
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text(TARGETS, encoding="utf-8")
    (tmp_path / ".env").write_text("PERSONA=You greet warmly.\nLIMIT=0.5\n", encoding="utf-8")
    path = tmp_path / "env.eval.yaml"
    path.write_text(
        "tests:\n"
        "  - id: t\n"
        "    input:\n"
        "      - {role: system, content: '${{ PERSONA }} Always.'}\n"
        "      - {role: user, content: 'Hi ${{ NOT_SET_ANYWHERE }}!'}\n"
        "    expected_output: '${{ NOT_SET_ANYWHERE }}'\n"
        "    execution: {threshold: '${{ LIMIT }}'}\n"
        "    assertions: [{type: contains, value: '${{ WORD }}'}]\n",
        encoding="utf-8",
    )
    [case] = load_suite(path, TargetOptions(environ={"WORD": "hello"})).tests
    assert [m.content for m in case.input] == ["You greet warmly. Always.", "Hi !"]
    assert case.expected_output[0].content == "" and case.threshold == 0.5
    assert case.assertions[0].value == "hello"
