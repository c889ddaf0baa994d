"""Bench: where the time of a run goes, like `bat eval` against the default (issue 14).

On a copy of the bundled example (12 tasks, k=2, three models, judge on), with the
scripted model and judge answering after 0 ms and after 300 ms, it runs

  (a) one model after another, one episode at a time: `bat-pipeline run --model KEY` per
      model with `evaluation.concurrency: 1`, as `bat eval` goes through a sweep;
  (b) the default: one `bat-pipeline run`, every model at once, 4 episodes in flight;

and prints each one's phase table (seconds per phase, from the partitions' timings.json
and the run's), the wall time, the ratio (a)/(b), and the peak memory of the whole process
tree (the sum of the resident sets of `bat-pipeline` and every process under it, sampled
every 50 ms). It asserts nothing.

    .venv/bin/python -m bat_pipeline_tests.bench phases
"""

from __future__ import annotations

import builtins
import json
import os
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from bat_pipeline.engine.contracts.timings import PHASES
from bat_pipeline_tests.support.example_agent import copy_example_agent, pipeline_env
from bat_pipeline_tests.support.paths import VENV_BIN
from bat_pipeline_tests.support.scripted import scripted_server

MODELS = ("openai-competent", "openai-sloppy", "anthropic-competent")
K = 2
PAGE = os.sysconf("SC_PAGE_SIZE")


class TreeMemory(threading.Thread):
    """Samples the summed resident memory of a process and all its descendants."""

    def __init__(self, pid: int, every_s: float = 0.05):
        super().__init__(daemon=True)
        self.pid, self.every_s, self.peak, self.done = pid, every_s, 0, threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            self.peak = max(self.peak, _tree_rss(self.pid))
            self.done.wait(self.every_s)


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        tree.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    return tree


def _tree_rss(root: int) -> int:
    tree, total, todo = _children(), 0, [root]
    while todo:
        pid = todo.pop()
        try:
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
        except (OSError, IndexError, ValueError):
            pass
        todo.extend(tree.get(pid, []))
    return total


