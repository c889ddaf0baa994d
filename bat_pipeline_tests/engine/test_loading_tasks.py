"""engine.config.load_tasks: eval/input/tasks.json (SPEC §3)."""

from __future__ import annotations

import hashlib
import json

import pytest

from bat_pipeline.engine.config import load_tasks
from bat_pipeline.engine.contracts.names import MAX_FILE_STEM_BYTES, task_file_stem
from bat_pipeline.engine.errors import InputError


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
    tasks = load_tasks(
        write(
            tmp_path,
            [
                {"id": "a", "turns": ["hi"]},
                {
                    "id": "b",
                    "turns": ["x", "y"],
                    "expected": {"status": None, "tool_calls": [{"name": "search"}]},
                    "meta": {"category": "c"},
                },
            ],
        )
    )
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


def test_ids_giving_the_same_file_name_are_refused_naming_both(tmp_path):
    error = refused(
        tmp_path, [{"id": "a b", "turns": ["x"]}, {"id": "c", "turns": ["x"]}, {"id": "a_b", "turns": ["y"]}]
    )
    assert error.entry == "tasks[2] (id 'a_b')" and error.field == "id"
    assert "'a b' (tasks[0])" in str(error) and "a_b__try<n>.json" in str(error)


@pytest.mark.parametrize("task_id", [".hidden", "..", "../x", "."])
def test_ids_starting_with_a_dot_are_refused(tmp_path, task_id):
    error = refused(tmp_path, [{"id": "ok", "turns": ["x"]}, {"id": task_id, "turns": ["x"]}])
    assert error.entry == f"tasks[1] (id '{task_id}')" and error.field == "id"
    assert "starts with '.'" in str(error)


def test_long_ids_sharing_a_prefix_are_accepted_with_distinct_file_names(tmp_path):
    first, second = "x" * 300 + "/one", "x" * 300 + "/two"
    tasks = load_tasks(write(tmp_path, [{"id": first, "turns": ["x"]}, {"id": second, "turns": ["y"]}]))
    assert [t.id for t in tasks] == [first, second]
    stems = [task_file_stem(t.id) for t in tasks]
    assert stems[0] != stems[1]
    for stem, task_id in zip(stems, (first, second), strict=True):
        assert len(stem.encode()) <= MAX_FILE_STEM_BYTES
        assert stem == "x" * (MAX_FILE_STEM_BYTES - 9) + "-" + hashlib.sha256(task_id.encode()).hexdigest()[:8]
    assert task_file_stem("a/b.c") == "a_b.c"
