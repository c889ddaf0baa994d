"""Which judge grades an AgentV file's LLM graders (SPEC §13): the evaluated target's
`judge_target` / `grader_target`, else the file's `judge:` block, else the file is
refused before anything runs; and how LLM graders are read."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bat_pipeline.engine.config.project import load_project
from bat_pipeline.engine.datasets.agentv import load_suite
from bat_pipeline.engine.datasets.agentv_targets import TargetOptions
from bat_pipeline.engine.errors import InputError

TARGET = {"provider": "cli", "command": "python3 run.py {PROMPT}"}
LLM = {
    "name": "azure_judge",
    "provider": "openai",
    "model": "${{ JUDGE_MODEL }}",
    "endpoint": "http://127.0.0.1:9/v1",
    "api_key": "${{ JUDGE_KEY }}",
}


def write(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def v4(folder: Path, graders: list, targets: list, **top) -> Path:
    write(folder / ".agentv" / "targets.yaml", {"targets": targets})
    return write(
        folder / "eval.yaml",
        {
            "execution": {"target": "local"},
            **top,
            "tests": [{"id": "t", "input": "x", "criteria": "Says x.", "assertions": graders}],
        },
    )


def test_the_judge_target_of_the_evaluated_target(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGE_MODEL", "gpt-judge")
    eval_file = v4(
        tmp_path, [{"type": "llm-grader"}], [{"name": "local", **TARGET, "grader_target": "azure_judge"}, LLM]
    )
    config = load_project(eval_file)
    assert config.evaluation.qualitative and config.judge is not None
    assert (config.judge.provider, config.judge.model, config.judge.base_url, config.judge.api_key_env) == (
        "openai",
        "gpt-judge",
        "http://127.0.0.1:9/v1",
        "JUDGE_KEY",
    )
    # the targets file's judge wins over the file's judge block
    eval_file = v4(
        tmp_path,
        [{"type": "llm-grader"}],
        [{"name": "local", **TARGET, "judge_target": "azure_judge"}, LLM],
        judge={"provider": "ollama", "model": "m"},
    )
    assert load_project(eval_file).judge.model == "gpt-judge"


def test_a_judge_target_we_cannot_ask_gives_way_to_the_judge_block(tmp_path):
    azure = {"name": "azure_base", "provider": "azure", "endpoint": "${{ AZURE_ENDPOINT_UNSET }}"}
    targets = [{"name": "local", **TARGET, "judge_target": "azure_base"}, azure]
    # no LLM grader: the judge target is not even read
    assert load_project(v4(tmp_path, [{"type": "contains", "value": "x"}], targets)).judge is None
    config = load_project(v4(tmp_path, ["Says x."], targets, judge={"provider": "ollama", "model": "m"}))
    assert config.judge.provider == "ollama"
    assert any("provider 'azure' cannot be asked here" in w for w in config.warnings)
    with pytest.raises(InputError, match="got 'azure' \\(or add a `judge:` block"):
        load_project(v4(tmp_path, ["Says x."], targets))


def test_the_judge_block_and_files_without_llm_graders(tmp_path):
    eval_file = v4(tmp_path, ["Says x."], [{"name": "local", **TARGET}], judge={"provider": "ollama", "model": "m"})
    config = load_project(eval_file)
    assert config.judge.provider == "ollama" and config.evaluation.qualitative
    [grader] = config.agentv.tests[0].assertions
    # a 4.x file's plain strings are one `rubrics` grader, as AgentV 4.42 folds them
    assert (grader.name, grader.type, grader.options["grading"], grader.required) == (
        "rubrics",
        "llm-rubric",
        "- Says x.",
        False,
    )
    # no LLM grader: the judge stays off, judge block or not
    eval_file = v4(
        tmp_path,
        [{"type": "contains", "value": "x"}],
        [{"name": "local", **TARGET}],
        judge={"provider": "ollama", "model": "m"},
    )
    config = load_project(eval_file)
    assert config.judge is None and not config.evaluation.qualitative


@pytest.mark.parametrize(
    "graders, targets, top, field, message",
    [
        (["Says x."], [{"name": "local", **TARGET}], {}, None, "grader 'rubrics' needs a judge model"),
        (
            [{"type": "rubrics", "criteria": []}],
            [{"name": "local", **TARGET}],
            {"judge": {"provider": "ollama", "model": "m"}},
            "assertions[0].criteria",
            "a non-empty list of rubric items",
        ),
        (
            [{"type": "llm-grader", "prompt": "file://missing.md"}],
            [{"name": "local", **TARGET}],
            {"judge": {"provider": "ollama", "model": "m"}},
            "assertions[0].prompt",
            "cannot read the prompt file",
        ),
        (
            [{"type": "llm-grader"}],
            [{"name": "local", **TARGET, "judge_target": "nope"}],
            {},
            "judge_target",
            "judge target 'nope' is not defined",
        ),
        (
            [{"type": "llm-grader"}],
            [{"name": "local", **TARGET, "judge_target": "azure_judge"}, {**LLM, "api_key": "sk-literal-key-123"}],
            {},
            "api_key",
            "not the key itself",
        ),
        (
            [{"type": "llm-grader"}],
            [{"name": "local", **TARGET, "judge_target": "azure_judge"}, {**LLM, "provider": "bedrock"}],
            {},
            "provider",
            "got 'bedrock'",
        ),
        (
            [{"type": "llm-grader"}],
            [{"name": "local", **TARGET}],
            {"judge": {"provider": "openai"}},
            "judge.model",
            "model",
        ),
    ],
)
def test_refused_before_anything_runs(tmp_path, monkeypatch, graders, targets, top, field, message):
    monkeypatch.setenv("JUDGE_MODEL", "gpt-judge")
    eval_file = v4(tmp_path, graders, targets, **top)
    with pytest.raises(InputError) as caught:
        load_project(eval_file)
    assert message in str(caught.value) and caught.value.field == field


def test_an_llm_grader_needs_text_to_grade_against(tmp_path):
    eval_file = write(
        tmp_path / "e.yaml",
        {
            "providers": {"local": TARGET},
            "judge": {"provider": "ollama", "model": "m"},
            "tests": [{"id": "t", "vars": {"input": "x"}, "assert": [{"type": "llm-rubric"}]}],
        },
    )
    with pytest.raises(InputError, match="no rubric text and the test no `criteria`"):
        load_suite(eval_file, TargetOptions(environ={}))


def test_a_4x_test_without_graders_is_judged_on_its_criteria(tmp_path):
    write(tmp_path / ".agentv" / "targets.yaml", {"targets": [{"name": "local", **TARGET}]})
    eval_file = write(
        tmp_path / "eval.yaml",
        {
            "execution": {"target": "local"},
            "judge": {"provider": "ollama", "model": "m"},
            "tests": [{"id": "judged", "input": "x", "criteria": "Says x."}, {"id": "bare", "input": "x"}],
        },
    )
    config = load_project(eval_file)
    judged, bare = config.agentv.tests
    [grader] = judged.assertions
    assert (grader.name, grader.type, grader.required, grader.options["grading"]) == (
        "llm-grader",
        "llm-rubric",
        False,
        "",
    )
    assert bare.assertions == [] and config.evaluation.qualitative
    eval_file.write_text(eval_file.read_text().replace("judge:", "unused:"), encoding="utf-8")
    with pytest.raises(InputError, match="grader 'llm-grader' needs a judge model"):
        load_project(eval_file)
