"""`provider: cli` with `batch_requests: true` (4.x `provider_batching`): the command once
per partition and attempt, for every test at once, writing JSONL keyed by test id to
{OUTPUT_FILE} (SPEC §9). The file is kept in the partition folder.

A failed run makes every test of that attempt an error episode with what the command
said; a test with no line, or whose id is on two lines, is an error episode; a line whose
id is no test is a warning.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bat_pipeline.engine.contracts.agentv import AgentvSuite, AgentvTarget
from bat_pipeline.engine.contracts.episode import Episode
from bat_pipeline.engine.conversation import Attempt
from bat_pipeline.engine.target_records import answered_episode, error_episode, read_batch
from bat_pipeline.resources.targets.cli import input_files
from bat_pipeline.resources.targets.command_runs import failed_run, run_target


def run_batch(
    target: AgentvTarget,
    suite: AgentvSuite,
    attempts: list[Attempt],
    folder: Path,
    *,
    on_episode: Callable[[Episode], None],
    log: Callable[[str], Any],
) -> None:
    """One run per attempt index among `attempts`; their episodes handed to `on_episode`."""
    by_index: dict[int, list[Attempt]] = {}
    for attempt in attempts:
        by_index.setdefault(attempt.attempt_index, []).append(attempt)
    for index, group in sorted(by_index.items()):
        started = datetime.now(UTC).isoformat()
        output_file = folder / f"batch_output_try{index}.jsonl"
        output_file.unlink(missing_ok=True)
        result = run_target(
            target,
            {
                "EVAL_FILE": str(suite.source),
                "OUTPUT_FILE": str(output_file),
                "ATTEMPT": str(index),
                "PROMPT": "",
                "PROMPT_FILE": "",
                "EVAL_ID": "",
            },
            # as AgentV 4.42.4: the input files of every test of the batch
            [f for attempt in group if attempt.task.agentv for f in input_files(attempt.task.agentv)],
        )
        if not result.ok:
            for attempt in group:
                on_episode(failed_run(attempt.task, target, index, result, started_at=started, what="batch target"))
            continue
        text = output_file.read_text(encoding="utf-8", errors="replace") if output_file.is_file() else result.stdout
        where = output_file.name if output_file.is_file() else "its stdout"
        # Every test of the file is known (a resumed run asks for some only): no warning for the others.
        batch = read_batch(text, [t.id for t in suite.tests], suite.format, file=where)
        for warning in batch.warnings:
            log(f"warning: batch target '{target.name}': {warning}")
        share = result.wall_ms / max(1, len(group))
        for attempt in group:
            test_id = attempt.task.id
            if test_id in batch.answers:
                on_episode(
                    answered_episode(
                        attempt.task, target.name, index, batch.answers[test_id], wall_ms=share, started_at=started
                    )
                )
            else:
                on_episode(
                    error_episode(
                        attempt.task, target.name, index, batch.errors[test_id], started_at=started, wall_ms=share
                    )
                )
