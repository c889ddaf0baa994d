"""Bench: the demo flow (`bat-pipeline run`) on a copy of the example agent with the full
dataset (12 tasks, k=2), one model, every model and judge request answered after 300 ms,
at `concurrency: 1` and at the default (4). Prints the wall time of the conversations
(first episode started to last ended, from the episodes), of the `agent_episodes` step
(agent start included, from partition.json) and of the whole run, and the ratios; asserts
nothing.

    .venv/bin/python -m bat_pipeline_tests.bench.end_to_end
"""

from __future__ import annotations

import builtins
import json
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Callable

from bat_pipeline_tests.support.example_agent import copy_example_agent, pipeline_env
from bat_pipeline_tests.support.example_agent import run as run_process
from bat_pipeline_tests.support.paths import VENV_BIN
from bat_pipeline_tests.support.scripted import scripted_server

MODEL = "openai-competent"
LATENCY_MS = 300
K = 2


def _one(tmp: Path, llm_url: str, concurrency: int | None) -> dict[str, float]:
    name = f"concurrency_{concurrency or 'default'}"
    agent = copy_example_agent(tmp / name / "weather_agent", tasks=None, k=K, models=(MODEL,),
                       evaluation={} if concurrency is None else {"concurrency": concurrency})
    root = tmp / name / "home"
    env = pipeline_env(agent, root, llm_url)
    start = time.perf_counter()
    result = run_process([str(VENV_BIN / "bat-pipeline"), "run", str(agent)], env, timeout_s=1800)
    wall = time.perf_counter() - start
    if result.returncode != 0:
        raise RuntimeError(f"bat-pipeline run failed ({result.returncode}):\n{result.stdout[-3000:]}")
    (partition,) = root.glob(f"runs/*/{MODEL}")
    ref = json.loads((partition / "partition.json").read_text())
    step = (datetime.fromisoformat(ref["finished_at"]) - datetime.fromisoformat(ref["started_at"])).total_seconds()
    episodes = [json.loads(p.read_text()) for p in (partition / "episodes").glob("*.json")]
    starts = [datetime.fromisoformat(e["aux"]["started_at"]).timestamp() for e in episodes]
    ends = [s + e["trace"]["wall_ms"] / 1000 for s, e in zip(starts, episodes)]
    return {"run_s": wall, "episodes_step_s": step, "episodes": len(episodes),
            "conversations_phase_s": max(ends) - min(starts),
            "conversation_s": sum(e["trace"]["wall_ms"] for e in episodes) / 1000,
            "passed": sum(1 for e in episodes if e["verdict"] and e["verdict"]["passed"])}


def run(print: Callable[..., None] = builtins.print) -> dict[str, float]:
    with scripted_server() as server, tempfile.TemporaryDirectory(prefix="bat-bench-e2e-") as tmp:
        server.set(latency_ms=LATENCY_MS)
        serial = _one(Path(tmp), server.url, 1)
        default = _one(Path(tmp), server.url, None)
    figures = {
        "serial_episodes_step_s": serial["episodes_step_s"], "serial_run_s": serial["run_s"],
        "default_episodes_step_s": default["episodes_step_s"], "default_run_s": default["run_s"],
        "episodes_step_ratio": serial["episodes_step_s"] / default["episodes_step_s"],
        "conversations_ratio": serial["conversations_phase_s"] / default["conversations_phase_s"],
        "run_ratio": serial["run_s"] / default["run_s"],
    }
    print(f"{serial['episodes']} episodes of {MODEL} (12 tasks, k={K}), every LLM request +{LATENCY_MS} ms")
    for label, f in (("concurrency 1:      ", serial), ("concurrency 4 (default):", default)):
        print(f"  {label:24} conversations {f['conversations_phase_s']:6.1f}s   "
              f"agent_episodes {f['episodes_step_s']:6.1f}s   whole run {f['run_s']:6.1f}s   "
              f"(sum of conversation times {f['conversation_s']:6.1f}s, {f['passed']} passed)")
    print(f"ratio 1 / default: conversations (first start to last end) {figures['conversations_ratio']:.2f} "
          f"(target: 4), agent_episodes step incl. agent start {figures['episodes_step_ratio']:.2f}, "
          f"whole run {figures['run_ratio']:.2f}")
    return figures


if __name__ == "__main__":
    run()
