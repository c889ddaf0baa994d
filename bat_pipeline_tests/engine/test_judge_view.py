"""engine.judge_view: notation, budget, dropping middle steps, the events fallback.

`UPDATE_GOLDEN=1 pytest ...` rewrites the golden files from the current code.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from bat_pipeline.engine.contracts import (
    A2AEvent,
    AgentStep,
    Episode,
    ErrorStep,
    ModelStep,
    ToolStep,
    Trajectory,
    Turn,
)
from bat_pipeline.engine.contracts.episode import EpisodeTrace
from bat_pipeline.engine.judge_view import (
    TRAJECTORY_LEGEND,
    render_episode_for_judge,
    render_trajectory,
)
from bat_pipeline_tests.support.paths import REFERENCE

GOLDEN = Path(__file__).parent / "golden"


def reference_episode(run: str, name: str) -> Episode:
    return Episode.model_validate_json((REFERENCE / run / "episodes" / f"{name}.json").read_text())


def assert_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"{path} missing: run with UPDATE_GOLDEN=1"
    assert path.read_text(encoding="utf-8") == text


def long_turn(n: int, text_len: int = 50) -> Turn:
    steps = []
    for i in range(1, n + 1):
        if i % 2:
            steps.append(ModelStep(model="m", said=f"thought {i} " + "x" * text_len, called=["lookup"]))
        else:
            steps.append(ToolStep(name="lookup", args={"i": i}, result=f"result {i} " + "y" * text_len))
    return Turn(user="do the long thing", steps=steps)


def big_trajectory() -> Trajectory:
    nested = ToolStep(
        name="delegate",
        args={"q": "z" * 3000},
        steps=[
            AgentStep(
                agent="Helper",
                asked="a" * 2000,
                answered="b" * 5000,
                status="completed",
                steps=[ModelStep(model="h", said="c" * 4000), ErrorStep(span="db", error="e" * 900)],
            ),
        ],
    )
    return Trajectory(
        found=True,
        turns=[
            long_turn(40, 800),
            Turn(user="u" * 3000, steps=[nested, *long_turn(9, 2000).steps]),
            Turn(user="nothing happened"),
        ],
    )


def step_numbers(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"^\s*\[(\d+)\] ", text, flags=re.M)]


# --- notation ------------------------------------------------------------------------


def test_each_step_kind_and_nesting():
    traj = Trajectory(
        found=True,
        turns=[
            Turn(
                user="Plan my trip",
                steps=[
                    ModelStep(
                        node="plan",
                        model="gpt",
                        said="<ok>",
                        called=["book"],
                        tokens_in=5,
                        tokens_out=2,
                        tokens_cached=3,
                        reasoning_tokens=1,
                    ),
                    ToolStep(
                        node="act",
                        name="book",
                        args={"city": "Paris", "n": 2},
                        result="done",
                        steps=[
                            AgentStep(
                                agent="Booker",
                                asked="book it",
                                answered="booked",
                                status="completed",
                                steps=[
                                    ToolStep(name="pay", args="card", error="declined"),
                                ],
                            ),
                        ],
                    ),
                    ErrorStep(span="router", error="timeout"),
                    ModelStep(model="gpt", error="HTTP 400"),
                ],
            )
        ],
    )
    text = render_trajectory(traj, max_chars=10_000)
    assert text.startswith(TRAJECTORY_LEGEND)
    lines = text.splitlines()[2:]
    assert lines == [
        'Turn 1, user: "Plan my trip"',
        '    [1] model gpt: says "<ok>"; calls book | tokens 5 in, 2 out, 3 cached, 1 reasoning  @plan',
        '    [2] tool book(city="Paris", n=2) -> "done"  @act',
        '        [3] agent Booker: asked "book it" -> "booked" (state completed)',
        '            [4] tool pay("card") -> FAILED: declined',
        '    [5] error in span "router": timeout',
        "    [6] model gpt: FAILED: HTTP 400 | tokens 0 in, 0 out",
    ]


def test_turn_without_steps_is_said_so():
    traj = Trajectory(found=True, turns=[Turn(user="hello")])
    assert "(no step recorded for this turn)" in render_trajectory(traj, max_chars=5000)


def test_not_found_trajectory_renders_a_notice():
    assert "No spans" in render_trajectory(Trajectory(found=False), max_chars=1000)


def test_deterministic():
    traj = big_trajectory()
    for budget in (100_000, 5000, 900):
        assert render_trajectory(traj, max_chars=budget) == render_trajectory(traj, max_chars=budget)


# --- budget --------------------------------------------------------------------------


def test_budget_never_exceeded():
    traj = big_trajectory()
    full = render_trajectory(traj, max_chars=10**7)
    for budget in [*range(1, 400, 7), 500, 1000, 2000, 4000, 8000, 16000, 24000, len(full) - 1]:
        assert len(render_trajectory(traj, max_chars=budget)) <= budget, budget


def test_whole_view_when_it_fits():
    traj = big_trajectory()
    full = render_trajectory(traj, max_chars=10**7)
    assert "…" not in full.split("\n\n", 1)[1]
    assert render_trajectory(traj, max_chars=len(full)) == full


def test_fields_are_shortened_before_steps_are_dropped():
    traj = Trajectory(found=True, turns=[long_turn(6, 3000)])
    full = render_trajectory(traj, max_chars=10**7)
    text = render_trajectory(traj, max_chars=len(full) // 3)
    assert not re.search(r"… \d+ steps? omitted", text)
    assert step_numbers(text) == [1, 2, 3, 4, 5, 6]
    assert '…"' in text


def test_middle_steps_dropped_first_and_last_kept():
    traj = Trajectory(found=True, turns=[long_turn(30), long_turn(12)])
    text = render_trajectory(traj, max_chars=2500)
    assert len(text) <= 2500
    numbers = step_numbers(text)
    assert numbers[0] == 1 and 30 in numbers  # first and last of turn 1
    assert 31 in numbers and 42 in numbers  # first and last of turn 2
    assert len(numbers) < 42
    markers = re.findall(r"… (\d+) steps? omitted \(\[(\d+)\](?:–\[(\d+)\])?\) …", text)
    assert markers
    assert sum(int(count) for count, _, _ in markers) + len(numbers) == 42
    for count, first, last in markers:
        assert int(count) == int(last or first) - int(first) + 1
        assert int(first) not in numbers


def test_nested_steps_count_in_the_marker():
    outer = [
        ToolStep(name=f"t{i}", result="r" * 200, steps=[ModelStep(model="m", said="s" * 200) for _ in range(3)])
        for i in range(8)
    ]
    traj = Trajectory(found=True, turns=[Turn(user="go", steps=outer)])
    text = render_trajectory(traj, max_chars=1800)
    assert len(text) <= 1800
    numbers = step_numbers(text)
    assert numbers[0] == 1 and 29 in numbers  # last tool is step 29, its children 30–32
    total = sum(int(c) for c in re.findall(r"… (\d+) steps? omitted", text))
    assert total + len(numbers) == 32


def test_legend_gives_way_to_steps_on_a_small_budget():
    traj = Trajectory(found=True, turns=[long_turn(3, 10)])
    text = render_trajectory(traj, max_chars=len(TRAJECTORY_LEGEND) + 50)
    assert TRAJECTORY_LEGEND not in text
    assert step_numbers(text) == [1, 2, 3]


def test_last_resort_keeps_both_ends():
    traj = Trajectory(found=True, turns=[long_turn(2, 10) for _ in range(12)])
    text = render_trajectory(traj, max_chars=600)
    assert len(text) <= 600
    assert "lines cut here to fit the space" in text
    numbers = step_numbers(text)
    assert numbers[0] == 1 and numbers[-1] == 24


def test_budget_below_one_is_refused():
    with pytest.raises(ValueError):
        render_trajectory(Trajectory(found=True), max_chars=0)


# --- events fallback -----------------------------------------------------------------


def events_episode(n_turns: int = 2, per_turn: int = 3) -> Episode:
    events = []
    for turn in range(n_turns):
        for i in range(per_turn):
            events.append(
                A2AEvent(
                    t_ms=turn * 100 + i * 10.4,
                    task_status="working",
                    content_preview=f"chunk {turn}.{i}",
                    user_input=f"message {turn}" if i == 0 else None,
                )
            )
    return Episode(model_name="p:m", task_id="t", trace=EpisodeTrace(events=events))


def test_events_when_no_spans():
    text = render_episode_for_judge(events_episode(), max_chars=5000)
    assert "No spans were recorded" in text
    assert 'User: "message 0"' in text and 'User: "message 1"' in text
    assert '    [2] +10ms working: "chunk 0.1"' in text
    assert step_numbers(text) == [1, 2, 3, 4, 5, 6]


def test_events_budget_drops_middle_events():
    episode = events_episode(2, 40)
    text = render_episode_for_judge(episode, max_chars=1200)
    assert len(text) <= 1200
    numbers = step_numbers(text)
    assert {1, 40, 41, 80} <= set(numbers)
    assert "events omitted" in text


def test_no_events_and_no_spans():
    episode = Episode(model_name="p:m", task_id="t")
    assert "No spans and no A2A events" in render_episode_for_judge(episode, max_chars=500)


def test_episode_with_spans_renders_its_trajectory():
    traj = Trajectory(found=True, turns=[long_turn(2)])
    episode = Episode(
        model_name="p:m",
        task_id="t",
        trace=EpisodeTrace(
            trajectory=traj, events=[A2AEvent(t_ms=1, task_status="completed", content_preview="not shown")]
        ),
    )
    assert render_episode_for_judge(episode, max_chars=9000) == render_trajectory(traj, max_chars=9000)


# --- reference episodes --------------------------------------------------------------


def test_golden_reference_trajectory():
    episode = reference_episode("bad", "compare_two_cities_budget__try0")
    assert_golden("judge_view_compare_two_cities_budget_bad.txt", render_episode_for_judge(episode, max_chars=24000))


def test_golden_reference_trajectory_tight_budget():
    episode = reference_episode("good", "three_turn_mixed__try0")
    text = render_episode_for_judge(episode, max_chars=540)
    assert len(text) <= 540
    assert "… 1 step omitted ([3]) …" in text and step_numbers(text) == [1, 2, 4, 5]
    assert_golden("judge_view_three_turn_mixed_good_540.txt", text)


def test_golden_reference_events():
    episode = reference_episode("bad", "self_check_no_errors__try0")
    episode.trace.trajectory = Trajectory(found=False)
    assert_golden("judge_view_self_check_no_errors_bad_events.txt", render_episode_for_judge(episode, max_chars=24000))


@pytest.mark.parametrize("budget", [1, 50, 200, 400, 800, 1500, 24000])
def test_reference_episodes_within_budget(budget):
    for path in sorted(REFERENCE.glob("*/episodes/*.json")):
        episode = Episode.model_validate_json(path.read_text())
        assert len(render_episode_for_judge(episode, max_chars=budget)) <= budget, path.name
