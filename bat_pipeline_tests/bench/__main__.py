"""`make bench`: every bench in turn, or those named; each prints its figures and asserts
nothing.

    .venv/bin/python -m bat_pipeline_tests.bench [trajectories] [warehouse] [end_to_end]
"""

from __future__ import annotations

import sys
import time

from bat_pipeline_tests.bench import end_to_end, trajectories, warehouse

BENCHES = {"trajectories": ("trajectories from spans", trajectories.run),
           "warehouse": ("warehouse at scale", warehouse.run),
           "end_to_end": ("end to end: episodes concurrency", end_to_end.run)}


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
