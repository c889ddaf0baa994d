"""`make bench`: every bench in turn; each prints its figures and asserts nothing.

    .venv/bin/python -m bat_pipeline_tests.bench
"""

from __future__ import annotations

import time

from bat_pipeline_tests.bench import end_to_end, trajectories, warehouse

BENCHES = (("trajectories from spans", trajectories.run), ("warehouse at scale", warehouse.run),
           ("end to end: episodes concurrency", end_to_end.run))


def main() -> None:
    for title, bench in BENCHES:
        print(f"\n== {title} ==", flush=True)
        start = time.perf_counter()
        bench()
        print(f"({title}: {time.perf_counter() - start:.0f}s)", flush=True)


if __name__ == "__main__":
    main()
