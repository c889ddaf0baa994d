"""One partition of an AgentV target run here: its healthcheck, then its tests (SPEC §13):
a command per test (`cli.py`), a batch command (`batch_cli.py`) or an LLM (`llm.py`). An
a2a target's partition is an agent partition (resources.episodes).

A failing healthcheck stores every planned attempt as an error episode carrying the
healthcheck's output, then fails the partition (TargetHealthError): nothing else runs.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bat_pipeline.engine.contracts.agentv import AgentvSuite, AgentvTarget, Healthcheck
from bat_pipeline.engine.contracts.episode import Episode
from bat_pipeline.engine.conversation import Attempt
from bat_pipeline.engine.environment import dotenv_hierarchy
from bat_pipeline.engine.errors import InputError
from bat_pipeline.engine.target_inputs import llm_key, target_keys_looked_in
from bat_pipeline.engine.target_records import error_episode
from bat_pipeline.resources.commands import run_command
from bat_pipeline.resources.targets.batch_cli import run_batch
from bat_pipeline.resources.targets.cli import run_per_test
from bat_pipeline.resources.targets.llm import run_llm_target
from bat_pipeline.resources.targets.placeholders import target_environment

DEFAULT_WORKERS = 4


class TargetHealthError(RuntimeError):
    """The target's healthcheck failed: the partition fails with its output."""


def collect_target_episodes(
    target: AgentvTarget,
    suite: AgentvSuite,
    attempts: list[Attempt],
    folder: Path,
    *,
    concurrency: int,
    on_episode: Callable[[Episode], None],
    log: Callable[[str], Any],
) -> None:
    """Healthcheck, then every attempt (batch or per test); each episode to `on_episode`."""
    if target.healthcheck is not None and attempts:
        problem = healthcheck_problem(target.healthcheck, target_environment(target))
        if problem is not None:
            message = f"healthcheck of target '{target.name}' failed: {problem}"
            started = datetime.now(UTC).isoformat()
            for attempt in attempts:
                on_episode(
                    error_episode(
                        attempt.task, target.name, attempt.attempt_index, message, started_at=started, output=problem
                    )
                )
            raise TargetHealthError(message)
        log(f"healthcheck of target '{target.name}' passed")
    workers = target.workers or suite.workers or concurrency or DEFAULT_WORKERS
    if target.llm is not None:
        here = suite.source.parent
        environ = dotenv_hierarchy(here)
        key = llm_key(target, environ, looked_in=target_keys_looked_in(here))
        try:
            run_llm_target(target, attempts, key=key, workers=workers, on_episode=on_episode, environ=environ)
        except ValueError as exc:  # an unusable base_url, before any request
            raise InputError(target.source, str(exc), field="base_url") from None
    elif target.batch:
        run_batch(target, suite, attempts, folder, on_episode=on_episode, log=log)
    else:
        run_per_test(target, attempts, workers=workers, on_episode=on_episode)


def healthcheck_problem(check: Healthcheck, env: dict[str, str]) -> str | None:
    """None when healthy; else how it failed, with its output."""
    if check.url:
        try:
            with urllib.request.urlopen(check.url, timeout=check.timeout_s) as response:
                status = response.status
        except (urllib.error.URLError, OSError) as exc:
            return f"GET {check.url}: {exc}"
        return None if 200 <= status < 300 else f"GET {check.url}: status {status}"
    assert check.command is not None
    result = run_command(check.command, cwd=check.cwd, env=env, timeout_s=check.timeout_s)
    return None if result.ok else result.describe()
