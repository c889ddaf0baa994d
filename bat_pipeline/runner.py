"""`bat-pipeline run`: every model's partition of the chain at once, in a local Dagster instance.

Each partition is a Dagster run of the `evaluate` job tagged with the shared evaluation run
id, in a process of its own forked from this one (partition_runs); the charts are redrawn
in this process once all have ended. Progress is read from each partition's record
(partition.json), which counts its episodes as they are stored.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from bat_pipeline import PROGRAM
from bat_pipeline.engine.config.execution import chosen_execution
from bat_pipeline.engine.config.project import Overrides, load_project, project_tasks
from bat_pipeline.engine.contracts import EvalConfig
from bat_pipeline.engine.contracts.config import ExecutionSettings
from bat_pipeline.engine.contracts.names import safe_key
from bat_pipeline.engine.contracts.timings import RUN_STARTED_VAR
from bat_pipeline.engine.conversation import scenarios_needing_user
from bat_pipeline.engine.environment import require_judge_key, require_simulated_user_key
from bat_pipeline.engine.errors import InputError
from bat_pipeline.engine.target_inputs import agent_partition, require_target_keys, starts_agent
from bat_pipeline.locations import (
    ADK_CONFIG_VAR,
    AGENT_DIR_VAR,
    DAGSTER_HOME_VAR,
    DATASET_VAR,
    EXPORT_OTLP_VAR,
    OUTPUT_VAR,
    PROVIDERS_VAR,
    THRESHOLD_VAR,
    TRUST_VAR,
    dagster_home,
)
from bat_pipeline.partition_runs import failure_lines, run_charts, start_partition, warm_up
from bat_pipeline.progress import Progress, partition_state
from bat_pipeline.remote_root import pull_file, pull_tree, root_text, url_of
from bat_pipeline.run_summary import (
    print_failures,
    print_problems,
    print_summary,
    print_tests,
    print_timings,
    record_run_timings,
    report_written,
    stored_episodes,
    write_csv,
)
from bat_pipeline.storage import (
    HOME_VAR,
    charts_dir,
    check_result_folders,
    default_root,
    has_ref,
    latest_run_dir,
    load_ref,
    new_run_id,
    partition_dir,
)

POLL_S = 0.1
PROGRESS_EVERY_S = 3.0


def select_models(config: EvalConfig, wanted: list[str] | None) -> list[str]:
    """Partition keys for `--model` values (a key or `provider:model`); all when none."""
    if not wanted:
        return [m.partition_key for m in config.models]
    keys: list[str] = []
    for value in wanted:
        match = [m.partition_key for m in config.models if value in (m.partition_key, m.name)]
        if not match:
            known = ", ".join(f"{m.partition_key} ({m.name})" for m in config.models)
            raise InputError(str(config.source), f"no model '{value}' (known: {known})", field="models")
        keys.extend(k for k in match if k not in keys)
    return keys


def _partition_folder(root: Path, run_id: str, key: str, resume: bool, agent_id: str) -> Path | None:
    """Where the partition of `key` writes: this run's folder, or the run it resumes."""
    return latest_run_dir(root, key, agent_id) if resume else partition_dir(root, run_id, key)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' * (n != 1)}"


def _layout(config: EvalConfig) -> str:
    """What the output folder holds: the source tool's own files, in its layout."""
    if config.agentv is not None:
        return "AgentV's files (its layout)"
    if config.evalbench is not None:
        return "EvalBench's files (its layout)"
    return "bat eval's files (its layout)"


def _live_terminal(out: Any) -> bool:
    """The progress is redrawn in place only on a terminal, when printing to it, outside CI."""
    return out is print and sys.stdout.isatty() and not os.environ.get("CI")


def _current_folders(root: Path, run_id: str, keys: list[str], resume: bool, agent_id: str) -> dict[str, Path | None]:
    """Each partition's folder (`_partition_folder`), its record fetched from the object
    store when the root is one: steps on other machines store their episodes there."""
    folders = {key: _partition_folder(root, run_id, key, resume, agent_id) for key in keys}
    for folder in folders.values():
        if folder is not None:
            pull_file(folder / "partition.json")
    return folders


