"""What `bat eval` accepts is accepted: unknown keys (with a warning naming file and key),
`times: 0`, scalars its records coerce, and the shapes its loader reads its own way. A key
one edit away from a known key is still refused as a typo."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bat_pipeline.engine.config import load_eval_config, load_tasks
from bat_pipeline.engine.config.unknown_keys import one_edit_apart
from bat_pipeline.engine.errors import InputError


def config(tmp_path: Path, text: str):
    folder = tmp_path / "agent"
    (folder / "eval").mkdir(parents=True, exist_ok=True)
    (folder / "eval" / "eval.yaml").write_text(text)
    return load_eval_config(folder, environ={"HOME": "/h"})


def tasks(tmp_path: Path, data) -> tuple[list, list[str], Path]:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(data))
    warnings: list[str] = []
    return load_tasks(path, warnings), warnings, path


@pytest.mark.parametrize(
    ("a", "b", "near"),
    [
        ("modle", "model", True),
        ("datasets", "dataset", True),
        ("judges", "judge", True),
        ("staus", "status", True),
        ("Turns", "turns", True),
        ("expect", "expected", False),
        ("args", "args_subset", False),
        ("model", "model", False),
        ("ab", "ba", True),
        ("abc", "cab", False),
    ],
)
def test_one_edit(a, b, near):
    assert one_edit_apart(a, b) is near
    assert one_edit_apart(b, a) is near


def test_unknown_eval_yaml_keys_are_warnings(tmp_path):
    loaded = config(
        tmp_path,
        """
notes: kept by the team
evaluation: {k: 2, owner: qa-team}
judge: {provider: openai, model: j, temperature_hint: low}
models:
  - {provider: openai, model: gpt, comment: cheapest}
""",
    )
    assert loaded.evaluation.k == 2 and loaded.judge.model == "j"
    text = "\n".join(loaded.warnings)
    assert len(loaded.warnings) == 4
    for where in (
        "top level, field 'notes'",
        "evaluation, field 'owner'",
        "judge, field 'temperature_hint'",
        "models[0], field 'comment'",
    ):
        assert where in text
    assert str(loaded.source) in loaded.warnings[0] and "ignored" in loaded.warnings[0]


def test_near_miss_in_eval_yaml_is_refused(tmp_path):
    with pytest.raises(InputError) as caught:
        config(tmp_path, "evaluation: {qualitativ: true}\nmodels: ['openai:m']\n")
    assert "did you mean 'qualitative'?" in str(caught.value)
    assert caught.value.entry == "evaluation" and caught.value.field == "qualitativ"


def test_scalars_coerced_like_bat_cli(tmp_path):
    loaded = config(
        tmp_path,
        """
evaluation: {k: "3", qualitative: "false", agent_startup_timeout_s: "30"}
models:
  - {provider: openai, model: gpt, env: {DEBUG: true, PORT: 8080, EMPTY: null}}
""",
    )
    assert loaded.evaluation.k == 3 and loaded.evaluation.qualitative is False
    assert loaded.evaluation.agent_startup_timeout_s == 30
    assert loaded.models[0].env == {"DEBUG": "True", "PORT": "8080"}


def test_shapes_bat_cli_reads_its_own_way(tmp_path):
    loaded = config(
        tmp_path,
        """
evaluation: {dataset: null, output_dir: "", run_name: null, extra_spans: ../planner/spans.jsonl}
judge: "openai:judge-model"
models:
  - {model: "ollama:llama3:8b"}
""",
    )
    assert (loaded.evaluation.dataset, loaded.evaluation.output_dir, loaded.evaluation.run_name) == (
        "eval/input/tasks.json",
        "eval/output",
        "benchmark",
    )
    assert loaded.evaluation.extra_spans == ["../planner/spans.jsonl"]
    assert (loaded.judge.provider, loaded.judge.model) == ("openai", "judge-model")
    assert (loaded.models[0].provider, loaded.models[0].model) == ("ollama", "llama3:8b")
    assert config(tmp_path, "judge: {}\nmodels: ['openai:m']\n").judge is None


def test_unknown_task_keys_are_warnings(tmp_path):
    loaded, warnings, path = tasks(
        tmp_path,
        [
            {
                "id": "a",
                "turns": ["hi"],
                "owner": "qa",
                "expected": {
                    "status": "completed",
                    "rationale": "why",
                    "expected_outcome": None,
                    "tool_calls": [{"name": "search", "args": {"city": "Paris"}}],
                },
            }
        ],
    )
    assert loaded[0].expected.expected_outcome == ""
    assert loaded[0].expected.tool_calls[0].args_subset == {}
    text = "\n".join(warnings)
    assert len(warnings) == 3 and str(path) in text
    for field in ("field 'owner'", "field 'expected.rationale'", "field 'expected.tool_calls[0].args'"):
        assert f"tasks[0] (id 'a'), {field}: unknown key, ignored" in text


def test_times_zero_and_coerced_task_scalars(tmp_path):
    loaded, warnings, _ = tasks(
        tmp_path,
        [
            {
                "id": "a",
                "turns": ["hi"],
                "expected": {
                    "max_tokens": "4000",
                    "no_errors": "true",
                    "max_model_calls": 3.0,
                    "tool_calls": [{"name": "search", "times": 0}],
                    "agent_calls": [{"agent": "P", "times": "2"}],
                },
            }
        ],
    )
    expected = loaded[0].expected
    assert (expected.max_tokens, expected.no_errors, expected.max_model_calls) == (4000, True, 3)
    assert expected.tool_calls[0].times == 0 and expected.agent_calls[0].times == 2
    assert warnings == []


def test_the_file_is_not_changed_by_dropping_keys(tmp_path):
    data = [{"id": "a", "turns": ["hi"], "owner": "qa"}]
    _, _, path = tasks(tmp_path, data)
    assert json.loads(path.read_text()) == data
