"""EvalBench scenarios as dataset entries (SPEC §10, §12): `{"scenarios": [...]}` files and
scenario fields on bat-cli tasks, turned into the task shape before a task validates.

An entry with `starting_prompt` is a scenario: its first turn is the starting prompt and,
unless it says otherwise with an `expected` block, no bat-cli expectation applies (the
status check is off: EvalBench scores the trajectory, the goal and the behaviour) and the
plan is the expected outcome the judge's rubrics read. An entry
with `turns` is a bat-cli task; scenario fields beside them (`conversation_plan`,
`expected_trajectory`, `max_turns`, ...) carry the conversation on after the turns and
select the EvalBench scorers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from bat_pipeline.engine.contracts.scenario import SCENARIO_KEYS
from bat_pipeline.engine.errors import InputError

SCENARIOS = "scenarios"
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def is_evalset(data: Any) -> bool:
    """A JSON object with a `scenarios` list: an EvalBench evalset."""
    return isinstance(data, dict) and SCENARIOS in data


def evalset_entries(data: dict[str, Any], file: str, environ: Mapping[str, str]) -> list[Any]:
    """The scenarios of an evalset, `${VAR}` expanded everywhere from `environ` (EvalBench
    expands them in the whole file; an unset one is refused, naming the scenario)."""
    scenarios = data[SCENARIOS]
    if not isinstance(scenarios, list):
        raise InputError(file, "'scenarios' must be an array of scenarios", field=SCENARIOS)
    return [_expand(item, environ, file, f"scenarios[{i}]") for i, item in enumerate(scenarios)]


def _expand(value: Any, environ: Mapping[str, str], file: str, entry: str) -> Any:
    if isinstance(value, str):

        def replace(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in environ:
                raise InputError(
                    file,
                    f"environment variable '{name}' is not set (EvalBench expands ${{VAR}} everywhere in a dataset)",
                    entry=entry,
                )
            return environ[name]

        return _VAR.sub(replace, value)
    if isinstance(value, list):
        return [_expand(v, environ, file, entry) for v in value]
    if isinstance(value, dict):
        return {k: _expand(v, environ, file, entry) for k, v in value.items()}
    return value


def as_task_entry(item: dict[str, Any], scorers: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """A dataset entry in the task shape: its scenario fields under `scenario`, a starting
    prompt as the first turn, and (for a scenario without `expected`) no status check.
    `scorers`: the run config's selection, for entries that name none. Entries with no
    scenario field come back as they were."""
    found = {key: item[key] for key in SCENARIO_KEYS if key in item}
    if not found and scorers is None:
        return item
    entry = {key: value for key, value in item.items() if key not in SCENARIO_KEYS}
    prompt = found.pop("starting_prompt", None)
    if prompt is not None:
        if "turns" in entry:
            entry["turns"] = [prompt, *entry["turns"]] if isinstance(entry["turns"], list) else entry["turns"]
        else:
            entry["turns"] = [prompt]
        if "expected" not in entry:
            entry["expected"] = {"status": None, "expected_outcome": str(found.get("conversation_plan") or "")}
    if scorers is not None and "scorers" not in found:
        found["scorers"] = scorers
    if isinstance(found.get("scorers"), list):
        found["scorers"] = {name: {} for name in found["scorers"]}
    if isinstance(found.get("scorers"), dict):
        found["scorers"] = {name: (options or {}) for name, options in found["scorers"].items()}
    if isinstance(found.get("env"), dict):
        found["env"] = {name: str(value) for name, value in found["env"].items() if value is not None}
    entry["scenario"] = found
    return entry


NL2SQL_KEYS = ("nl_prompt", "golden_sql")
"""What marks an entry of EvalBench's NL2SQL dataset (`evalbench-standard-format`)."""


def is_nl2sql_item(item: Any) -> bool:
    """An entry of EvalBench's NL2SQL dataset: `{id, nl_prompt, query_type, database,
    dialects, golden_sql: {dialect: [sql, ...]}, eval_query, setup_sql, cleanup_sql, tags}`."""
    return isinstance(item, dict) and all(k in item for k in NL2SQL_KEYS) and "turns" not in item


def golden_for(golden: Any, dialects: list[str]) -> str | None:
    """The golden query for the first of `dialects` the entry has (its first query), else
    for its first dialect; None when it has none."""
    if isinstance(golden, str):
        return golden
    if not isinstance(golden, dict) or not golden:
        return None
    for dialect in [*dialects, *golden]:
        queries = golden.get(dialect)
        if isinstance(queries, list) and queries and isinstance(queries[0], str):
            return queries[0]
        if isinstance(queries, str):
            return queries
    return None


def nl2sql_entry(item: dict[str, Any]) -> dict[str, Any]:
    """An NL2SQL entry as a task: the question its one turn, the golden query (its first
    dialect's) for the SQL scorers, no status check; EvalBench's other fields in `meta`
    (`nl2sql`), where a run config's `dialects`, `query_types` and `databases` choose by them."""
    dialects = [str(d) for d in item.get("dialects") or []]
    meta = {
        "category": item.get("query_type"),
        "nl2sql": {
            "query_type": item.get("query_type"),
            "database": item.get("database"),
            "dialects": dialects,
            "golden_sql": item.get("golden_sql"),
            "tags": item.get("tags") or [],
        },
    }
    entry: dict[str, Any] = {
        "id": str(item.get("id")),
        "turns": [str(item.get("nl_prompt") or "")],
        "expected": {"status": None},
        "meta": meta,
    }
    golden = golden_for(item.get("golden_sql"), dialects)
    if golden is not None:
        entry["golden_sql"] = golden
    return entry
