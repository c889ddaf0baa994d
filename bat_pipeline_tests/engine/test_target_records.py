"""What AgentV targets print, read into answers and episodes (SPEC §9, §12): batch JSONL
routed by id, CLI answers, and tool calls as the episode's trajectory."""

from __future__ import annotations

import json

from bat_pipeline.engine.contracts import Task
from bat_pipeline.engine.target_records import TRAJECTORY_SOURCE, answer_from_output, answered_episode, read_batch
from bat_pipeline.engine.trajectories import rebuild_trajectories

CALL = {"tool": "screening_check", "input": {"amount": 5}, "output": {"decision": "CLEAR"}}


def line(test_id, **fields) -> str:
    return json.dumps({"id": test_id, **fields})


def test_batch_lines_are_routed_by_id():
    text = "\n".join(
        [
            line("a", text="A", output=[{"role": "assistant", "tool_calls": [CALL]}]),
            "{not json",
            line("c", text="C1"),
            line("c", text="C2"),
            line("stranger", text="?"),
            json.dumps({"text": "no id"}),
        ]
    )
    batch = read_batch(text, ["a", "b", "c"], "seed", file="out.jsonl")
    assert batch.answers["a"].text == "A" and batch.answers["a"].tool_calls == [CALL]
    assert batch.errors["b"] == (
        "no record for this test in out.jsonl (line 2 is not JSON (Expecting property "
        "name enclosed in double quotes); line 6 has no `id`)"
    )
    assert batch.errors["c"] == "id 'c' appears on lines 3, 4 of out.jsonl"
    assert batch.warnings == ["out.jsonl: line 5: id 'stranger' is no test of the file; ignored"]


def test_answer_text_per_format():
    record = {"text": "T", "output": [{"role": "assistant", "content": {"decision": "CLEAR"}}]}
    assert answer_from_output(json.dumps(record), "seed").text == "T"
    assert answer_from_output(json.dumps(record), "v4").text == '{"decision": "CLEAR"}'
    assert answer_from_output(json.dumps({"output": [{"role": "assistant", "content": "hi"}]}), "seed").text == "hi"
    assert answer_from_output("plain answer\n", "seed").text == "plain answer"
    assert answer_from_output('{"decision": "X"}', "seed").text == '{"decision": "X"}'


def test_tool_calls_become_the_trajectory_and_survive_the_spans_step(tmp_path):
    task = Task(id="a", turns=["prompt"])
    answer = answer_from_output(
        json.dumps({"text": "A", "output": [{"role": "assistant", "tool_calls": [CALL]}]}), "seed"
    )
    episode = answered_episode(task, "tgt", 0, answer, wall_ms=12.0, started_at="now")
    assert episode.aux["trajectory_source"] == TRAJECTORY_SOURCE
    [call] = episode.trace.tool_calls
    assert (call.name, call.args) == ("screening_check", {"amount": 5})
    [turn] = episode.trace.trajectory.turns
    assert turn.user == "prompt" and turn.steps[0].name == "screening_check"
    assert episode.trace.trajectory.found and episode.trace.trajectory.totals.tool_calls == 1
    rebuilt = rebuild_trajectories([episode], [task], [], base=tmp_path, settle_s=0, wait_s=0, since=0)
    assert rebuilt.episodes[0].trace.tool_calls[0].name == "screening_check"