def run_evaluation(
    agent_dir: Path,
    *,
    models: list[str] | None = None,
    resume: bool = False,
    timings: bool = False,
    out=print,
    overrides: Overrides | None = None,
    executor: str | None = None,
    address: str | None = None,
    otlp_port: int | None = None,
) -> int:
    """Run the chain for the chosen models in parallel; 0 when every model ran and passed its
    gates, 1 otherwise. `agent_dir` may be an AgentV eval file (its targets are the
    models); with `overrides.threshold` a test below it also makes the result 1.
    InputError (exit 2) before anything starts on bad configuration,
    including a judge that is on and has no API key. `executor`, `address`: where the steps
    run, over eval.yaml's `execution` (an address alone means Dask). Every phase is timed (the partitions'
    timings.json, the run's in `runs/<run id>/timings.json`); `timings` prints them. `otlp_port`:
    an OTLP receiver on 127.0.0.1:PORT for the whole run, its spans read for agents at
    `agent.url` (`runs/<run id>/otlp-spans.jsonl`); a port taken is refused (InputError)."""
    from bat_pipeline.resources.agent_process import OTLP_SPANS_VAR, AgentLauncher
    from bat_pipeline.resources.partition_lock import holding_partitions
    from bat_pipeline.resources.process_group import stop_process_group
    from bat_pipeline.resources.scripted_process import (
        STOP_GRACE_S,
        URL_VAR,
        start_scripted_llm,
        uses_scripted_llm,
        with_scripted_llm,
    )

    started = time.time()
    agent_dir = Path(agent_dir).resolve()
    overrides = overrides or Overrides()
    config = load_project(agent_dir, overrides)
    warnings = list(config.warnings)
    tasks = project_tasks(config, warnings)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    keys = select_models(config, models)
    execution = chosen_execution(config, executor, address)
    root = default_root(agent_dir)
    for key in (k for k in keys if starts_agent(config.model(k))):
        for warning in AgentLauncher(*agent_partition(config, key), root).preflight():
            if warning not in warnings:
                warnings.append(warning)
                print(f"warning: {warning}", file=sys.stderr)
    require_judge_key(config)
    require_target_keys(config)
    if scenarios_needing_user(config, tasks):
        require_simulated_user_key(config)
    check_result_folders(root, config)
    # One run at a time per agent and model (resources.partition_lock): a second is refused
    # here, before anything starts; the partitions' processes hold the locks with this one.
    locks = contextlib.ExitStack()
    locks.enter_context(holding_partitions(root, config.agent_id, keys))

    # Two evaluations of one agent can start within the same second; the suffix keeps their
    # reference folders (<output_dir>/<run id>/...) apart. Ids still sort by start time.
    run_id = f"{new_run_id()}-{secrets.token_hex(4)}"
    # The definitions, the resources and the forked partitions read these.
    os.environ.update(
        {
            AGENT_DIR_VAR: str(agent_dir),
            HOME_VAR: root_text(root),  # an object store's URL, not this machine's mirror
            DAGSTER_HOME_VAR: str(dagster_home(root)),
            RUN_STARTED_VAR: str(started),
        }
    )
    for name, value in (
        (PROVIDERS_VAR, overrides.providers_file),
        (THRESHOLD_VAR, overrides.threshold),
        (OUTPUT_VAR, overrides.output_dir),
        (DATASET_VAR, overrides.dataset),
        (TRUST_VAR, "1" if overrides.trust_datasets else None),
        (ADK_CONFIG_VAR, overrides.adk_config),
        (EXPORT_OTLP_VAR, overrides.export_otlp),
    ):
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = str(value)
    receiver = None
    os.environ.pop(OTLP_SPANS_VAR, None)
    if otlp_port is not None:
        from bat_pipeline.resources.otlp_receiver import RunReceiverError, start_run_receiver

        otlp_spans = root / "runs" / run_id / "otlp-spans.jsonl"
        try:
            receiver = start_run_receiver(otlp_port, otlp_spans)
        except RunReceiverError as exc:
            locks.close()
            raise InputError("--otlp-port", f"{exc}: choose a free port") from None
        os.environ[OTLP_SPANS_VAR] = str(otlp_spans)
        out(f"OTLP receiver for the run: http://127.0.0.1:{otlp_port}/v1/traces, spans to {otlp_spans}")
    total = len(tasks) * config.evaluation.k
    out(
        f"evaluating {agent_dir.name}: {_count(len(keys), 'model')} × {_count(len(tasks), 'task')}"
        f" × k={config.evaluation.k}"
        f" ({'resuming the last run' if resume else f'run {run_id}'})"
    )
    # One scripted model server for every partition, when eval.yaml names one: the
    # agents started ahead need its address, and the partitions' resources use it.
    scripted = None
    ahead: dict[str, Any] = {}
    try:
        if uses_scripted_llm(config) and not os.environ.get(URL_VAR):
            scripted, os.environ[URL_VAR] = start_scripted_llm()
        # The agents start now, while Dagster is imported and the partitions fork; each
        # partition adopts its own (a resumed run keeps its old folders: its agents start there).
        # Steps executed elsewhere start their agents on the worker that runs them.
        if not resume and execution.executor == "in_process":
            agents = [k for k in keys if starts_agent(config.model(k))]  # a BAT agent, or an a2a target
            ahead = head_start(
                with_scripted_llm(config, os.environ[URL_VAR]) if uses_scripted_llm(config) else config,
                agents,
                root,
                run_id,
            )
        return _run_partitions(
            config, agent_dir, keys, root, run_id, resume, started, timings, total, out, overrides, execution
        )
    finally:
        _release(ahead, config, root, overrides)
        if scripted is not None:
            stop_process_group(scripted, STOP_GRACE_S)
            os.environ.pop(URL_VAR, None)
        locks.close()
        os.environ.pop(OTLP_SPANS_VAR, None)
        if receiver is not None:
            stop_process_group(receiver, STOP_GRACE_S)
            summary = receiver.stdout.read().strip() if receiver.stdout else ""
            if summary:
                out(summary)


