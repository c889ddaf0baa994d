"""Bench: 10,000 episodes through spans → verdicts → metrics, the engine's stages as the
steps call them, with the time of each and the peak memory (issue 14).

Generates (deterministically, in a temp dir) the span files of 10,000 conversations of one
or two turns shaped like bat-adk's (the trajectories bench's generator: LangGraph chain
spans carrying the message history, model calls, tools, a called agent), a task per
conversation with a tool-call, an output and a no-errors expectation, and an episode per
conversation. Then, in a fresh interpreter so that its peak resident memory is the
stages' own: `rebuild_trajectories` (spans read once), `check_partition` (the verdicts)
and `measure` (metrics.json and summary.json). Prints the figures; asserts nothing.

    .venv/bin/python -m bat_pipeline_tests.bench scale
"""

from __future__ import annotations

import builtins
import json
import pickle
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from bat_pipeline_tests.bench.trajectories import generate

EPISODES = 10_000
TURNS = (1, 2)


def _workload(folder: Path) -> tuple[list, list, list[Path], int]:
    from bat_pipeline.engine.contracts import Episode, Expected, Task, ToolCallExpectation

    files, conversations, spans = generate(folder, EPISODES, TURNS)
    tasks, episodes = [], []
    for conv, turns in conversations.items():
        task_id = conv.removesuffix("__try0")
        tasks.append(
            Task(
                id=task_id,
                turns=turns,
                expected=Expected(
                    output_must_contain=["answer"], tool_calls=[ToolCallExpectation(name="get_weather")], no_errors=True
                ),
            )
        )
        episodes.append(
            Episode(
                model_name="openai:bench",
                task_id=task_id,
                final_status="completed",
                final_output=f"the answer to {task_id}",
                aux={"attempt_index": 0},
            )
        )
    return tasks, episodes, files, spans


def child(folder: Path) -> None:
    """In the fresh interpreter: the three stages, timed; prints JSON figures."""
    from bat_pipeline.engine.metrics import measure
    from bat_pipeline.engine.trajectories import rebuild_trajectories
    from bat_pipeline.engine.verdicts import check_partition

    tasks, episodes, files = pickle.loads((folder / "workload.pickle").read_bytes())
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    figures: dict[str, float] = {}
    start = time.perf_counter()
    rebuilt = rebuild_trajectories(episodes, tasks, files, base=folder, settle_s=0, wait_s=0, since=0)
    figures["spans_s"] = time.perf_counter() - start
    lap = time.perf_counter()
    checked = check_partition(rebuilt.episodes, tasks)
    figures["verdicts_s"] = time.perf_counter() - lap
    lap = time.perf_counter()
    measured = measure(checked, tasks, k=1, run_name="bench", model_name="openai:bench", started=datetime.now(UTC))
    json.dumps(measured.files()["metrics.json"].model_dump(mode="json"))
    figures["metrics_s"] = time.perf_counter() - lap
    figures["total_s"] = time.perf_counter() - start
    figures["passed"] = sum(1 for e in checked if e.verdict and e.verdict.passed)
    figures["found"] = sum(1 for e in checked if e.trace.trajectory.found)
    # ru_maxrss is in kilobytes on Linux.
    figures["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    figures["workload_mb"] = baseline / 1024
    print(json.dumps(figures))


def run(print: Callable[..., None] = builtins.print) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        folder = Path(tmp)
        start = time.perf_counter()
        tasks, episodes, files, spans = _workload(folder)
        size = sum(p.stat().st_size for f in files for p in ([f] if f.is_file() else f.glob("*.jsonl")))
        (folder / "workload.pickle").write_bytes(pickle.dumps((tasks, episodes, files)))
        print(
            f"generated {EPISODES:,} episodes, {spans:,} spans ({size / 2**20:.0f} MB) "
            f"in {time.perf_counter() - start:.0f}s"
        )
        done = subprocess.run(
            [sys.executable, "-m", __spec__.name, "--child", str(folder)], capture_output=True, text=True, check=True
        )
        figures = json.loads(done.stdout.strip().splitlines()[-1])
    print(
        f"spans → trajectories {figures['spans_s']:6.1f}s   verdicts {figures['verdicts_s']:6.1f}s   "
        f"metrics {figures['metrics_s']:6.1f}s   total {figures['total_s']:6.1f}s"
    )
    print(
        f"peak memory {figures['peak_mb']:.0f} MB (the interpreter with the episodes loaded: "
        f"{figures['workload_mb']:.0f} MB; target ≤ 600 MB); {figures['found']:,} trajectories found, "
        f"{figures['passed']:,} episodes passed"
    )
    return figures


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(Path(sys.argv[2]))
    else:
        run()
