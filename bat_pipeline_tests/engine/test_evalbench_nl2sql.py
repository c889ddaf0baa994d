"""EvalBench's NL2SQL dataset format (its `.ci/nl2sql_smoke.evalset.json`, in the corpus) read
as a dataset: each entry a task asking its question, its golden query (the dialect's) for the
SQL scorers, no status check; a run config's `dialects`, `query_types` and `databases`
choosing entries as EvalBench filters them."""

from __future__ import annotations

from pathlib import Path

import pytest

from bat_pipeline.engine.config.dataset import load_tasks
from bat_pipeline.engine.config.project import nl2sql_chosen
from bat_pipeline.engine.errors import InputError

SMOKE = Path(__file__).resolve().parents[1] / "evalbench" / "corpus" / ".ci" / "nl2sql_smoke.evalset.json"


def test_the_nl2sql_smoke_set_is_a_dataset():
    warnings: list[str] = []
    tasks = load_tasks(SMOKE, warnings)
    assert [t.id for t in tasks] == ["9", "16", "18", "19", "100", "180", "156", "3"]
    first = tasks[0]
    assert first.turns == ["Can you find all the users who have not made any posts?"]
    assert first.expected.status is None
    assert first.scenario.golden_sql.startswith("SELECT u.user_id FROM tbl_users u LEFT JOIN")
    assert first.meta["nl2sql"]["database"] == "db_blog" and first.meta["category"] == "dql"
    assert warnings == []


def test_a_run_configs_filters_choose_entries():
    tasks = load_tasks(SMOKE)
    assert len(nl2sql_chosen(tasks, {"dialects": ["postgres"], "query_types": ["dql"]}, "run.yaml")) == 8
    with pytest.raises(InputError, match="no entry of the dataset") as refused:
        nl2sql_chosen(tasks, {"dialects": ["mysql"]}, "run.yaml")
    assert "run.yaml" in str(refused.value) and "dialects" in str(refused.value)
    with pytest.raises(InputError):
        nl2sql_chosen(tasks, {"databases": ["other_db"]}, "run.yaml")
