"""engine.spans: reading span files once, tolerating what a live agent leaves behind."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from bat_pipeline.engine.spans import (
    MAX_DEPTH,
    SpanIndex,
    failure_reason,
    load_spans,
    parse_json_text,
    wait_until_quiet,
)
from bat_pipeline.engine.trajectories import build_trajectory
from bat_pipeline_tests.engine.span_fixtures.builder import Agent, Clock, write_lines


def recorded(conversation: str = "c__try0") -> Agent:
    agent = Agent()
    with agent.root(conversation), agent.graph():
        agent.llm("hello")
    return agent


def test_index_by_trace_id_parent_and_conversation(tmp_path: Path):
    agent = recorded()
    index = load_spans([agent.write(tmp_path / "a.jsonl")])
    (root,) = index.conversation_roots("c__try0")
    assert root.parent_id is None
    assert len(index.trace(root.trace_id)) == len(index) == 4
    (graph,) = index.children_of(root.span_id)
    assert index.by_span_id[graph.span_id] is graph
    assert index.conversation_roots("other") == []


def test_roots_sorted_by_start_whatever_the_file_order(tmp_path: Path):
    agent = Agent()
    for _ in range(3):
        with agent.root("c__try0"):
            pass
    lines = agent.lines()
    index = load_spans([write_lines(tmp_path / "a.jsonl", lines[::-1])])
    starts = [r.start for r in index.conversation_roots("c__try0")]
    assert starts == sorted(starts) and len(starts) == 3


def test_client_span_is_not_a_root(tmp_path: Path):
    agent = Agent()
    with agent.call_agent("Other", "q", "a"):
        pass
    line = agent.lines()[0]
    line["attributes"]["gen_ai.conversation.id"] = "c__try0"
    index = load_spans([write_lines(tmp_path / "b.jsonl", [line])])
    assert index.conversation_roots("c__try0") == []


def test_torn_last_line_is_skipped_and_counted(tmp_path: Path):
    path = recorded().write(tmp_path / "a.jsonl")
    with open(path, "a") as f:
        f.write('{"name": "ChatModel", "trace_id": "ab')
    index = load_spans([path])
    assert len(index) == 4
    assert index.files[0].torn == 1 and index.files[0].malformed == 0
    assert index.messages() == [f"1 torn lines skipped in {path}"]


def test_blank_lines_are_ignored(tmp_path: Path):
    path = tmp_path / "a.jsonl"
    lines = recorded().lines()
    path.write_text("\n\n".join(json.dumps(x) for x in lines) + "\n\n  \n")
    index = load_spans([path])
    assert len(index) == 4 and index.files[0].blank == 5 and index.messages() == []


def test_wrong_types_and_missing_ids_are_skipped_and_counted(tmp_path: Path):
    good = recorded().lines()
    bad = [
        "not json at all",
        [1, 2],
        {"name": "no ids"},
        {**good[0], "span_id": 12},
        {**good[0], "span_id": "x1", "trace_id": ""},
        {**good[0], "span_id": "x2", "attributes": "oops"},
        {**good[0], "span_id": "x3", "parent_span_id": 7},
        {**good[0], "span_id": "x4", "start_time": {"t": 1}},
        {**good[0], "span_id": "x5", "name": None},
    ]
    path = tmp_path / "a.jsonl"
    path.write_text(
        "".join((b if isinstance(b, str) else json.dumps(b)) + "\n" for b in bad)
        + "".join(json.dumps(x) + "\n" for x in good)
    )
    index = load_spans([path])
    assert len(index) == 4
    assert index.files[0].malformed == len(bad)
    assert index.messages() == [f"{len(bad)} malformed lines skipped in {path}"]


def test_duplicate_span_ids_keep_the_first(tmp_path: Path):
    lines = recorded().lines()
    twice = [*lines, {**lines[0], "name": "again"}]
    index = load_spans([write_lines(tmp_path / "a.jsonl", twice)])
    assert len(index) == 4 and index.files[0].duplicates == 1
    assert index.by_span_id[lines[0]["span_id"]].name == lines[0]["name"]


def test_same_file_given_twice_is_read_once(tmp_path: Path):
    path = recorded().write(tmp_path / "a.jsonl")
    index = load_spans([path, tmp_path / "." / "a.jsonl"])
    assert len(index) == 4 and len(index.files) == 1 and index.messages() == []


def test_folder_means_every_jsonl_in_it(tmp_path: Path):
    clock = Clock()
    Agent(clock=clock).write(tmp_path / "spans" / "empty.jsonl")
    recorded("a__try0").write(tmp_path / "spans" / "a.jsonl")
    recorded("b__try0").write(tmp_path / "spans" / "b.jsonl")
    (tmp_path / "spans" / "notes.txt").write_text("not spans")
    index = load_spans([tmp_path / "spans"])
    assert set(index.conversations()) == {"a__try0", "b__try0"}
    assert [Path(f.path).name for f in index.files] == ["a.jsonl", "b.jsonl", "empty.jsonl"]


def test_missing_file_is_noted_not_raised(tmp_path: Path):
    index = load_spans([tmp_path / "nope.jsonl"])
    assert len(index) == 0 and index.files[0].missing
    assert index.messages() == [f"span file not found: {tmp_path / 'nope.jsonl'}"]


def test_unreadable_path_is_noted_not_raised(tmp_path: Path):
    index = SpanIndex()
    stats = index.add_file(tmp_path)
    assert stats.unreadable and index.messages()[0].startswith(f"span file not readable: {tmp_path}")


def test_chain_spans_keep_no_attributes(tmp_path: Path):
    index = load_spans([recorded().write(tmp_path / "a.jsonl")])
    by_name = {s.name: s for s in index.by_span_id.values()}
    assert by_name["LangGraph"].attributes == {}
    assert by_name["ChatModel"].attributes["llm.model_name"] == "m"


def test_opentelemetry_sdk_to_json_lines_are_read(tmp_path: Path):
    agent = recorded()
    path = tmp_path / "a.jsonl"
    path.write_text("".join(s.to_json(indent=None) + "\n" for s in agent.exporter.get_finished_spans()))
    index = load_spans([path])
    (root,) = index.conversation_roots("c__try0")
    assert len(index.trace(root.trace_id)) == 4 and root.start > 0
    assert index.children_of(root.span_id)[0].name == "LangGraph"


def test_failure_reason_prefers_the_exception_event():
    event = {"name": "exception", "attributes": {"exception.type": "ValueError", "exception.message": "bad"}}
    assert failure_reason([event], "ignored") == "ValueError: bad"


def test_failure_reason_cuts_the_status_description_at_the_traceback():
    description = 'RuntimeError("boom")Traceback (most recent call last):\n  File "x.py"'
    assert failure_reason([], description) == 'RuntimeError("boom")'
    assert failure_reason(None, None) == "failed"


def test_lines_nested_too_deep_are_skipped_naming_file_and_line(tmp_path: Path):
    good = recorded().lines()
    recursion = '{"name": "x", "attributes": {"a": ' + "[" * 200_000 + "]" * 200_000 + "}}"
    deep_value = json.loads("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))
    just_deep = {**good[0], "span_id": "d1", "attributes": {"a": deep_value}}
    path = tmp_path / "a.jsonl"
    path.write_text(
        json.dumps(good[0])
        + "\n"
        + recursion
        + "\n"
        + json.dumps(just_deep)
        + "\n"
        + "".join(json.dumps(x) + "\n" for x in good[1:])
    )
    index = load_spans([path])
    assert len(index) == 4 and index.files[0].too_deep == [2, 3]
    assert index.messages() == [f"lines 2, 3 of {path} skipped: nested deeper than {MAX_DEPTH} levels"]


def test_deep_json_text_inside_an_attribute_stays_text(tmp_path: Path):
    agent = Agent()
    deep_args = "[" * 100_000 + "]" * 100_000
    with (
        agent.root("c__try0"),
        agent.graph(),
        agent.tool("search", input_value=deep_args, output='{"type": "tool", "data": ' + "[" * 100_000),
    ):
        pass
    index = load_spans([agent.write(tmp_path / "a.jsonl")])
    trajectory = build_trajectory(index, "c__try0", ["hi"])
    (step,) = trajectory.turns[0].steps
    assert step.name == "search" and isinstance(step.args, str) and step.args.startswith("[[[")
    assert parse_json_text('{"a": [1]}') == {"a": [1]}
    with pytest.raises(ValueError):
        parse_json_text("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))


class FakeTime:
    """A clock that advances only when slept, and runs an action at a given time."""

    def __init__(self, start: float, actions: dict[float, Callable[[], None]] | None = None):
        self.now = start
        self.slept = 0.0
        self.actions = dict(actions or {})

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        self.slept += seconds
        for at in sorted(t for t in self.actions if t <= self.slept):
            self.actions.pop(at)()


def _age(path: Path, seconds_ago: float, now: float) -> None:
    os.utime(path, (now - seconds_ago, now - seconds_ago))


def test_span_files_quiet_for_the_settle_time_cost_no_wait(tmp_path: Path):
    path = recorded().write(tmp_path / "a.jsonl")
    fake = FakeTime(time.time())
    _age(path, 5, fake.now)
    assert wait_until_quiet(
        [path, tmp_path / "missing.jsonl"], settle_s=0.5, wait_s=10, clock=fake.clock, sleep=fake.sleep
    ) == (0.0, True)
    assert fake.slept == 0


def test_span_files_are_read_once_no_longer_written_to(tmp_path: Path):
    folder = tmp_path / "called"
    path = recorded().write(tmp_path / "a.jsonl")
    fake = FakeTime(time.time())
    # Written 0.1 s ago: not quiet before the append at 0.4 s (0.2 s ago would make it quiet
    # at 0.3 s to the nanosecond, on one side or the other of the settle time by rounding).
    _age(path, 0.1, fake.now)

    def append(target: Path, conversation: str) -> Callable[[], None]:
        def write() -> None:
            write_lines(target, recorded(conversation).lines(), append=True)
            _age(target, 0, fake.now)

        return write

    # The file is appended to at 0.4 s, then a file appears in the folder at 0.8 s.
    fake.actions = {0.4: append(path, "late__try0"), 0.8: append(folder / "b.jsonl", "called__try0")}
    waited, quiet = wait_until_quiet([path, folder], settle_s=0.5, wait_s=10, clock=fake.clock, sleep=fake.sleep)
    assert quiet and 1.3 <= waited < 1.5
    assert {"late__try0", "called__try0"} <= set(load_spans([path, folder]).conversations())


def test_span_files_that_never_settle_are_waited_for_at_most_wait_s(tmp_path: Path):
    path = recorded().write(tmp_path / "a.jsonl")
    fake = FakeTime(time.time())

    def grow() -> None:
        with open(path, "a") as f:
            f.write("\n")
        _age(path, 0, fake.now)
        fake.actions[fake.slept + 0.1] = grow

    fake.actions = {0.1: grow}
    waited, quiet = wait_until_quiet([path], settle_s=0.5, wait_s=2, clock=fake.clock, sleep=fake.sleep)
    assert not quiet and 2 <= waited < 2.2


def test_quiet_time_counts_from_when_the_writer_last_had_spans(tmp_path: Path):
    path = recorded().write(tmp_path / "a.jsonl")
    fake = FakeTime(time.time())
    _age(path, 5, fake.now)
    waited, quiet = wait_until_quiet(
        [path], settle_s=1.5, wait_s=10, since=fake.now - 0.5, clock=fake.clock, sleep=fake.sleep
    )
    assert quiet and 1.0 <= waited < 1.1
