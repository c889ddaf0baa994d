"""The episodes the verdict parity test checks: every task of the reference fixtures, the
bat-cli sample and the bundled example's dataset, and the unit tests' expectations, each
against every recorded episode of the fixtures and a few made-up trajectories, with and
without a trajectory, plus attempts that raised and a task that is gone."""

from __future__ import annotations

import json
from pathlib import Path

from bat_pipeline.engine.config import load_tasks
from bat_pipeline.engine.contracts import (
    AgentStep,
    Episode,
    ErrorStep,
    ModelStep,
    Task,
    ToolStep,
    Totals,
    Trajectory,
    Turn,
)
from bat_pipeline.engine.contracts.episode import EpisodeTrace
from bat_pipeline.locations import BUNDLED_AGENT_DIR as EXAMPLE_AGENT_DIR
from bat_pipeline_tests.support.paths import FIXTURES, REFERENCE

SAMPLE = FIXTURES / "bat-cli-sample"

UNIT_EXPECTATIONS = [
    {},
    {"status": None},
    {"output_must_contain": ["22", "sunny", "Berlin"]},
    {"output_must_contain": [""]},
    {"tool_calls": [{"name": "get_weather", "args_subset": {"city": "Paris"}, "times": 2}]},
    {"tool_calls": [{"name": "ping", "times": 2}, {"name": "pong", "times": 0}]},
    {
        "tool_calls": [{"name": "search", "args_subset": {"q": "x"}, "times": 2}],
        "agent_calls": [{"agent": "Helper", "times": 2}],
    },
    {"agent_calls": [{"agent": "Planner", "times": 2}, {"agent": "Writer"}]},
    {"max_model_calls": 2, "max_tokens": 499},
    {"max_model_calls": 3, "max_tokens": 500, "status": "input-required"},
    {"no_errors": True},
    {
        "output_must_contain": ["a"],
        "tool_calls": [{"name": "x"}],
        "agent_calls": [{"agent": "A"}],
        "max_model_calls": 1,
        "max_tokens": 1,
        "no_errors": True,
    },
]


def _made_up(
    name: str, *steps, status: str | None = "completed", output: str = "", totals: Totals | None = None
) -> tuple[str, Episode]:
    trajectory = Trajectory(found=True, turns=[Turn(user="hi", steps=list(steps))], totals=totals or Totals())
    return name, Episode(
        model_name="p:m",
        task_id="t",
        final_status=status,
        final_output=output,
        trace=EpisodeTrace(trajectory=trajectory),
    )


def made_up_episodes() -> list[tuple[str, Episode]]:
    inner = ToolStep(name="search", args={"q": "x"})
    return [
        _made_up(
            "weather_calls",
            ToolStep(name="get_weather", args={"city": "Paris", "unit": "C"}),
            ToolStep(name="get_weather", args={"city": "Berlin"}),
            output="sunny, 22°C",
        ),
        _made_up("pings", ToolStep(name="ping", args=None), ToolStep(name="ping", args="raw"), status=None),
        _made_up(
            "nested",
            ToolStep(name="delegate", steps=[AgentStep(agent="Helper", steps=[inner])]),
            AgentStep(agent="Helper", steps=[ToolStep(name="search", args={"q": "x"})]),
            output="a",
        ),
        _made_up(
            "planner",
            AgentStep(agent="Planner"),
            status="input-required",
            totals=Totals(model_calls=3, tokens_in=400, tokens_out=100, tokens_cached=10_000),
        ),
        _made_up(
            "failures",
            ModelStep(model="m", error="HTTP 400"),
            ToolStep(name="t1", error="boom " * 100, steps=[ErrorStep(span="db", error="timeout")]),
            AgentStep(agent=None, error="refused"),
            ToolStep(name="t2", error="never named"),
            status="error",
            output="Berlin 22",
        ),
        _made_up("one_failure", ModelStep(model=None, error="HTTP 500"), output="city?"),
    ]


def tasks() -> list[tuple[str, Task]]:
    found = [
        (f"reference/{t['id']}", Task.model_validate(t))
        for t in json.loads((REFERENCE / "tasks.json").read_text(encoding="utf-8"))
    ]
    found += [
        (f"sample/{t['id']}", Task.model_validate(t))
        for t in json.loads((SAMPLE / "tasks.json").read_text(encoding="utf-8"))
    ]
    found += [(f"example/{t.id}", t) for t in load_tasks(EXAMPLE_AGENT_DIR / "eval" / "input" / "tasks.json")]
    found += [(f"unit/{i}", Task(id=f"unit_{i}", turns=["hi"], expected=e)) for i, e in enumerate(UNIT_EXPECTATIONS)]
    return found


def episodes() -> list[tuple[str, Episode]]:
    found = []
    for base, name in ((REFERENCE, "reference"), (SAMPLE, "sample")):
        for path in sorted(base.glob("*/episodes/*.json")):
            found.append(
                (
                    f"{name}/{path.parents[1].name}/{path.stem}",
                    Episode.model_validate_json(path.read_text(encoding="utf-8")),
                )
            )
    return found + made_up_episodes()


def cases() -> list[tuple[str, Task | None, Episode]]:
    """(case id, task, episode): every task × every episode, and the same without its
    trajectory; every episode as an attempt that raised; one episode whose task is gone."""
    all_tasks, all_episodes = tasks(), episodes()
    found: list[tuple[str, Task | None, Episode]] = []
    for episode_id, episode in all_episodes:
        lost = episode.model_copy(update={"trace": episode.trace.model_copy(update={"trajectory": Trajectory()})})
        for task_id, task in all_tasks:
            found.append((f"{task_id} × {episode_id}", task, episode))
            found.append((f"{task_id} × {episode_id} (no spans)", task, lost))
        raised = episode.model_copy(update={"aux": {**episode.aux, "eval_error": f"agent died on {episode_id}"}})
        found.append((f"raised × {episode_id}", all_tasks[0][1], raised))
    found.append(("gone × made-up", None, all_episodes[-1][1]))
    return found


def golden_path() -> Path:
    return Path(__file__).parent / "golden" / "verdicts_parity.json.gz"
