"""The progress of `bat-pipeline run` (issue 36): per model the episodes held, the step it
is in and, once done, what passed, failed and errored; elapsed time and an estimate; plain
lines when not on a terminal, printed only when a figure changed."""

from __future__ import annotations

import json
import re

from bat_pipeline.progress import PartitionState, Progress, clock, estimate, partition_state, plain_line
from bat_pipeline_tests.resources.test_warehouse import ref


def folder_with(tmp_path, episodes: int, *files: str, summary: dict | None = None):
    r = ref(tmp_path, "r1", "m").model_copy(update={"episode_files": [f"t{i}__try0.json" for i in range(episodes)]})
    r.dir.mkdir(parents=True)
    (r.dir / "partition.json").write_text(r.model_dump_json(), encoding="utf-8")
    for name in files:
        (r.dir / name).write_text("{}", encoding="utf-8")
    if summary is not None:
        (r.dir / "metrics.json").write_text(json.dumps({"summary": summary}), encoding="utf-8")
    return r.dir


def test_the_state_of_a_partition_from_its_folder(tmp_path):
    assert partition_state("m", None, 4, None) == PartitionState("m", 0, 4, "conversations")
    folder = folder_with(tmp_path / "a", 3)
    assert partition_state("m", folder, 4, None).held == 3
    assert partition_state("m", folder_with(tmp_path / "b", 4, "trajectories.json"), 4, None).step == "verdicts"
    judging = folder_with(tmp_path / "c", 4, "trajectories.json", "verdicts.json")
    assert partition_state("m", judging, 4, None).step == "judging"
    assert (
        partition_state("m", folder_with(tmp_path / "e", 4, "verdicts.json", "judge.json"), 4, None).step == "metrics"
    )
    assert partition_state("m", folder_with(tmp_path / "f", 4), 4, None).step == "trajectories"  # all held
    done = folder_with(tmp_path / "d", 4, "verdicts.json", summary={"passed": 3, "failed": 1, "error_episodes": 1})
    state = partition_state("m", done, 4, 0)
    assert (state.step, state.passed, state.failed, state.errors) == ("done", 3, 1, 1)
    assert partition_state("m", done, 4, 1).step == "FAILED"


def test_the_plain_line_and_the_estimate():
    states = [
        PartitionState("a", 4, 4, "done", passed=4, failed=0, errors=0),
        PartitionState("b", 2, 4, "conversations"),
        PartitionState("c", 4, 4, "judging"),
        PartitionState("d", 1, 4, "FAILED"),
    ]
    # 11 held in 22 s: the 2 left of b (a FAILED partition holds no more) in ~4 s.
    assert estimate(states, 22.0) == 4.0
    assert plain_line(states, 22.0) == (
        "  a 4/4 done: 4 passed, 0 failed · b 2/4 · c 4/4 judging · d 1/4 FAILED"
        " · 0:22 elapsed, ~0:04 to the last conversation"
    )
    errored = PartitionState("e", 4, 4, "done", passed=2, failed=2, errors=2)
    assert plain_line([errored], 3725.0) == "  e 4/4 done: 2 passed, 2 failed, 2 errors · 1:02:05 elapsed"
    assert clock(59.6) == "1:00" and estimate([PartitionState("x", 0, 4, "conversations")], 5.0) is None


def test_plain_progress_prints_only_news_at_most_every_few_seconds():
    lines: list[str] = []
    progress = Progress(lines.append, live=False, every_s=3600)
    running = [PartitionState("a", 1, 2, "conversations")]
    progress.update(running)  # the first figures are news
    progress.update(running)  # the same figures, later: not news
    progress.update([PartitionState("a", 2, 2, "conversations")])  # news, but within every_s: held back
    progress.update([PartitionState("a", 2, 2, "done", passed=2, failed=0)], final=True)  # the end: always shown
    progress.close()
    assert [line.rsplit(" · ", 1)[0] for line in lines] == ["  a 1/2", "  a 2/2 done: 2 passed, 0 failed"]


def test_on_a_terminal_the_table_is_redrawn_in_place():
    import os
    import pty

    master, slave = pty.openpty()
    with os.fdopen(slave, "w", encoding="utf-8") as terminal:
        progress = Progress(lambda line: None, live=True, terminal=terminal)
        progress.update([PartitionState("openai-competent", 1, 2, "conversations")])
        progress.update([PartitionState("openai-competent", 2, 2, "done", passed=2, failed=0)], final=True)
        progress.close()
    shown = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the terminal's other end is closed: all was read
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    text = shown.decode("utf-8", "replace")
    # rich moves the cursor back up over the table to redraw it (ESC [ n A).
    assert re.search(r"\x1b\[\d*A", text), text
    assert "openai-competent" in text and "2 passed, 0 failed" in text and "elapsed" in text
