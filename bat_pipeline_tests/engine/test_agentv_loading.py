"""AgentV eval files read into typed records (SPEC §9, §12, §13): which file is what, both
formats, prompts over vars, graders' spellings, and where targets come from."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bat_pipeline.engine.config.project import Overrides, load_project, project_kind, resolve_project, suite_tasks
from bat_pipeline.engine.datasets.agentv import load_suite, render
from bat_pipeline.engine.datasets.agentv_targets import TargetOptions
from bat_pipeline.engine.errors import InputError
from bat_pipeline.locations import BUNDLED_AGENT_DIR

EXAMPLE = BUNDLED_AGENT_DIR.parent / "screening" / "screening.yaml"
CLI = {"provider": "cli", "command": "python3 run.py {PROMPT}"}


def write(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_the_example_is_a_seed_file_with_one_batch_target():
    config = load_project(EXAMPLE)
    suite = config.agentv
    assert suite is not None and suite.format == "seed"
    assert [m.partition_key for m in config.models] == ["batch_cli"]
    assert config.models[0].name == "batch_cli" and config.agent_id == "screening"
    target = suite.targets[0]
    assert target.batch and target.cwd == EXAMPLE.parent
    assert target.healthcheck is not None and target.healthcheck.command == [
        "python3",
        "batch_runner.py",
        "--healthcheck",
    ]
    tasks = suite_tasks(suite)
    assert [t.id for t in tasks] == ["case-001", "case-002", "case-003"]
    assert tasks[0].expected.status is None  # bat-cli's checks stay off
    assert tasks[0].turns[0].startswith("@[System]:\nYou are a batch processor.\n\n@[User]:\n{")
    graders = tasks[0].agentv.assertions
    assert [(g.name, g.type, g.required) for g in graders] == [
        ("decision-check", "script", True),
        ("is-json", "is-json", True),
        ("screened", "trajectory", True),
        ("llm-rubric", "llm-rubric", True),
    ]


def test_which_file_is_what(tmp_path):
    assert project_kind(EXAMPLE) == ("agentv", EXAMPLE)
    assert project_kind(BUNDLED_AGENT_DIR) == ("agent", BUNDLED_AGENT_DIR)
    assert project_kind(BUNDLED_AGENT_DIR / "eval" / "eval.yaml") == ("agent", BUNDLED_AGENT_DIR)
    assert resolve_project(str(EXAMPLE), tmp_path) == EXAMPLE
    other = write(tmp_path / "x.yaml", {"scenarios": [], "name": "n"})
    with pytest.raises(InputError, match="keys found: scenarios, name"):
        project_kind(other)


def test_v4_file_with_targets_found_upward(tmp_path):
    write(
        tmp_path / ".agentv" / "targets.yaml",
        {
            "targets": [
                {
                    "name": "local",
                    "provider": "cli",
                    "command_template": "python3 a.py {PROMPT}",
                    "provider_batching": False,
                    "healthcheck": {"command": "true", "timeout_seconds": 5},
                },
                {"name": "other", **CLI},
            ]
        },
    )
    eval_file = write(
        tmp_path / "evals" / "deep" / "e.yaml",
        {
            "execution": {"target": "local", "threshold": 0.5},
            "tests": [
                {
                    "id": "t1",
                    "input": "hello",
                    "expected_output": "hi",
                    "criteria": "greets",
                    "assertions": [{"type": "contains", "value": "hi"}, {"type": "code_grader", "command": ["x"]}],
                },
                {
                    "id": "t2",
                    "input_messages": [{"role": "user", "content": "q"}],
                    "execution": {"threshold": 0.9},
                    "evaluators": [{"type": "equals", "value": "a"}],
                },
            ],
        },
    )
    suite = load_suite(eval_file)
    assert suite.format == "v4" and [t.name for t in suite.targets] == ["local"]
    assert suite.targets[0].healthcheck.timeout_s == 5 and suite.targets[0].cwd == eval_file.parent
    one, two = suite.tests
    assert one.prompt == "hello" and one.expected_output[0].role == "assistant"
    assert [(a.type, a.required) for a in one.assertions] == [("contains", False), ("script", False)]
    assert (one.threshold, two.threshold) == (0.5, 0.9)
    assert two.prompt == "q" and two.assertions[0].type == "equals"
    assert load_suite(eval_file, TargetOptions(threshold=0.7)).tests[0].threshold == 0.7


def test_providers_mapping_beside_file_and_command_line(tmp_path):
    seed = {"providers": ["mine"], "tests": [{"id": "a", "vars": {"input": "x"}}]}
    eval_file = write(tmp_path / "e.yaml", seed)
    with pytest.raises(InputError, match="target 'mine' is not defined"):
        load_suite(eval_file)
    write(tmp_path / "agentv-providers.yaml", {"providers": {"mine": CLI}})
    assert load_suite(eval_file).targets[0].command == CLI["command"]
    elsewhere = write(tmp_path / "other" / "p.yaml", {"mine": {**CLI, "command": "echo {PROMPT}"}})
    config = load_project(eval_file, Overrides(providers_file=elsewhere))
    assert config.agentv.targets[0].command == "echo {PROMPT}"


def test_prompts_render_vars_and_messages():
    variables = {"input": [{"role": "user", "content": {"a": 1}}], "who": {"name": "Ada"}, "n": 3}
    assert render("{{ input }}", variables) == '{"a": 1}'
    assert render("Hi {{who.name}}, {{ n }} {{ missing }}", variables) == "Hi Ada, 3 {{ missing }}"


@pytest.mark.parametrize(
    "written, expected",
    [
        ("not_contains", ("contains", True)),
        ("not-contains", ("contains", True)),
        ("contains", ("contains", False)),
        ("code-judge", ("script", False)),
        ("tool_trajectory", ("trajectory", False)),
        ("Is_Json", ("is-json", False)),
        ("starts_with", ("starts-with", False)),
    ],
)
def test_grader_type_spellings(tmp_path, written, expected):
    eval_file = write(
        tmp_path / "e.yaml",
        {
            "providers": {"t": CLI},
            "tests": [
                {
                    "id": "a",
                    "vars": {"input": "x"},
                    "assert": [{"type": written, "value": "v", "max_steps": 3, "command": "python3 g.py"}],
                }
            ],
        },
    )
    grader = load_suite(eval_file).tests[0].assertions[0]
    assert (grader.type, grader.negate) == expected


@pytest.mark.parametrize(
    "test, field, message",
    [
        ({"vars": {"input": "x"}}, "id", "needs an `id`"),
        ({"id": "a"}, "vars.input", "no input"),
        (
            {"id": "a", "vars": {"input": "x"}, "assert": [{"type": "latency", "threshold": 9}]},
            "assert[0].type",
            "not supported",
        ),
        (
            {"id": "a", "vars": {"input": "x"}, "assert": [{"type": "contains", "weight": -1}]},
            "assert[0].weight",
            "greater than or equal",
        ),
    ],
)
def test_refusals_name_file_entry_and_field(tmp_path, test, field, message):
    eval_file = write(tmp_path / "e.yaml", {"providers": {"t": CLI}, "tests": [test]})
    with pytest.raises(InputError, match=message) as caught:
        load_suite(eval_file)
    assert caught.value.file == str(eval_file) and caught.value.entry.startswith("tests[0]")
    assert caught.value.field == field


def test_duplicate_ids_and_unrunnable_providers_are_refused(tmp_path):
    eval_file = write(
        tmp_path / "e.yaml", {"providers": {"t": CLI}, "tests": [{"id": "a", "vars": {"input": "x"}}] * 2}
    )
    with pytest.raises(InputError, match=r"duplicate id 'a' \(also tests\[0\]\)"):
        load_suite(eval_file)
    eval_file = write(
        tmp_path / "f.yaml",
        {"providers": {"t": {"provider": "bedrock", "model": "m"}}, "tests": [{"id": "a", "vars": {"input": "x"}}]},
    )
    with pytest.raises(InputError, match="provider 'bedrock' cannot be run yet"):
        load_suite(eval_file)


def test_variables_in_targets(tmp_path):
    eval_file = write(
        tmp_path / "e.yaml",
        {"providers": {"t": {**CLI, "command": "run ${{ TOOL }}"}}, "tests": [{"id": "a", "vars": {"input": "x"}}]},
    )
    assert load_suite(eval_file, TargetOptions(environ={"TOOL": "x.py"})).targets[0].command == "run x.py"
    with pytest.raises(InputError, match="TOOL"):
        load_suite(eval_file, TargetOptions(environ={}))


def test_env_variables_of_newer_provider_files(tmp_path):
    providers = {
        "providers": [
            {
                "id": "t",
                "provider": "cli",
                "config": {"command": "run {{ env.TOOL }} --k ${{ KEY }}", "env": {"MODE": "{{env.MODE}}"}},
            }
        ]
    }
    write(tmp_path / ".agentv" / "providers.yaml", providers)
    eval_file = write(tmp_path / "e.yaml", {"tests": [{"id": "a", "input": "x"}]})
    target = load_suite(eval_file, TargetOptions(environ={"TOOL": "x.py", "KEY": "k", "MODE": "m"})).targets[0]
    assert target.command == "run x.py --k k" and target.env == {"MODE": "m"}
    with pytest.raises(InputError) as caught:
        load_suite(eval_file, TargetOptions(environ={"TOOL": "x.py", "KEY": "k"}))
    assert caught.value.file.startswith(str(tmp_path / ".agentv" / "providers.yaml"))
    assert caught.value.field == "config.env.MODE" and "{{env.MODE}} is not set" in str(caught.value)


def test_show_describes_an_agentv_file():
    from bat_pipeline.scaffold import describe

    text = describe(EXAMPLE)
    assert "dataset: " in text and "(3 tasks)" in text and "- batch_cli = batch_cli" in text


def v4_file(tmp_path: Path, data: dict) -> Path:
    write(tmp_path / ".agentv" / "targets.yaml", {"targets": [{"name": "t", **CLI}]})
    judge = {"provider": "openai", "model": "j", "base_url": "http://127.0.0.1:1/v1"}
    return write(tmp_path / "e.yaml", {"execution": {"target": "t"}, "judge": judge, **data})


def test_plain_strings_fold_into_one_rubrics_grader_as_agentv_does(tmp_path):
    # AgentV 4.42.4 (observed): the strings of a list, wherever they stand, become one
    # `rubrics` grader at the first string's place, weighing as many as there are strings.
    grader_list = [
        {"type": "contains", "value": "a"},
        "Mentions a",
        {"type": "contains", "value": "b"},
        "Is polite",
        " ",
    ]
    suite = load_suite(v4_file(tmp_path, {"tests": [{"id": "x", "input": "q", "assertions": grader_list}]}))
    graders = suite.tests[0].assertions
    assert [(g.name, g.type, g.weight) for g in graders] == [
        ("contains", "contains", 1.0),
        ("rubrics", "llm-rubric", 2.0),
        ("contains-2", "contains", 1.0),
    ]
    assert graders[1].options["grading"] == "- Mentions a\n- Is polite"
    assert any("empty rubric string" in w and "assertions[4]" in w for w in suite.warnings)
    # the seed's format keeps one grader per string
    seed = write(
        tmp_path / "s.yaml",
        {
            "providers": {"t": CLI},
            "judge": {"provider": "openai", "model": "j"},
            "tests": [{"id": "x", "vars": {"input": "q"}, "assert": ["A", "B"]}],
        },
    )
    assert len(load_suite(seed).tests[0].assertions) == 2


def test_skip_defaults_leaves_the_file_level_graders_out(tmp_path):
    data = {
        "assertions": [{"type": "contains", "value": "shared"}],
        "tests": [
            {"id": "plain", "input": "q", "assertions": [{"type": "contains", "value": "own"}]},
            {
                "id": "skips",
                "input": "q",
                "execution": {"skip_defaults": True},
                "assertions": [{"type": "contains", "value": "own"}],
            },
        ],
    }
    plain, skips = load_suite(v4_file(tmp_path, data)).tests
    assert [g.value for g in plain.assertions] == ["own", "shared"]
    assert [g.value for g in skips.assertions] == ["own"]


@pytest.mark.parametrize("written", ["code_judge", "code-judge", "llm_judge", "llm-judge"])
def test_deprecated_judge_types_are_skipped_in_4x_files(tmp_path, written):
    # AgentV 4.42.4 skips them with a warning; the test's criteria are graded instead
    # when nothing else grades it, and the other graders stay.
    data = {
        "tests": [
            {"id": "alone", "input": "q", "criteria": "says q", "assertions": [{"type": written, "script": ["x"]}]},
            {
                "id": "beside",
                "input": "q",
                "criteria": "says q",
                "assertions": [{"type": written, "script": ["x"]}, {"type": "contains", "value": "q"}],
            },
        ]
    }
    suite = load_suite(v4_file(tmp_path, data))
    alone, beside = suite.tests
    assert [(g.name, g.type, g.options["grading"]) for g in alone.assertions] == [("llm-grader", "llm-rubric", "")]
    assert [g.type for g in beside.assertions] == ["contains"]
    assert sum(f"'{written}' is deprecated" in w for w in suite.warnings) == 2


def test_script_graders_of_an_external_tests_file_are_refused_unless_trusted(tmp_path):
    """A tests file beside the eval file (often downloaded or shared) could run commands
    through script graders: refused unless --trust-datasets; the eval file's own are taken."""
    import json

    grader = {"type": "code-judge", "command": ["python3", "grade.py"]}
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        json.dumps({"id": "a", "input": "x"}) + "\n" + json.dumps({"id": "b", "input": "y", "assert": [grader]}) + "\n"
    )
    eval_file = write(tmp_path / "e.yaml", {"providers": {"t": CLI}, "tests": "cases.jsonl"})
    with pytest.raises(
        InputError, match="script grader 'code-judge' in an external tests file runs a command"
    ) as caught:
        load_suite(eval_file)
    assert caught.value.file == str(cases) and caught.value.entry == "tests[1] (id 'b')"
    assert caught.value.field == "assert[0]" and "--trust-datasets" in str(caught.value)
    trusted = load_suite(eval_file, TargetOptions(trust_datasets=True))
    assert [g.type for g in trusted.tests[1].assertions] == ["script"]
    assert load_project(eval_file, Overrides(trust_datasets=True)).agentv.tests[1].assertions[0].type == "script"
    own = write(
        tmp_path / "own.yaml", {"providers": {"t": CLI}, "tests": [{"id": "b", "input": "y", "assert": [grader]}]}
    )
    assert [g.type for g in load_suite(own).tests[0].assertions] == ["script"]
