"""EvalBench scenarios held by a CLI agent (an EvalBench run config's `generator: cli`):
each turn is one invocation of the command, the simulated user answering in between
(engine.conversation.hold_conversation).

Placeholders: `{PROMPT}` (the user's message), `{SESSION_DIR}` (a folder kept for the
whole episode and removed after it), `{TURN}` (1, 2, …), `{EVAL_ID}`, `{ATTEMPT}`. The
session folder is also the command's HOME — EvalBench's isolation: nothing of the user's
home leaks in or out — unless `isolate_home: false`. The command gets the shell's
environment, the model config's `env` and the scenario's `env`. A turn whose command
fails (non-zero exit, timeout, cannot start) ends the conversation as the agent's failure.
A JSON answer with `text` / `output` is read like an AgentV record: its tool calls are the
turn's tool steps (the trajectory is the target's, not from spans); one in EvalBench's
envelope (`{response, stats, tool_calls}`, what its generators hand its scorers) gives the
answer from `response` and the steps from `tool_calls` (else `stats.tools.byName`). Each
turn's stdout is kept as its harness output, which EvalBench's metric scorers read.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from bat_pipeline.engine.contracts.agentv import AgentvTarget
from bat_pipeline.engine.contracts.episode import Episode, RecordedToolCall
from bat_pipeline.engine.contracts.trajectory import ToolStep, Totals, Trajectory, Turn
from bat_pipeline.engine.conversation import Attempt, ConversationRecorder, hold_conversation, turn_limit
from bat_pipeline.engine.datasets.agentv import content_text
from bat_pipeline.engine.evalbench_harness import envelope_answer, envelope_steps, is_envelope, parse
from bat_pipeline.engine.simulated_user import SimulatedUser
from bat_pipeline.engine.target_records import TRAJECTORY_SOURCE, answer_from_output
from bat_pipeline.resources.commands import run_command
from bat_pipeline.resources.targets.placeholders import fill


async def _one(
    target: AgentvTarget, attempt: Attempt, user: SimulatedUser | None, user_max_turns: int | None, isolate_home: bool
) -> Episode:
    task = attempt.task
    recorder = ConversationRecorder(task, attempt.attempt_index, target.name)
    scenario_env = task.scenario.env if task.scenario is not None else {}
    env = {**os.environ, **target.env, **scenario_env}
    steps: list[list[ToolStep]] = []
    started = datetime.now(UTC).isoformat()
    limit = turn_limit(task, user_max_turns)
    with tempfile.TemporaryDirectory(prefix="bat-session-") as session:

        async def send(turn: str) -> None:
            command = fill(
                target.command or "",
                {
                    "PROMPT": turn,
                    "SESSION_DIR": session,
                    "TURN": str(len(steps) + 1),
                    "EVAL_ID": task.id,
                    "ATTEMPT": str(attempt.attempt_index),
                },
            )
            result = await asyncio.to_thread(
                run_command,
                command,
                cwd=target.cwd,
                env=env,
                timeout_s=target.timeout_s,
                home=Path(session) if isolate_home else Path(env.get("HOME", session)),
            )
            if not result.ok:
                steps.append([])
                recorder.update("failed", f"target '{target.name}' {result.describe()}")
                return
            recorder.harness_output(result.stdout)
            envelope = parse(result.stdout)
            if is_envelope(envelope):  # EvalBench's {response, stats, tool_calls}
                assert envelope is not None
                steps.append(envelope_steps(envelope))
                recorder.update("completed", envelope_answer(envelope))
                return
            answer = answer_from_output(result.stdout, "v4")
            steps.append(
                [
                    ToolStep(
                        name=str(c.get("tool") or c.get("name") or ""),
                        args=c.get("input", c.get("args")),
                        result=None if c.get("output") is None else content_text(c.get("output")),
                    )
                    for c in answer.tool_calls
                ]
            )
            recorder.update("completed", answer.text)

        try:
            await hold_conversation(recorder, send, user, limit)
            episode = recorder.finish(target=target.name, started_at=started)
        except Exception as exc:  # noqa: BLE001 - every failure of one attempt is its episode
            episode = recorder.finish(eval_error=f"{type(exc).__name__}: {exc}", target=target.name, started_at=started)
    turns = [Turn(user=t.user, steps=list(s)) for t, s in zip(recorder.turns, steps, strict=False)]
    calls = [step for turn in turns for step in turn.steps if isinstance(step, ToolStep)]
    episode.trace.trajectory = Trajectory(found=True, turns=turns, totals=Totals(tool_calls=len(calls)))
    episode.trace.tool_calls = [RecordedToolCall(name=s.name, args=s.args) for s in calls]
    episode.aux["trajectory_source"] = TRAJECTORY_SOURCE
    return episode


def run_cli_conversations(
    target: AgentvTarget,
    attempts: list[Attempt],
    *,
    concurrency: int,
    on_episode: Callable[[Episode], None],
    user: SimulatedUser | None,
    user_max_turns: int | None,
    isolate_home: bool = True,
) -> None:
    """Every attempt, at most `concurrency` at once; each episode to `on_episode` as it ends."""

    async def run_all() -> None:
        gate = asyncio.Semaphore(max(1, concurrency))

        async def guarded(attempt: Attempt) -> None:
            async with gate:
                episode = await _one(target, attempt, user, user_max_turns, isolate_home)
            on_episode(episode)

        await asyncio.gather(*(guarded(a) for a in attempts))

    asyncio.run(run_all())
