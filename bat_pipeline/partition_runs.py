"""The Dagster runs of one `bat-pipeline run`: one run of the `evaluate` job per partition,
each in its own process, and the charts' run at the end.

Dagster and the definitions are imported and built once, in the `bat-pipeline` process;
each partition's process is a fork of it (copy-on-write: no interpreter to start, nothing
to import again), so a partition starts working in milliseconds while keeping what a
process of its own buys: a crash or a stuck agent costs that partition only, its agents
die with it (PR_SET_PDEATHSIG), and killing `bat-pipeline run` takes every partition along.
The charts' run happens in the `bat-pipeline` process itself once the partitions have ended.

fork() is safe here because the parent has one thread when it forks (checked): Dagster's
instance, its SQLite connections and every thread are created in the children.
"""

from __future__ import annotations

import fcntl
import gc
import os
import sys
import threading
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bat_pipeline.locations import DAGSTER_HOME_VAR

STEP_MODULES = (
    "dagster._core.storage.sqlite_storage",  # a Dagster instance's SQLite storages, SQLAlchemy, alembic
    "dagster._core.storage.local_compute_log_manager",
    "bat_pipeline.resources.a2a_conversations",  # the A2A client (the episodes step)
    "bat_pipeline.engine.chart_drawing",  # matplotlib (the metrics step's charts, the charts' run)
    "duckdb",  # the warehouse (the metrics step)
)
"""What the steps need beyond Dagster and the definitions: imported once by the process the
steps' processes fork from (here before the partitions fork; the multiprocess executor's
fork server) rather than by every step's process (about a second of CPU each)."""

FAILURE_MARK = "FAILED: "
"""Starts the lines a partition process prints for what failed (a step, a gate)."""


@dataclass
class PartitionProcess:
    """One partition's process: a fork of `bat-pipeline run`."""

    key: str
    pid: int
    log: Path
    returncode: int | None = None

    def poll(self) -> int | None:
        """The exit code once the process has ended, else None (never blocks)."""
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode


_opened: list[Any] = []
"""The instance warm_up opened, which the partitions forked after it use as they find it."""


