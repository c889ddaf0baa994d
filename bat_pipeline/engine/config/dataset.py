"""The dataset, `tasks.json` (SPEC §3), read as `bat eval` reads it."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bat_pipeline.engine.config.files import check_tree, parse_json, read_text
from bat_pipeline.engine.config.messages import (
    drop_unknown_keys,
    explain,
    first_error,
    in_entry,
    kind,
    more_problems,
    where,
)
from bat_pipeline.engine.contracts.names import check_id_file_names
from bat_pipeline.engine.contracts.tasks import Task
from bat_pipeline.engine.datasets.evalbench import (
    as_task_entry,
    evalset_entries,
    is_evalset,
    is_nl2sql_item,
    nl2sql_entry,
)
from bat_pipeline.engine.errors import InputError
from bat_pipeline.engine.yaml_rubrics.load import resolve_rubric_names


def _task_entry(index: int, item: Any) -> str:
    # Scenarios are tasks here: `tasks[i]` names the entry in either kind of file.
    task_id = item.get("id") if isinstance(item, dict) else None
    return f"tasks[{index}] (id '{task_id}')" if isinstance(task_id, str) and task_id else f"tasks[{index}]"


def load_tasks(
    path: str | Path,
    warnings: list[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    scorers: dict[str, dict[str, Any]] | None = None,
    adk_config: Path | None = None,
) -> list[Task]:
    """The dataset: a JSON array of tasks (SPEC §3), read as `bat eval` reads it, or an
    EvalBench evalset `{"scenarios": [...]}` (SPEC §10; `${VAR}` expanded from `environ`,
    default the shell), or EvalBench's NL2SQL dataset (an array of `{id, nl_prompt,
    golden_sql, ...}`: engine.datasets.evalbench.nl2sql_entry). Entries of either kind may
    carry scenario fields and mix in one file (engine.datasets.evalbench); a scenario's
    relative `database` is taken from the dataset's folder. `scorers`: the EvalBench run
    config's selection, for every entry. A Google ADK eval file or a folder of them
    (`*.evalset.json`, `*.test.json`) is read by engine.datasets.adk, `adk_config`
    (`--config`) giving its criteria.

    Unknown keys are ignored, each with a warning appended to `warnings` (a key one edit
    away from a known one is refused as a typo); scalars are coerced as bat-cli's records
    do ("3" → 3, "true" → true); a null `expected_outcome` is empty. Refuses (InputError
    with file, `tasks[i] (id 'x')` and field) a missing file, text that is not JSON (line
    and column), a top level that is not an array, an empty array, a task that does not
    validate, and an id used twice (both indexes named).
    """
    path = Path(path)
    file = str(path)
    # engine.datasets.adk reads its files through this package: imported here, not above.
    from bat_pipeline.engine.datasets import adk

    if adk.is_adk_path(path):  # a folder of ADK eval files
        return _adk_tasks(path, warnings, adk_config)
    text = read_text(path, missing="dataset not found (evaluation.dataset in eval.yaml names it)")
    data = parse_json(text, file, check=False)
    if adk.is_adk_data(data) or (adk.is_legacy(data) and path.name.endswith(adk.SUFFIXES)):
        return _adk_tasks(path, warnings, adk_config)
    if not isinstance(data, list):
        check_tree(data, file)
    if is_evalset(data):
        data = evalset_entries(data, file, os.environ if environ is None else environ)
    if not isinstance(data, list):
        raise InputError(
            file,
            "the top level must be an array of tasks (or an object with 'scenarios'), got "
            f"{kind(data, json_words=True)}",
        )
    if not data:
        raise InputError(file, "the dataset has no tasks")
    data = [nl2sql_entry(item) if is_nl2sql_item(item) else item for item in data]
    tasks: list[Task] = []
    first_index: dict[str, int] = {}
    for index, item in enumerate(data):
        entry = _task_entry(index, item)
        if not isinstance(item, dict):
            raise InputError(file, f"expected a task object, got {kind(item, json_words=True)}", entry=entry)
        check_tree(item, file, entry=entry)
        item = as_task_entry(json.loads(json.dumps(item)), scorers)  # a private copy: unknown keys are removed
        expected = item.get("expected")
        if isinstance(expected, dict) and expected.get("expected_outcome", "") is None:
            expected["expected_outcome"] = ""
        locate = in_entry(entry)
        found = drop_unknown_keys(item, Task, file, locate)
        if warnings is not None:
            warnings.extend(found)
        try:
            task = Task.model_validate(item, strict=False)
        except ValidationError as exc:
            error, more = first_error(exc)
            message = explain(error, Task, json_words=True)
            message += more_problems(more)
            _, field = locate(tuple(error["loc"]))
            raise InputError(file, message, entry=entry, field=field or None) from None
        if warnings is not None:
            warnings.extend(_args_direction(task, file, entry))
        if task.judge is not None and task.judge.rubrics is not None:
            task.judge.rubrics = resolve_rubric_names(
                task.judge.rubrics, path.parent.resolve(), file, "judge.rubrics", entry=entry
            )
        if task.id in first_index:
            raise InputError(
                file, f"duplicate id '{task.id}' (also tasks[{first_index[task.id]}])", entry=entry, field="id"
            )
        first_index[task.id] = index
        tasks.append(_with_database(task, path.parent))
    check_task_file_names(tasks, file)
    return tasks


def _adk_tasks(path: Path, warnings: list[str] | None, config: Path | None) -> list[Task]:
    from bat_pipeline.engine.datasets.adk import load_adk_tasks

    tasks = load_adk_tasks(path, warnings, config)
    check_task_file_names(tasks, str(path))
    return tasks


def _with_database(task: Task, folder: Path) -> Task:
    scenario = task.scenario
    if scenario is None or not scenario.database or Path(scenario.database).expanduser().is_absolute():
        return task
    database = str((folder / scenario.database).resolve())
    return task.model_copy(update={"scenario": scenario.model_copy(update={"database": database})})


def _args_direction(task: Task, file: str, entry: str) -> list[str]:
    """A warning when a task compares arguments both ways round: `args_subset` of
    tool_calls (the call's arguments contain these) and a trajectory's `args_mode:
    subset` (the call's arguments all appear in the expected ones; SPEC §13)."""
    trajectory = task.expected.trajectory
    if trajectory is None or not trajectory.uses_args_subset():
        return []
    if not any(want.args_subset for want in task.expected.tool_calls):
        return []
    return [
        f"{where(file, entry, 'expected.trajectory')}: args_mode 'subset' means the call's arguments all "
        "appear in the expected ones, the other way round from tool_calls' args_subset (the expected "
        "arguments all appear in the call's); 'superset' is args_subset's direction"
    ]


def check_task_file_names(tasks: list[Task], file: str) -> None:
    """`check_id_file_names` of the tasks (entries `tasks[i]`, as both kinds of file are named)."""
    check_id_file_names([task.id for task in tasks], file, "tasks")
