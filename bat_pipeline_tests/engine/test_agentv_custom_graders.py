"""A grader type that is one of AgentV 4.42.4's custom graders (a script in
`.agentv/graders/`, `.agentv/judges/` or `.agentv/assertions/` from the eval file's folder
up) is refused naming the script and what to write instead, and so is a grading prompt
built by a command (AgentV's own examples/features/sdk-custom-assertion and
prompt-template-sdk show them)."""

from __future__ import annotations

import pytest

from bat_pipeline.engine.datasets.agentv import load_suite
from bat_pipeline.engine.errors import InputError

TARGETS = "targets:\n  - name: default\n    provider: cli\n    command: python3 agent.py {PROMPT}\n"
EVAL = "tests:\n  - id: t\n    input: hello\n    assertions:\n      - type: word-count\n        min: 3\n"


@pytest.mark.parametrize("folder", ["graders", "judges", "assertions"])
def test_a_custom_grader_type_is_refused_naming_its_script(tmp_path, folder):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".agentv" / folder).mkdir(parents=True)
    (tmp_path / ".agentv" / "targets.yaml").write_text(TARGETS, encoding="utf-8")
    script = tmp_path / ".agentv" / folder / "word-count.ts"
    script.write_text("export default {};\n", encoding="utf-8")
    (tmp_path / "evals").mkdir()
    path = tmp_path / "evals" / "eval.yaml"
    path.write_text(EVAL, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_suite(path)
    message = str(caught.value)
    assert f"grader type 'word-count' is AgentV's custom grader {script}, which is not run here" in message
    assert "write it as a `code-grader`" in message and "assertions[0].type" in message and "id 't'" in message


def test_an_unknown_type_without_a_script_lists_the_supported_ones(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text(TARGETS, encoding="utf-8")
    path = tmp_path / "eval.yaml"
    path.write_text(EVAL, encoding="utf-8")
    with pytest.raises(InputError, match="grader type 'word-count' is not supported; supported: script"):
        load_suite(path)


def test_a_grading_prompt_built_by_a_command_is_refused_saying_what_to_give(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text(TARGETS, encoding="utf-8")
    path = tmp_path / "eval.yaml"
    path.write_text(
        "tests:\n  - id: t\n    input: hello\n    criteria: greets\n    assertions:\n"
        "      - type: llm-grader\n        prompt:\n          command: [bun, run, prompt.ts]\n",
        encoding="utf-8",
    )
    with pytest.raises(InputError) as caught:
        load_suite(path)
    message = str(caught.value)
    assert "a grading prompt built by a command (AgentV's prompt template script) is not run here" in message
    assert "give the prompt as text or file://PATH" in message and "assertions[0].prompt" in message