def _run(agent: Path, env: dict[str, str], *args: str) -> tuple[float, int, str, float]:
    """One `bat-pipeline run`: wall seconds, peak tree memory in bytes, its output, and the
    Unix time it exited."""
    start = time.perf_counter()
    process = subprocess.Popen(
        [str(VENV_BIN / "bat-pipeline"), "run", str(agent), "--timings", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    memory = TreeMemory(process.pid)
    memory.start()
    out, _ = process.communicate(timeout=3600)
    memory.done.set()
    memory.join()
    if process.returncode not in (0, 1):
        raise RuntimeError(f"bat-pipeline run exited {process.returncode}:\n{out[-3000:]}")
    return time.perf_counter() - start, memory.peak, out, time.time()


def _phases(root: Path) -> dict[str, float]:
    """Seconds per phase summed over every partition of every run under `root` (the charts
    and startup as each run recorded them)."""
    totals = dict.fromkeys(PHASES, 0.0)
    for path in root.glob("runs/*/timings.json"):
        run = json.loads(path.read_text())
        for phases in run.get("partitions", {}).values():
            for phase, seconds in phases.items():
                totals[phase] = totals.get(phase, 0.0) + seconds
        totals["charts"] += run.get("charts", 0.0)
    return totals


def _edges(root: Path, started: float, exited: float) -> dict[str, float]:
    """The issue's two fixed costs of one run, from its episodes and timings: `run` start →
    first conversation, and last episode → exit less the judge's time."""
    starts, ends = [], []
    for path in root.glob("runs/*/*/episodes/*.json"):
        episode = json.loads(path.read_text())
        start = datetime.fromisoformat(episode["aux"]["started_at"]).timestamp()
        starts.append(start)
        ends.append(start + (episode["trace"]["wall_ms"] or 0) / 1000)
    (timings,) = [json.loads(p.read_text()) for p in root.glob("runs/*/timings.json")]
    partitions = list(timings.get("partitions", {}).values())
    judge = max(p.get("judge", 0.0) for p in partitions)
    return {"to_first_request": min(starts) - started, "after_last_episode": exited - max(ends) - judge}


def _agent_ready_s(agent: Path, env: dict[str, str], llm_url: str, tries: int = 3) -> float:
    """How long the agent alone takes from launch to answering its agent card (median)."""
    from bat_pipeline.engine.config import load_eval_config
    from bat_pipeline.resources.agent_process import AgentLauncher
    from bat_pipeline.resources.scripted_process import with_scripted_llm

    config = with_scripted_llm(load_eval_config(agent), llm_url)
    times = []
    for n in range(tries):
        launcher = AgentLauncher(config, config.models[0], agent.parent / f"ready-{n}", environ=env)
        start = time.perf_counter()
        with launcher.running():
            times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def _one(tmp: Path, llm_url: str, sequential: bool) -> dict[str, object]:
    name = "a_one_after_another" if sequential else "b_default"
    agent = copy_example_agent(
        tmp / name / "weather_agent",
        tasks=None,
        k=K,
        models=MODELS,
        evaluation={"concurrency": 1} if sequential else {},
    )
    root = tmp / name / "home"
    env = pipeline_env(agent, root, llm_url)
    if sequential:
        results = [_run(agent, env, "--model", key) for key in MODELS]
        wall, peak = sum(r[0] for r in results), max(r[1] for r in results)
        return {"wall": wall, "peak": peak, "phases": _phases(root)}
    started = time.time()
    wall, peak, _, exited = _run(agent, env)
    return {
        "wall": wall,
        "peak": peak,
        "phases": _phases(root),
        **_edges(root, started, exited),
        "agent_ready": _agent_ready_s(agent, env, llm_url),
    }


def _table(rows: dict[str, dict[str, object]], print: Callable[..., None]) -> None:
    names = list(rows)
    print(f"{'phase':15}" + "".join(f"{n:>22}" for n in names))
    for phase in PHASES:
        print(f"{phase:15}" + "".join(f"{rows[n]['phases'][phase]:21.1f}s" for n in names))  # type: ignore[index]
    print(f"{'wall':15}" + "".join(f"{rows[n]['wall']:21.1f}s" for n in names))
    print(f"{'peak memory':15}" + "".join(f"{rows[n]['peak'] / 2**20:20.0f}MB" for n in names))


def run(print: Callable[..., None] = builtins.print) -> dict[str, float]:
    figures: dict[str, float] = {}
    with scripted_server() as server, tempfile.TemporaryDirectory(prefix="bench-phases-") as tmp:
        for latency in (0, 300):
            server.set(reset=True, latency_ms=latency)
            rows = {
                "(a) one by one": _one(Path(tmp) / f"{latency}ms", server.url, sequential=True),
                "(b) default": _one(Path(tmp) / f"{latency}ms", server.url, sequential=False),
            }
            ratio = rows["(a) one by one"]["wall"] / rows["(b) default"]["wall"]  # type: ignore[operator]
            print(f"\n-- scripted model and judge at {latency} ms; phases summed over partitions --")
            _table(rows, print)
            target = "≥ 5" if latency else "≥ 1.3"
            print(f"(a)/(b) = {ratio:.2f} (target {target})")
            default = rows["(b) default"]
            print(
                f"(b) run start → first conversation: {default['to_first_request']:.1f}s; the agent "
                f"alone is ready in {default['agent_ready']:.1f}s (target: at most 1.5s more)"
            )
            print(f"(b) last episode → exit, less the judge: {default['after_last_episode']:.1f}s (target ≤ 2s)")
            figures[f"ratio_{latency}ms"] = ratio
            figures[f"to_first_request_{latency}ms"] = default["to_first_request"]  # type: ignore[assignment]
            figures[f"agent_ready_{latency}ms"] = default["agent_ready"]  # type: ignore[assignment]
            figures[f"after_last_episode_{latency}ms"] = default["after_last_episode"]  # type: ignore[assignment]
    return figures


if __name__ == "__main__":
    run()
