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

EvalBench's own CLI generators (`claude_code`, `gemini_cli`, `codex_cli`; a `harness`)
run their CLI instead (engine.evalbench_clis): its arguments, later turns resuming the
session the previous turn's output named, HOME its fake home under `.venv/` (set up once
per run), its stream output read into the envelope, which is then kept as the harness
output as EvalBench's conversation history keeps it.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bat_pipeline.engine import evalbench_clis as clis
from bat_pipeline.engine.contracts.agentv import AgentvTarget
from bat_pipeline.engine.contracts.episode import Episode, RecordedToolCall
from bat_pipeline.engine.contracts.evalbench import CliHarness
from bat_pipeline.engine.contracts.trajectory import ToolStep, Totals, Trajectory, Turn
from bat_pipeline.engine.conversation import Attempt, ConversationRecorder, hold_conversation, turn_limit
from bat_pipeline.engine.datasets.agentv import content_text
from bat_pipeline.engine.environment import JUDGE_KEY_ENV
from bat_pipeline.engine.evalbench_harness import envelope_answer, envelope_steps, is_envelope, parse
from bat_pipeline.engine.simulated_user import SimulatedUser
from bat_pipeline.engine.target_records import TRAJECTORY_SOURCE, answer_from_output
from bat_pipeline.resources.commands import CommandResult, run_command
from bat_pipeline.resources.targets.placeholders import fill


def prepare_home(harness: CliHarness) -> None:
    """The fake home of an EvalBench CLI generator with its setup files (MCP servers,
    settings), written once before the run's first turn, as EvalBench's generator does;
    a `google_credentials` MCP server's token is GOOGLE_OAUTH_ACCESS_TOKEN's."""
    harness.fake_home.mkdir(parents=True, exist_ok=True)
    token = os.environ.get(JUDGE_KEY_ENV["vertex"] or "") or None
    openai_key = (
        clis.environment(harness, os.environ).get("OPENAI_API_KEY") if harness.generator == "codex_cli" else None
    )
    for path, text in clis.home_files(harness, token, openai_key).items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if path.name == "auth.json":
            path.chmod(0o600)


async def _harness_turn(
    harness: CliHarness,
    target: AgentvTarget,
    prompt: str,
    session_id: str | None,
    first: bool,
    shell: dict[str, str],
    scenario_env: dict[str, str],
) -> tuple[CommandResult, dict[str, Any] | None]:
    """One turn of an EvalBench CLI generator: its command (the shell's environment, the
    model config's as the generator sets it, the scenario's on top), its stream read into
    the envelope."""
    argv = clis.command(harness, prompt, resume=not first, session_id=session_id)
    result = await asyncio.to_thread(
        run_command,
        argv,
        cwd=clis.workdir(harness) or Path.cwd(),
        env={**shell, **clis.environment(harness, shell), **scenario_env},
        timeout_s=target.timeout_s,
        home=harness.fake_home,
    )
    return result, clis.envelope(harness, result.stdout, int(result.wall_ms)) if result.ok else None


async def _one(
    target: AgentvTarget,
    attempt: Attempt,
    user: SimulatedUser | None,
    user_max_turns: int | None,
    isolate_home: bool,
    harness: CliHarness | None = None,
) -> Episode:
    task = attempt.task
    recorder = ConversationRecorder(task, attempt.attempt_index, target.name)
    scenario_env = task.scenario.env if task.scenario is not None else {}
    env = {**os.environ, **target.env, **scenario_env}
    steps: list[list[ToolStep]] = []
    started = datetime.now(UTC).isoformat()
    limit = turn_limit(task, user_max_turns)
    session_id: list[str | None] = [None]
    with tempfile.TemporaryDirectory(prefix="bat-session-") as session:

        async def send(turn: str) -> None:
            if harness is not None:
                result, envelope = await _harness_turn(
                    harness, target, turn, session_id[0], not steps, dict(os.environ), scenario_env
                )
                if envelope is None:
                    steps.append([])
                    recorder.update("failed", f"target '{target.name}' ({harness.generator}) {result.describe()}")
                    return
                session_id[0] = str(envelope.get("session_id") or "") or session_id[0]
                recorder.harness_output(json.dumps(envelope, indent=2))
                steps.append(envelope_steps(envelope))
                recorder.update("completed", envelope_answer(envelope))
                return
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
    harness: CliHarness | None = None,
) -> None:
    """Every attempt, at most `concurrency` at once; each episode to `on_episode` as it
    ends. `harness`: the turns run that EvalBench CLI generator instead of `target.command`."""
    if harness is not None:
        prepare_home(harness)

    async def run_all() -> None:
        gate = asyncio.Semaphore(max(1, concurrency))

        async def guarded(attempt: Attempt) -> None:
            async with gate:
                episode = await _one(target, attempt, user, user_max_turns, isolate_home, harness)
            on_episode(episode)

        await asyncio.gather(*(guarded(a) for a in attempts))

    asyncio.run(run_all())
