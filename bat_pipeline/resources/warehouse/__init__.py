"""History across runs in one DuckDB file: every run × model's episodes, score rows and
metrics, with views for the latest run per model and each model's trend.

A partition is keyed by (run_id, model_key); writing it again replaces exactly its rows,
in one transaction. Run ids sort in time order (`storage.new_run_id`), so "latest" and
"previous" mean by run id. Every score row of every episode (deterministic checks, judge
rubrics, any scorer added later) is one row of `episode_scores`; `verdict_checks` and
`judge_scores` are views over it.

- `schema.py`: tables, views, the schema version and the migrations from older files;
- `load.py`: a partition's rows, and replacing them;
- `queries.py`: latest, trend, previous run, score means, chart data;
- `locks.py`: opening the file while other processes hold it;
- `store.py`: `Warehouse` and the Dagster resource.
"""

from bat_pipeline.resources.warehouse.load import partition_rows
from bat_pipeline.resources.warehouse.locks import DEFAULT_MAX_WAIT_S, WarehouseBusyError
from bat_pipeline.resources.warehouse.schema import (
    FINAL_OUTPUT_CHARS,
    SCHEMA_VERSION,
    TABLES,
    TEXT_CHARS,
    VIEWS,
)
from bat_pipeline.resources.warehouse.store import Warehouse, WarehouseResource

__all__ = [
    "DEFAULT_MAX_WAIT_S",
    "FINAL_OUTPUT_CHARS",
    "SCHEMA_VERSION",
    "TABLES",
    "TEXT_CHARS",
    "VIEWS",
    "Warehouse",
    "WarehouseBusyError",
    "WarehouseResource",
    "partition_rows",
]
