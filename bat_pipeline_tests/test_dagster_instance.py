"""The Dagster instance a home seeded with the project's dagster.yaml gets
(bat_pipeline/dagster_instance.py): one SQLAlchemy engine per database file and process,
where Dagster's own storages make one per connection, on files Dagster's default instance
reads as its own."""

from __future__ import annotations

import shutil
from collections import Counter

import dagster as dg

import bat_pipeline.dagster_instance as dagster_instance
from bat_pipeline_tests.support.paths import dagster_home

QUIET = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}


@dg.asset
def numbers(context) -> list[int]:
    for n in range(5):
        context.log.info(f"counted {n}")
    return list(range(5))


@dg.asset
def total(numbers: list[int]) -> int:
    return sum(numbers)


def test_each_database_file_gets_one_engine_and_dagsters_default_instance_reads_the_files(tmp_path, monkeypatch):
    made: list[str] = []
    create_engine = dagster_instance.create_engine

    def counting(url, **options):
        made.append(str(url))
        return create_engine(url, **options)

    monkeypatch.setattr(dagster_instance, "create_engine", counting)
    home = dagster_home(tmp_path / "home")
    job = dg.Definitions(assets=[numbers, total]).resolve_implicit_global_asset_job_def()

    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert type(instance) is dagster_instance.BatPipelineInstance
        results = [job.execute_in_process(instance=instance, run_config=QUIET) for _ in range(3)]
        run_ids = {r.run_id for r in results}
        stored = sum(len(instance.all_logs(run_id)) for run_id in run_ids)

    assert all(r.success for r in results)
    # Dozens of events stored, each over connections of its own; one engine per file: the
    # runs' database, the cross-run index and each run's event file.
    assert stored > 3 * 20, stored
    assert Counter(made).most_common(1)[0][1] == 1, Counter(made)
    assert len(made) == 2 + len(run_ids), made

    # The same files under Dagster's own instance (another home with its default settings).
    plain = tmp_path / "plain"
    shutil.copytree(home, plain)
    (plain / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    with dg.DagsterInstance.from_config(str(plain)) as instance:
        assert type(instance) is dg.DagsterInstance
        assert {r.run_id for r in instance.get_runs()} == run_ids
        assert sum(len(instance.all_logs(run_id)) for run_id in run_ids) == stored
        materialized = instance.fetch_materializations(dg.AssetKey("total"), limit=10).records
        assert len(materialized) == 3
