"""Jobs, the sweep schedule and the dataset-change sensor (issue 6).

Both are always defined so the UI shows them: the schedule runs only when
`evaluation.schedule` has a cron, the sensor only when `evaluation.watch` is true
(either can also be switched on in the UI)."""

import hashlib
from pathlib import Path

import dagster as dg

from bat_pipeline.assets.common import RUN_ID_TAG
from bat_pipeline.engine.contracts import EvalConfig
from bat_pipeline.storage import new_run_id

EVALUATE_JOB = "evaluate"
CHARTS_JOB = "refresh_charts"


def inputs_fingerprint(config: EvalConfig) -> str:
    """A hash of eval.yaml and the dataset; changes when either file's bytes change."""
    digest = hashlib.sha256()
    for path in (config.source, config.resolve(config.evaluation.dataset)):
        digest.update(str(path).encode())
        digest.update(Path(path).read_bytes() if Path(path).exists() else b"<missing>")
    return digest.hexdigest()


def _sweep_requests(partitions: dg.StaticPartitionsDefinition, reason: str):
    run_id = new_run_id()
    return [
        dg.RunRequest(run_key=f"{reason}-{run_id}-{key}", partition_key=key, tags={RUN_ID_TAG: run_id})
        for key in partitions.get_partition_keys()
    ]


def build_automation(
    config: EvalConfig,
    partitions: dg.StaticPartitionsDefinition,
    chain: list,
    charts_asset: dg.AssetsDefinition,
    *after_runs: dg.AssetsDefinition,
):
    evaluate = dg.define_asset_job(
        EVALUATE_JOB,
        selection=dg.AssetSelection.assets(*chain),
        description="The whole chain for one model: tasks, episodes, trajectories, verdicts, judge, metrics.",
    )
    # `after_runs`: more assets drawn from every partition's results (the report) with the charts.
    charts = dg.define_asset_job(
        CHARTS_JOB,
        selection=dg.AssetSelection.assets(charts_asset, *after_runs),
        description="Redraw the charts from the warehouse and write the latest run's report.",
    )

    cron = config.evaluation.schedule

    @dg.schedule(
        job=evaluate,
        cron_schedule=cron or "0 3 * * *",
        default_status=dg.DefaultScheduleStatus.RUNNING if cron else dg.DefaultScheduleStatus.STOPPED,
        description="Evaluate every model (cron from evaluation.schedule; stopped when unset).",
    )
    def sweep_schedule(context: dg.ScheduleEvaluationContext):
        return _sweep_requests(partitions, "sweep")

    watching = dg.DefaultSensorStatus.RUNNING if config.evaluation.watch else dg.DefaultSensorStatus.STOPPED

    @dg.sensor(
        job=evaluate,
        minimum_interval_seconds=30,
        default_status=watching,
        description="Evaluate every model when eval.yaml or the dataset changes (evaluation.watch).",
    )
    def dataset_changed(context: dg.SensorEvaluationContext):
        fingerprint = inputs_fingerprint(config)
        if context.cursor == fingerprint:
            return dg.SkipReason("eval.yaml and the dataset are unchanged")
        first = context.cursor is None
        context.update_cursor(fingerprint)
        if first:
            return dg.SkipReason("recorded the current eval.yaml and dataset; a change will start a run")
        return _sweep_requests(partitions, f"change-{fingerprint[:12]}")

    @dg.run_status_sensor(
        run_status=dg.DagsterRunStatus.SUCCESS,
        monitored_jobs=[evaluate],
        request_job=charts,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="Redraw the charts after each successful evaluation run.",
    )
    def charts_after_evaluation(context: dg.RunStatusSensorContext):
        return dg.RunRequest(run_key=f"charts-{context.dagster_run.run_id}")

    return [evaluate, charts], [sweep_schedule], [dataset_changed, charts_after_evaluation]