def instance() -> Any:
    """The Dagster instance of `$DAGSTER_HOME`, got under an exclusive lock in that folder
    (the one warm_up opened, once it has).

    A fresh home's SQLite storages are created and stamped with alembic on first use; two
    processes doing that at once (the partitions of a first run) leave two version heads
    and a home no later run can open. Taking turns costs nothing once it exists."""
    import dagster as dg

    if _opened:
        return _opened[0]
    home = os.environ.get(DAGSTER_HOME_VAR)
    if not home:
        return dg.DagsterInstance.get()
    Path(home).mkdir(parents=True, exist_ok=True)
    with open(Path(home) / ".instance.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return dg.DagsterInstance.get()


def warm_up() -> None:
    """Before the partitions fork: import STEP_MODULES once for every child, make the HTTP
    clients' TLS context, and open the Dagster instance (a fresh home's databases are
    created and migrated, each storage checks its schema version) for this process and
    every child: its SQLite storages hold no connection between uses (SQLAlchemy's
    NullPool), so each process opens its own, and opening the instance once saves each
    partition a few tenths of a second of CPU. Nothing here starts a thread (start_partition
    checks).

    Last, everything allocated so far (Dagster, the definitions, matplotlib: millions of
    objects) leaves the garbage collector's care (gc.freeze, as the gc module's docs advise
    before a fork): a full collection in a child would otherwise walk all of it, writing
    to each object's header and so copying every page the child shares with this process.
    It saves about a quarter of a partition's CPU, and this process's own collections
    during the charts' run get cheaper too."""
    import importlib

    from bat_pipeline.resources.tls import tls_context

    for name in STEP_MODULES:
        importlib.import_module(name)
    tls_context()
    _opened[:] = [instance()]
    gc.freeze()


def output_to(log: Path | str, line_buffered: bool = True) -> None:
    """In a forked process: stdout and stderr (the file descriptors and sys's streams) into
    `log` (replaced), stdin from /dev/null."""
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdin = open(0, encoding="utf-8", closefd=False)
    sys.stdout = open(1, "w", buffering=1 if line_buffered else -1, encoding="utf-8", errors="replace", closefd=False)
    sys.stderr = open(2, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)


def start_partition(defs: Any, key: str, tags: dict[str, str], log: Path, recon: Any = None) -> PartitionProcess:
    """Fork a process that runs the `evaluate` job for partition `key` with `tags`, its
    output (Dagster's log, the failure lines) going to `log`. `recon`: the job as
    executors.reconstructable_evaluate makes it, for steps executed elsewhere; else the
    steps run in the forked process."""
    from bat_pipeline.resources.agent_process import release_watchdogs
    from bat_pipeline.resources.process_group import die_with_parent

    if threading.active_count() > 1:
        raise RuntimeError(
            "bat-pipeline run forks its partitions and must be single-threaded when it does; "
            f"threads running: {[t.name for t in threading.enumerate()]}"
        )
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        return PartitionProcess(key, pid, log)
    code = 1
    try:
        die_with_parent()
        release_watchdogs()
        output_to(log)
        code = run_partition(defs, key, tags, recon)
    except BaseException:  # noqa: BLE001 - the child reports everything, then exits
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def run_partition(defs: Any, key: str, tags: dict[str, str], recon: Any = None) -> int:
    """One Dagster run of the `evaluate` job for `key` (its steps where `recon`'s executor
    puts them, else in this process); prints a FAILURE_MARK line for each failed step and
    gate, and for a run that failed outside its steps (a lost worker); 0 when it succeeded."""
    import dagster as dg

    from bat_pipeline.automation import EVALUATE_JOB

    if recon is None:
        job = defs.resolve_job_def(EVALUATE_JOB)
        result = job.execute_in_process(partition_key=key, instance=instance(), tags=tags, raise_on_error=False)
    else:
        with dg.execute_job(recon, instance(), tags={**tags, "dagster/partition": key}) as result:
            return _report(result)
    return _report(result)


def _report(result: Any) -> int:
    """The FAILURE_MARK lines of a finished run; 0 when it succeeded."""
    for event in result.all_events:
        if event.is_step_failure:
            lines = user_message(event.step_failure_data.error).splitlines() or [""]
            print(f"{FAILURE_MARK}step {event.step_key} failed: {lines[0]}")
            for line in lines[1:]:
                print(f"{FAILURE_MARK}    {line}")
        if event.event_type_value == "ASSET_CHECK_EVALUATION":
            data = event.event_specific_data  # an AssetCheckEvaluation
            if not data.passed:
                message = data.metadata.get("message")
                print(f"{FAILURE_MARK}gate {data.check_name} failed: {getattr(message, 'value', message) or ''}")
        if event.event_type_value == "PIPELINE_FAILURE" and not any(e.is_step_failure for e in result.all_events):
            error = event.event_specific_data.error
            print(f"{FAILURE_MARK}run failed: {user_message(error) if error else event.message}")
    return 0 if result.success else 1


def run_charts(defs: Any) -> str | None:
    """The charts' run, in this process; None when it succeeded, else why not."""
    from bat_pipeline.automation import CHARTS_JOB

    # Nothing of Dagster's own console log in the user's terminal (a failed step would print
    # its whole traceback there): what failed is returned, one line a step; the Dagster UI
    # and the instance's event log keep the tracebacks.
    quiet = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
    result = defs.resolve_job_def(CHARTS_JOB).execute_in_process(
        instance=instance(), raise_on_error=False, run_config=quiet
    )
    if result.success:
        return None
    failures = [
        f"step {e.step_key} failed: {(user_message(e.step_failure_data.error).splitlines() or [''])[0]}"
        for e in result.all_events
        if e.is_step_failure
    ]
    return "\n".join(failures) or "the charts' run failed"


def user_message(error: Any) -> str:
    """What went wrong in the user's terms: the exception raised in the step (not Dagster's
    wrapper around it), without its class's module path."""
    while error.cause is not None and error.cls_name == "DagsterExecutionStepExecutionError":
        error = error.cause
    message = str(error.message).strip()
    head, sep, rest = message.partition(f"{error.cls_name}: ")
    return rest if sep and " " not in head else message


def failure_lines(log: Path) -> list[str]:
    """What a partition process said failed, one line each (without the mark)."""
    if not log.exists():
        return []
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    return [f"  {line[len(FAILURE_MARK) :]}" for line in lines if line.startswith(FAILURE_MARK)]
