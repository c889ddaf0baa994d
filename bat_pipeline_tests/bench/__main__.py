"""`make bench`: every bench in turn, or those named; each prints its figures and asserts
nothing. docs/performance.md records one run, with the machine it ran on.

    .venv/bin/python -m bat_pipeline_tests.bench [phases] [scale] [trajectories] [warehouse]
"""

from __future__ import annotations

import sys
import time

from bat_pipeline_tests.bench import phases, scale, trajectories, warehouse

BENCHES = {
    "phases": ("a run's phases: one model after another against the default", phases.run),
    "scale": ("10,000 episodes through spans, verdicts and metrics", scale.run),
    "trajectories": ("100k spans: trajectories against json parsing", trajectories.run),
    "warehouse": ("warehouse queries at 1M episode rows", warehouse.run),
}


def main(names: list[str]) -> None:
    unknown = [name for name in names if name not in BENCHES]
    if unknown:
        sys.exit(f"no bench named {', '.join(unknown)}; there are {', '.join(BENCHES)}")
    for name in names or list(BENCHES):
        title, bench = BENCHES[name]
        print(f"\n== {title} ==", flush=True)
        start = time.perf_counter()
        bench()
        print(f"({title}: {time.perf_counter() - start:.0f}s)", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
