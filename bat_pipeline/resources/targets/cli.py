"""`provider: cli`: the command once per test and attempt, a few at a time (SPEC §9, §12).

The answer is what the command wrote to {OUTPUT_FILE}, else its stdout; a JSON answer with
`text` / `output` is read like a batch record. A non-zero exit, a timeout or a command that
does not start makes that attempt an error episode with what the command said.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

from bat_pipeline.engine.contracts.agentv import AgentvCase, AgentvTarget
from bat_pipeline.engine.contracts.episode import Episode
from bat_pipeline.engine.conversation import Attempt
from bat_pipeline.engine.target_records import answer_from_output, answered_episode
from bat_pipeline.resources.targets.command_runs import failed_run, run_target


def run_per_test(
    target: AgentvTarget, attempts: list[Attempt], *, workers: int, on_episode: Callable[[Episode], None]
) -> None:
    """Every attempt, at most `workers` at once; each episode handed to `on_episode` as it
    ends (from the calling thread's pool workers, one at a time per attempt)."""
    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="cli-target") as pool:
        for episode in pool.map(lambda a: one_attempt(target, a), attempts):
            on_episode(episode)


def input_files(case: AgentvCase) -> list[str]:
    """The test's input files as absolute paths (a 4.x test's are resolved when it is
    read, engine.datasets.agentv_content; the seed's are relative to the eval file)."""
    return [str((case.eval_file.parent / f).resolve()) for f in case.input_files]


def one_attempt(target: AgentvTarget, attempt: Attempt) -> Episode:
    task, index = attempt.task, attempt.attempt_index
    case = task.agentv
    assert case is not None, "a cli target runs AgentV tests"
    started = datetime.now(UTC).isoformat()
    with tempfile.TemporaryDirectory(prefix="bat-cli-") as scratch:
        prompt_file = Path(scratch) / "prompt.txt"
        prompt_file.write_text(case.prompt, encoding="utf-8")
        output_file = Path(scratch) / "output.txt"
        result = run_target(
            target,
            {
                "PROMPT": case.prompt,
                "PROMPT_FILE": str(prompt_file),
                "OUTPUT_FILE": str(output_file),
                "EVAL_ID": case.id,
                "ATTEMPT": str(index),
                "EVAL_FILE": str(case.eval_file),
            },
            input_files(case),
        )
        if not result.ok:
            return failed_run(task, target, index, result, started_at=started)
        raw = output_file.read_text(encoding="utf-8", errors="replace") if output_file.is_file() else result.stdout
    answer = answer_from_output(raw, case.format)
    return answered_episode(task, target.name, index, answer, wall_ms=result.wall_ms, started_at=started)
