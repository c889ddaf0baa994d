"""Numbers, weights, regexes, commands and counts checked when the file is read (issue 38,
point 9), not found wrong at grading time or in a silently wrong score: each refusal is an
InputError naming the file and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bat_pipeline.engine.config import load_eval_config
from bat_pipeline.engine.config.evalbench_run import MAX_RUNNERS, load_run_config
from bat_pipeline.engine.contracts.config import MAX_K
from bat_pipeline.engine.datasets.agentv import load_suite
from bat_pipeline.engine.errors import InputError
from bat_pipeline.engine.yaml_rubrics import load_rubric, score
from bat_pipeline.report_commands import evaluate_command, report_command

TARGETS = "targets:\n  - name: t\n    provider: cli\n    command: python3 run.py {PROMPT}\n"


def put(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def refused(read, *said: str) -> str:
    with pytest.raises(InputError) as caught:
        read()
    message = str(caught.value)
    for part in said:
        assert part in message, message
    return message


RUBRICS = {
    "weights summing to 0": (
        "criteria:\n  - {name: a, weight: 0}\n  - {name: b, weight: 0}\n",
        ["weights sum to 0"],
    ),
    "an infinite weight": ("criteria:\n  - {name: a, weight: .inf}\n  - {name: b}\n", ["criteria[0].weight", "finite"]),
    "a NaN weight": ("criteria:\n  - {name: a, weight: .nan}\n", ["criteria[0].weight", "finite"]),
    "a NaN pass threshold": ("criteria:\n  - {name: a}\nthresholds:\n  pass: .nan\n", ["thresholds.pass", "finite"]),
}


@pytest.mark.parametrize("case", sorted(RUBRICS))
def test_rubric_numbers_refused(case, tmp_path):
    text, said = RUBRICS[case]
    path = put(tmp_path / "r.yaml", text)
    refused(lambda: load_rubric(str(path)), str(path), *said)


def test_rubric_weights_that_load_score_finitely(tmp_path):
    """The refusals' reason: an `.inf` weight made the weighted score NaN, which passed
    `--fail-under 0.99` on values of 0.1."""
    rubric = load_rubric(str(put(tmp_path / "r.yaml", "criteria:\n  - {name: a, weight: 0}\n  - {name: b}\n")))
    assert score(rubric, {"a": 1.0, "b": 0.1}).weighted_score == pytest.approx(0.1)


def agentv(tmp: Path, test: str, execution: str = "") -> Path:
    put(tmp / ".agentv" / "targets.yaml", TARGETS)
    return put(tmp / "e.yaml", f"execution:\n  target: t\n{execution}tests:\n  - id: t1\n    input: hi\n{test}")


AGENTV = {
    "graders all weighted 0": (
        "    assertions:\n      - {type: contains, value: hi, weight: 0}\n      - {type: is-json, weight: 0}\n",
        "",
        ["tests[0] (id 't1')", "field 'assertions'", "weighs 0"],
    ),
    "an invalid regex": (
        "    assertions:\n      - {type: regex, value: '(unclosed'}\n",
        "",
        ["tests[0] (id 't1')", "field 'assertions[0].value'", "invalid regex '(unclosed'"],
    ),
    "a regex grader without a pattern": (
        "    assertions:\n      - {type: regex}\n",
        "",
        ["field 'assertions[0].value'", "needs a `value`"],
    ),
    "a script grader without a command": (
        "    assertions:\n      - {type: code-grader, name: check}\n",
        "",
        ["tests[0] (id 't1')", "field 'assertions[0].command'", "needs a `command`"],
    ),
    "a script grader with an empty command list": (
        "    assertions:\n      - {type: script, command: []}\n",
        "",
        ["field 'assertions[0].command'", "needs a `command`"],
    ),
    "an infinite grader weight": (
        "    assertions:\n      - {type: contains, value: hi, weight: .inf}\n",
        "",
        ["tests[0] (id 't1')", "finite"],
    ),
    "trials past the bound": ("", "  trials: 100000000\n", ["field 'execution.trials'", f"from 1 to {MAX_K}"]),
}


@pytest.mark.parametrize("case", sorted(AGENTV))
def test_agentv_refusals(case, tmp_path):
    test, execution, said = AGENTV[case]
    path = agentv(tmp_path, test, execution)
    refused(lambda: load_suite(path), str(path), *said)


def test_agentv_graders_that_load(tmp_path):
    path = agentv(
        tmp_path,
        "    assertions:\n      - {type: regex, value: '^h(i|ello)$', flags: i}\n"
        "      - {type: contains, value: hi, weight: 0}\n      - {type: script, command: [python3, g.py]}\n",
    )
    assert [g.type for g in load_suite(path, None).tests[0].assertions] == ["regex", "contains", "script"]


EVAL_YAML = {
    "k past the bound": ("evaluation:\n  k: 100000000\n", ["evaluation", "field 'k'", f"at most {MAX_K}"]),
    "an infinite turn timeout": ("evaluation:\n  turn_timeout_s: .inf\n", ["field 'turn_timeout_s'", "finite"]),
    "a NaN gate": ("evaluation:\n  gate:\n    min_pass_rate: .nan\n", ["field 'gate.min_pass_rate'", "finite"]),
}


@pytest.mark.parametrize("case", sorted(EVAL_YAML))
def test_eval_yaml_refusals(case, tmp_path):
    text, said = EVAL_YAML[case]
    path = put(tmp_path / "eval" / "eval.yaml", "models:\n  - openai:gpt-4o\n" + text)
    refused(lambda: load_eval_config(tmp_path, environ={}), str(path), *said)


RUN_CONFIG = {
    "agent_runners: 0": ("runners:\n  agent_runners: 0\n", ["field 'runners.agent_runners'", "from 1 to", "got 0"]),
    "agent_runners past the bound": (
        f"runners:\n  agent_runners: {MAX_RUNNERS + 1}\n",
        ["field 'runners.agent_runners'", f"from 1 to {MAX_RUNNERS}"],
    ),
    "num_trials: -1": ("num_trials: -1\n", ["field 'num_trials'", f"from 1 to {MAX_K}", "got -1"]),
    "num_trials past the bound": ("num_trials: 100000000\n", ["field 'num_trials'", f"from 1 to {MAX_K}"]),
    "num_trials as text": ("num_trials: three\n", ["field 'num_trials'", "got 'three'"]),
    "runners not a mapping": ("runners: 4\n", ["field 'runners'", "expected a mapping"]),
}


@pytest.mark.parametrize("case", sorted(RUN_CONFIG))
def test_evalbench_run_config_refusals(case, tmp_path):
    text, said = RUN_CONFIG[case]
    put(tmp_path / "model.yaml", "generator: a2a\nurl: http://127.0.0.1:9\nmodels: [openai:gpt-4o]\n")
    put(tmp_path / "set.evalset.json", json.dumps({"scenarios": [{"id": "s", "starting_prompt": "hi"}]}))
    path = put(tmp_path / "run.yaml", "dataset_config: set.evalset.json\nmodel_config: model.yaml\n" + text)
    refused(lambda: load_run_config(path), str(path), *said)


def test_evalbench_counts_that_load(tmp_path):
    put(tmp_path / "model.yaml", "generator: a2a\nurl: http://127.0.0.1:9\nmodels: [openai:gpt-4o]\n")
    put(tmp_path / "set.evalset.json", json.dumps({"scenarios": [{"id": "s", "starting_prompt": "hi"}]}))
    path = put(
        tmp_path / "run.yaml",
        "dataset_config: set.evalset.json\nmodel_config: model.yaml\nnum_trials: 3\nrunners:\n  agent_runners: 2\n",
    )
    config = load_run_config(path)
    assert (config.evaluation.k, config.evaluation.concurrency) == (3, 2)
    bare = put(tmp_path / "bare.yaml", "dataset_config: set.evalset.json\nmodel_config: model.yaml\n")
    assert (load_run_config(bare).evaluation.k, load_run_config(bare).evaluation.concurrency) == (1, 10)


RESULTS = {
    "an empty list": ("[]", "no records"),
    "an empty results list": ('{"results": []}', "no records"),
    "records that are no objects": ("[1, 2]", "expected a result object, found int"),
    "results that are no list": ('{"results": {"a": 1}}', "`results` must be a list"),
    "not JSON": ("[{", "invalid JSON"),
}


@pytest.mark.parametrize("case", sorted(RESULTS))
def test_results_file_refusals_name_the_file(case, tmp_path, capsys):
    text, said = RESULTS[case]
    path = put(tmp_path / "results.json", text)
    assert evaluate_command(str(path), "default", None, None, None, None) == 1
    err = capsys.readouterr().err
    assert str(path) in err and said in err, err
    assert report_command(tmp_path, str(path), "markdown", None, None) == 2
    err = capsys.readouterr().err
    assert str(path) in err and said in err, err
    missing = tmp_path / "gone.json"
    assert evaluate_command(str(missing), "default", None, None, None, None) == 1
    assert str(missing) in capsys.readouterr().err