def head_start(config: EvalConfig, keys: list[str], root: Path, run_id: str) -> dict[str, Any]:
    """Launch every partition's agent in its partition folder, not waiting for any
    (agent_process.HEAD_STARTS); an agent that cannot even be launched is left to its step,
    which says why. Returns them by partition key."""
    from bat_pipeline.resources.agent_process import HEAD_STARTS, AgentLauncher, AgentStartError

    for key in keys:
        try:
            agent = AgentLauncher(*agent_partition(config, key), partition_dir(root, run_id, key)).head_start()
        except AgentStartError:
            continue
        if agent is not None:
            HEAD_STARTS[key] = agent
    return dict(HEAD_STARTS)


def _release(ahead: dict[str, Any], config: EvalConfig, root: Path, overrides: Overrides | None = None) -> None:
    """Reap the agents started ahead. One still running was never adopted (its step did
    not get that far): stop it, redact its files as its step would have, and remove its
    config copy."""
    from bat_pipeline.resources.agent_files import scrub_agent_files
    from bat_pipeline.resources.evaluation import EvaluationResource
    from bat_pipeline.resources.process_group import group_members, stop_process_group

    redactor = None
    for agent in ahead.values():
        unused = bool(group_members(agent.process.pid))
        stop_process_group(agent.process, config.evaluation.agent_shutdown_timeout_s)
        if agent.watchdog is not None:
            agent.watchdog.reap()
        if unused and agent.log_file is not None:
            if agent.tmpdir is not None:
                shutil.rmtree(agent.tmpdir, ignore_errors=True)
            # The project as given (an AgentV file's folder is no agent folder).
            redactor = (
                redactor
                or EvaluationResource(
                    agent_dir=str(config.source if config.agentv is not None else config.agent_dir),
                    storage_root=str(root),
                    providers_file=str(overrides.providers_file) if overrides and overrides.providers_file else None,
                ).redactor()
            )
            scrub_agent_files(agent.log_file.parent, redactor)


