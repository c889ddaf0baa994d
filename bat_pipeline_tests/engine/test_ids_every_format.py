"""Ids that would clash as file or folder names are refused in every format as tasks.json's
are (issue 38, point 2): two ids that become one episode file once sanitised (`x/y` and
`x_y`), an id starting with `.`, and partition keys (a model's `key`, an AgentV target's
name) that would name a hidden or parent folder or one another's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bat_pipeline.engine.config import load_eval_config, load_tasks
from bat_pipeline.engine.config.project import load_project
from bat_pipeline.engine.errors import InputError

TARGETS = "targets:\n  - name: t\n    provider: cli\n    command: python3 run.py {PROMPT}\n"
CLASH = ["x/y", "ok", "x_y"]
DOT = ["fine", "../../etc"]


def put(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def tasks_json(tmp: Path, ids: list[str]) -> tuple[Path, Path, str]:
    path = put(tmp / "tasks.json", json.dumps([{"id": i, "turns": ["hi"]} for i in ids]))
    return path, path, "tasks"


def evalset(tmp: Path, ids: list[str]) -> tuple[Path, Path, str]:
    path = put(tmp / "s.evalset.json", json.dumps({"scenarios": [{"id": i, "starting_prompt": "hi"} for i in ids]}))
    return path, path, "tasks"


def nl2sql(tmp: Path, ids: list[str]) -> tuple[Path, Path, str]:
    items = [{"id": i, "nl_prompt": "how many?", "golden_sql": "SELECT 1"} for i in ids]
    path = put(tmp / "nl2sql.json", json.dumps(items))
    return path, path, "tasks"


def agentv_inline(tmp: Path, ids: list[str]) -> tuple[Path, Path, str]:
    put(tmp / ".agentv" / "targets.yaml", TARGETS)
    tests = "".join(f"  - id: {json.dumps(i)}\n    input: hi\n" for i in ids)
    path = put(tmp / "e.yaml", "execution:\n  target: t\ntests:\n" + tests)
    return path, path, "tests"


def agentv_jsonl(tmp: Path, ids: list[str]) -> tuple[Path, Path, str]:
    put(tmp / ".agentv" / "targets.yaml", TARGETS)
    cases = put(tmp / "cases.jsonl", "".join(json.dumps({"id": i, "input": "hi"}) + "\n" for i in ids))
    return put(tmp / "e.yaml", "execution:\n  target: t\ntests: cases.jsonl\n"), cases, "tests"


def run_config(tmp: Path, ids: list[str]) -> tuple[Path, Path, str]:
    """An EvalBench run config's evalset, read when the tasks are."""
    _, dataset, key = evalset(tmp, ids)
    put(tmp / "model.yaml", "generator: a2a\nurl: http://127.0.0.1:9\nmodels: [openai:gpt-4o]\n")
    return put(tmp / "run.yaml", f"dataset_config: {dataset.name}\nmodel_config: model.yaml\n"), dataset, key


FORMATS = {
    "tasks.json": tasks_json,
    "EvalBench evalset": evalset,
    "EvalBench NL2SQL": nl2sql,
    "AgentV tests": agentv_inline,
    "AgentV cases.jsonl": agentv_jsonl,
    "EvalBench run config": run_config,
}


def _load(path: Path) -> object:
    if path.suffix == ".json":
        return load_tasks(path, environ={})
    from bat_pipeline.engine.config.project import project_tasks

    return project_tasks(load_project(path))


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_ids_giving_one_file_name_are_refused(fmt, tmp_path):
    given, named, key = FORMATS[fmt](tmp_path, CLASH)
    with pytest.raises(InputError) as caught:
        _load(given)
    message = str(caught.value)
    for said in (str(named), f"{key}[2] (id 'x_y')", "field 'id'", f"'x/y' ({key}[0])", "same episode file name"):
        assert said in message, message


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_ids_starting_with_a_dot_are_refused(fmt, tmp_path):
    given, named, key = FORMATS[fmt](tmp_path, DOT)
    with pytest.raises(InputError) as caught:
        _load(given)
    message = str(caught.value)
    for said in (str(named), f"{key}[1] (id '../../etc')", "field 'id'", "starts with '.'"):
        assert said in message, message


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_distinct_ids_load(fmt, tmp_path):
    given, _, _ = FORMATS[fmt](tmp_path, ["x/y", "x.y", "a"])
    assert len(_load(given)) == 3  # type: ignore[arg-type]


@pytest.mark.parametrize("key", ["..", ".hidden", "a/b", ""])
def test_model_keys_that_are_no_folder_name_are_refused(key, tmp_path):
    eval_file = put(
        tmp_path / "eval" / "eval.yaml",
        f"models:\n  - provider: openai\n    model: gpt-4o\n    key: {json.dumps(key)}\n",
    )
    with pytest.raises(InputError) as caught:
        load_eval_config(tmp_path, environ={})
    message = str(caught.value)
    assert str(eval_file) in message and "models[0]" in message and "field 'key'" in message, message
    assert "cannot name a partition" in message


@pytest.mark.parametrize(
    ("names", "said"),
    [(["a/b", "a_b"], "targets 'a/b' and 'a_b' give the same partition key 'a_b'"), ([".x"], "starts with '.'")],
)
def test_agentv_target_names_that_clash_as_folders_are_refused(names, said, tmp_path):
    targets = "".join(f"  - name: {json.dumps(n)}\n    provider: cli\n    command: python3 run.py\n" for n in names)
    put(tmp_path / ".agentv" / "targets.yaml", "targets:\n" + targets)
    path = put(tmp_path / "e.yaml", f"execution:\n  targets: {json.dumps(names)}\ntests:\n  - id: t\n    input: hi\n")
    with pytest.raises(InputError) as caught:
        load_project(path)
    assert str(path) in str(caught.value) and said in str(caught.value), str(caught.value)
