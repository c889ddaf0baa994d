"""Waiting for the writers of span files to finish before the files are read."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from bat_pipeline.engine.spans.index import span_files_in


def wait_until_quiet(
    paths: Iterable[str | Path],
    *,
    settle_s: float,
    wait_s: float,
    since: float = 0.0,
    clock: Callable[[], float] = time.time,
    sleep: Callable[[float], None] = time.sleep,
) -> tuple[float, bool]:
    """Wait until no span file changed for `settle_s`, at most `wait_s`: (seconds waited,
    whether the files were quiet).

    A writer may still be flushing (a called agent, an agent that keeps running at
    `agent.url`, an exporter that batches). Files (and the `*.jsonl` of folders) are
    polled for size and modification time; the quiet time counts from their last change,
    or from `since` (unix time the writer last had spans to write, e.g. the end of the
    conversations) when that is later: an exporter may hold spans without touching the
    file. Files last changed, and `since`, more than `settle_s` ago cost no wait at all.
    A missing file does not hold the wait: a called agent may never write one."""
    watched = [Path(p) for p in paths]
    start = clock()

    def look() -> tuple[dict[Path, tuple[int, int]], float]:
        seen: dict[Path, tuple[int, int]] = {}
        newest = 0.0
        for path in watched:
            files = span_files_in(path) if path.is_dir() else [path]
            for file in files:
                try:
                    stat = os.stat(file)
                except OSError:
                    continue
                seen[file] = (stat.st_size, stat.st_mtime_ns)
                newest = max(newest, stat.st_mtime_ns / 1e9)
        return seen, newest

    state, newest = look()
    quiet_since = max(newest, since)
    while True:
        now = clock()
        if now - quiet_since >= settle_s:
            return now - start, True
        if now - start >= wait_s:
            return now - start, False
        sleep(min(settle_s / 4 or 0.05, 0.1, max(wait_s - (now - start), 0.0)))
        current, newest = look()
        if current != state:
            state, quiet_since = current, max(clock(), newest)
