"""Every model of an agent at once, in one process tree: one run of the evaluation chain
per partition, all launched together (a child process each), each on Dagster's
multiprocess executor (a process per step), so the partitions' steps — their warehouse
writes included — overlap.

    BAT_AGENT_DIR=... BAT_PIPELINE_HOME=... DAGSTER_HOME=... \\
        python -m bat_pipeline_tests.pipeline.backfill RUN_ID

Prints `RUN <partition> <dagster run id> <SUCCESS|FAILURE>` per partition and exits 0 when
every run succeeded.
"""

from __future__ import annotations

import subprocess
import sys

import dagster as dg

from bat_pipeline.assets.common import RUN_ID_TAG
from bat_pipeline.definitions import agent_dir_from_env, build_definitions
from bat_pipeline.partition_runs import STEP_MODULES
from bat_pipeline.storage import default_root

JOB = "evaluate_multiprocess"


def evaluate_multiprocess() -> dg.JobDefinition:
    """The `evaluate` job's assets on the multiprocess executor; rebuilt in each step process."""
    defs = build_definitions(agent_dir_from_env(), default_root())
    job = dg.define_asset_job(
        JOB,
        selection=dg.AssetSelection.all() - dg.AssetSelection.assets(dg.AssetKey(["weather_agent", "eval_charts"])),
        executor_def=dg.multiprocess_executor.configured(
            {
                # Steps fork from a server that has imported Dagster and the
                # pipeline once, instead of each starting a cold interpreter.
                "start_method": {"forkserver": {"preload_modules": [__name__, *STEP_MODULES]}}
            }
        ),
    )
    return dg.Definitions(assets=defs.assets, resources=defs.resources, jobs=[job]).resolve_job_def(JOB)


def run_partition(key: str, run_id: str) -> int:
    """One partition's run; in its own process (`execute_job` from several threads of one
    process deadlocks)."""
    with dg.DagsterInstance.get() as instance:
        result = dg.execute_job(
            dg.reconstructable(evaluate_multiprocess), instance, tags={"dagster/partition": key, RUN_ID_TAG: run_id}
        )
    # One write, line and newline together: the partitions' processes share this stdout with
    # Dagster's log lines, and print() writes the text and its newline apart.
    sys.stdout.write(f"RUN {key} {result.run_id} {'SUCCESS' if result.success else 'FAILURE'}\n")
    sys.stdout.flush()
    return 0 if result.success else 1


def main(argv: list[str]) -> int:
    if argv[0] == "--partition":
        return run_partition(argv[1], argv[2])
    run_id = argv[0]
    with dg.DagsterInstance.get():
        pass  # the instance's storage exists before the partitions' processes open it at once
    keys = evaluate_multiprocess().partitions_def.get_partition_keys()
    children = [subprocess.Popen([sys.executable, "-m", __spec__.name, "--partition", key, run_id]) for key in keys]
    return 0 if all(child.wait() == 0 for child in children) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
