"""engine.loading.load_tasks: eval/input/tasks.json (SPEC §3)."""

from __future__ import annotations

import json

import pytest

from bat_pipeline.engine.errors import InputError
from bat_pipeline.engine.loading import load_tasks


def write(tmp_path, data) -> str:
    path = tmp_path / "tasks.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=1))
    return path


def refused(tmp_path, data) -> InputError:
    path = write(tmp_path, data)
    with pytest.raises(InputError) as caught:
        load_tasks(path)
    assert str(path) in str(caught.value)
    return caught.value


def test_full_task_and_defaults(tmp_path):
    tasks = load_tasks(write(tmp_path, [
        {"id": "a", "turns": ["hi"]},
        {"id": "b", "turns": ["x", "y"], "expected": {"status": None, "tool_calls": [{"name": "search"}]},
         "meta": {"category": "c"}},
    ]))
    assert tasks[0].expected.status == "completed" and tasks[0].expected.no_errors is False
    assert tasks[1].expected.status is None and tasks[1].expected.tool_calls[0].times == 1


def test_missing_file(tmp_path):
    with pytest.raises(InputError) as caught:
        load_tasks(tmp_path / "nope.json")
    assert "nope.json" in str(caught.value) and "not found" in str(caught.value)


def test_not_json_has_line_and_column(tmp_path):
    error = refused(tmp_path, '[\n  {"id": "a",}\n]')
    assert "line 2, column" in str(error)


def test_not_a_list(tmp_path):
    assert "array" in str(refused(tmp_path, {"id": "a"}))


def test_empty_turns(tmp_path):
    error = refused(tmp_path, [{"id": "a", "turns": []}])
    assert (error.entry, error.field) == ("tasks[0] (id 'a')", "turns")
    assert "must not be empty" in str(error)


def test_missing_id(tmp_path):
    error = refused(tmp_path, [{"id": "a", "turns": ["x"]}, {"turns": ["x"]}])
    assert (error.entry, error.field) == ("tasks[1]", "id")


def test_wrong_type_named(tmp_path):
    error = refused(tmp_path, [{"id": "a", "turns": ["x"], "expected": {"max_tokens": "lots"}}])
    assert error.field == "expected.max_tokens"
    assert "expected an integer, got a string ('lots')" in str(error)


def test_unknown_expectation_field_did_you_mean(tmp_path):
    error = refused(tmp_path, [{"id": "a", "turns": ["x"], "expected": {"tool_calls": [{"nme": "s"}]}}])
    assert error.field == "expected.tool_calls[0].nme"
    assert "did you mean 'name'?" in str(error)


def test_unknown_status(tmp_path):
    error = refused(tmp_path, [{"id": "a", "turns": ["x"], "expected": {"status": "done"}}])
    assert error.field == "expected.status" and "'completed'" in str(error)


def test_duplicate_ids_name_both(tmp_path):
    error = refused(tmp_path, [{"id": "a", "turns": ["x"]}, {"id": "b", "turns": ["x"]}, {"id": "a", "turns": ["y"]}])
    assert error.entry == "tasks[2] (id 'a')" and error.field == "id"
    assert "tasks[0]" in str(error)


def test_task_not_an_object(tmp_path):
    error = refused(tmp_path, [["hi"]])
    assert error.entry == "tasks[0]" and "an array" in str(error)