def _run_partitions(
    config: EvalConfig,
    agent_dir: Path,
    keys: list[str],
    root: Path,
    run_id: str,
    resume: bool,
    started: float,
    timings: bool,
    total: int,
    out,
    overrides: Overrides,
    execution: ExecutionSettings,
) -> int:
    """Fork the partitions' Dagster runs, show their progress, draw the charts, report."""
    from bat_pipeline.assets.common import RESUME_TAG, RUN_ID_TAG
    from bat_pipeline.definitions import build_definitions
    from bat_pipeline.resources.agent_process import log_tail

    logs = root / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    defs = build_definitions(agent_dir, root, overrides, execution=execution)
    recon = None
    if execution.executor != "in_process":
        from bat_pipeline.reconstructable import reconstructable_evaluate

        recon = reconstructable_evaluate(agent_dir, root, execution, overrides)
    warm_up()
    tags = {RUN_ID_TAG: run_id, **({RESUME_TAG: "true"} if resume else {})}
    running = [
        start_partition(defs, key, tags, logs / f"{safe_key(run_id)}-{safe_key(key)}.log", recon) for key in keys
    ]
    fetched = 0.0
    remote = url_of(root) is not None  # then the records are fetched every PROGRESS_EVERY_S, not every poll
    progress = Progress(out, live=_live_terminal(out), every_s=PROGRESS_EVERY_S)
    try:
        while True:
            alive = [p for p in running if p.poll() is None]
            if not remote or not alive or time.monotonic() - fetched >= PROGRESS_EVERY_S:
                current = _current_folders(root, run_id, keys, resume, config.agent_id)
                fetched = time.monotonic()
            states = [partition_state(p.key, current[p.key], total, p.returncode) for p in running]
            progress.update(states, final=not alive)
            if not alive:
                break
            time.sleep(POLL_S)
    finally:
        progress.close()

    failed = [p for p in running if p.returncode != 0]
    for folder in current.values():  # what the steps stored on an object store, for the report and summary
        if folder is not None:
            pull_tree(folder)
    for p in failed:
        reasons = failure_lines(p.log)
        out(f"\n✗ {p.key} failed (log: {p.log}):\n" + ("\n".join(reasons) if reasons else log_tail(p.log)))
    drawing = time.perf_counter()
    problem = run_charts(defs)
    charts_s = time.perf_counter() - drawing
    charts = None if problem else charts_dir(root, config.agent_id)
    if problem:
        out("charts could not be drawn:\n" + "\n".join(f"  ✗ {line}" for line in problem.splitlines()))
    folders = [(p.key, _partition_folder(root, run_id, p.key, resume, config.agent_id)) for p in running]
    run_timings = record_run_timings(root, folders, charts_s, time.time() - started, out)
    print_summary(root, folders, out)
    stored = stored_episodes(folders)  # read once for both reports
    if config.agentv is None:  # an AgentV run lists its tests that did not pass (print_tests)
        print_failures(folders, out, stored=stored)
    print_problems(folders, out, stored=stored)
    write_csv(config, root, folders, out)
    below = print_tests(folders, out) if config.agentv is not None else 0
    if timings:
        print_timings(run_timings, out)
    out(f"\nresults: {root_text(root)}/runs")
    out(f"{_layout(config)}: {config.resolve(config.evaluation.output_dir)}")
    if charts:
        out(f"charts: {charts}")
    command = Path(sys.executable).parent / PROGRAM
    out(f"UI: {command if command.exists() else PROGRAM} ui {agent_dir}")
    # resources.reports.FORMATS, written with the charts for the agent's latest run: this
    # one, or the run a resume continued.
    runs = [run_id, *(load_ref(f).run_id for _, f in folders if f is not None and has_ref(f))]
    reports = [root / "runs" / run / "report.html" for run in dict.fromkeys(runs)]
    written = report_written(next((r for r in reports if r.is_file()), reports[0]), problem, out)
    return 1 if failed or not written or (below and overrides.threshold is not None) else 0
