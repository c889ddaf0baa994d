"""The conversations of a partition (SPEC §4): which attempts to hold, the turn loop
(scripted turns, then a simulated user following a scenario's plan), and what each said,
turned into an episode's status, output and events.

Transport-free: the agent client sends one user message at a time (`hold_conversation`'s
`send`) and feeds a ConversationRecorder plain (state, text) updates as they stream in.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from bat_pipeline.engine.contracts import A2AEvent, Episode, EpisodeTrace, EvalConfig, Task, Trajectory
from bat_pipeline.engine.contracts.names import conversation_id
from bat_pipeline.engine.contracts.scenario import ConversationLog, ConversationTurn, Ended, SimulatedUserUsage
from bat_pipeline.engine.errors import InputError
from bat_pipeline.engine.simulated_user import SimulatedUser, SimulatedUserError, UserReply

MAX_EVENTS = 200
PREVIEW_CHARS = 200

# A2A task states (without the protobuf `TASK_STATE_` prefix, lower-case, `_` → `-`) to the
# statuses the verdict compares. auth-required waits on the user like input-required.
_STATUS = {
    "submitted": "working",
    "working": "working",
    "input-required": "input-required",
    "auth-required": "input-required",
    "completed": "completed",
    "failed": "error",
    "canceled": "error",
    "cancelled": "error",
    "rejected": "error",
}
TERMINAL = ("completed", "error", "input-required")


@dataclass(frozen=True)
class Attempt:
    """One conversation to hold: a task's attempt."""

    task: Task
    attempt_index: int
    conversation_id: str | None = None
    """The A2A context id when it is not `<task id>__try<n>` (a resumed attempt, an agent
    whose span files outlive the run); kept in the episode's `aux.conversation_id`."""


def plan_attempts(tasks: list[Task], k: int, kept: list[Episode], conversation_suffix: str = "") -> list[Attempt]:
    """Every (task, attempt) not already stored without an eval error. With a suffix each
    conversation id is `<task id>__try<n><suffix>`, else `<task id>__try<n>`."""
    done = {(e.task_id, e.attempt_index) for e in kept if not e.eval_error}
    return [
        Attempt(t, i, f"{conversation_id(t.id, i)}{conversation_suffix}" if conversation_suffix else None)
        for t in tasks
        for i in range(k)
        if (t.id, i) not in done
    ]


def needs_fresh_conversation_ids(config: EvalConfig, resumed: bool) -> bool:
    """Whether `<task id>__try<n>` could name conversations other than this run's in the
    span files read: a resumed run (the killed run's half-done conversations), an agent
    at `agent.url` or one writing to `agent.spans` (files kept across runs and shared by
    the models' partitions)."""
    return resumed or bool(config.agent.url) or bool(config.agent.span_files)


def normalise_state(state: str | None) -> str | None:
    """`TASK_STATE_INPUT_REQUIRED`, `input_required` or `input-required` → `input-required`.

    Unknown or unspecified states give None (the event is kept, the status unchanged)."""
    return _STATUS.get(a2a_state_name(state)) if state else None


def a2a_state_name(state: str) -> str:
    """An A2A task state as the protocol spells it in JSON: `TASK_STATE_INPUT_REQUIRED`
    (the protobuf enum name, as bat-adk and a2a-sdk give it) and `input_required` become
    `input-required`."""
    name = state.strip().lower()
    if name.startswith("task_state_"):
        name = name[len("task_state_") :]
    return name.replace("_", "-")


class ConversationRecorder:
    """Accumulates one attempt's A2A updates; `finish()` gives the episode.

    The final status is the last terminal status seen; the final output is the last
    non-empty text of the last turn."""

    def __init__(
        self,
        task: Task,
        attempt_index: int,
        model_name: str,
        clock: Callable[[], float] = time.perf_counter,
        *,
        context_id: str | None = None,
    ):
        self.task = task
        self.attempt_index = attempt_index
        self.model_name = model_name
        self._context_id = context_id
        self._clock = clock
        self._start = clock()
        self._events: list[A2AEvent] = []
        self._pending_user: str | None = None
        self._turn_text = ""
        self._turn_status: str | None = None
        self.final_status: str | None = None
        self.turns: list[ConversationTurn] = []
        """Every user message so far with the agent's answer (the last one still open)."""
        self.ended: Ended | None = None
        self.max_turns = len(task.turns)
        self.user_usage: SimulatedUserUsage | None = None
        self.session_state: dict[str, Any] | None = None
        """The session state the agent last exposed (a `session_state` data part or artifact),
        kept as `aux.session_state`: what an ADK case's `final_session_state` is compared with."""

    @property
    def context_id(self) -> str:
        """The A2A context id: the one given, else `<task id>__try<n>`."""
        return self._context_id or conversation_id(self.task.id, self.attempt_index)

    def user_message(self, text: str, *, generated: bool = False) -> None:
        """A new turn starts: the next event carries this user input. `generated`: the
        simulated user wrote it."""
        self._close_turn()
        self.turns.append(ConversationTurn(user=text, generated=generated))
        self._pending_user = text
        self._turn_text = ""
        self._turn_status = None

    @property
    def turn_failed(self) -> bool:
        """The current turn ended in error (A2A failed, rejected, canceled)."""
        return self._turn_status == "error"

    def user_cost(self, model: str, reply: UserReply | None) -> None:
        """Count one call of the simulated user (None: it failed, nothing to add)."""
        usage = self.user_usage or SimulatedUserUsage(model=model)
        if reply is not None:
            usage.calls += 1
            usage.requests += reply.requests
            usage.tokens_in += reply.tokens_in
            usage.tokens_out += reply.tokens_out
        self.user_usage = usage

    def history(self) -> list[ConversationTurn]:
        """The turns so far, the current one with the agent's answer."""
        self._close_turn()
        return [turn.model_copy() for turn in self.turns]

    def _close_turn(self) -> None:
        if self.turns:
            self.turns[-1].agent = self._turn_text
            self.turns[-1].status = self._turn_status

    def harness_output(self, text: str) -> None:
        """What the harness printed for the current turn (ConversationTurn.harness_output)."""
        if self.turns:
            self.turns[-1].harness_output = text

    def update(self, state: str | None, text: str = "", *, plain: bool = False) -> None:
        """One streamed update. `plain`: a message or artifact without a task state,
        which counts as completed."""
        status = "completed" if plain else normalise_state(state)
        if status in TERMINAL:
            self.final_status = status
            self._turn_status = status
        if text.strip():
            self._turn_text = text
        if len(self._events) < MAX_EVENTS:
            self._events.append(
                A2AEvent(
                    t_ms=(self._clock() - self._start) * 1000.0,
                    task_status=status or (state or "unknown"),
                    content_preview=text[:PREVIEW_CHARS],
                    user_input=self._pending_user,
                )
            )
        self._pending_user = None

    def finish(self, eval_error: str | None = None, **aux: Any) -> Episode:
        """The episode so far. With `eval_error` (the attempt raised) it is an error episode,
        the message in aux as `eval_error` and, as bat-cli writes it, `error`. A context id
        given at construction is kept as `aux.conversation_id`."""
        if self._pending_user is not None and len(self._events) < MAX_EVENTS:
            # The user spoke but nothing came back: keep the input visible in the events.
            self._events.append(
                A2AEvent(
                    t_ms=(self._clock() - self._start) * 1000.0, task_status="unknown", user_input=self._pending_user
                )
            )
            self._pending_user = None
        self._close_turn()
        if self.task.scenario is not None:
            ended = self.ended or ("error" if eval_error else "turns_done")
            log = ConversationLog(
                turns=self.turns, ended=ended, max_turns=self.max_turns, simulated_user=self.user_usage
            )
            aux = {**aux, "conversation": log.model_dump(mode="json")}
        return Episode(
            model_name=self.model_name,
            task_id=self.task.id,
            expected_outcome=self.task.expected.expected_outcome,
            # As bat eval records it: no terminal state seen (nothing came back, or only
            # `working`) is an error, so the field always holds one of the four statuses.
            final_status="error" if eval_error else (self.final_status or "error"),
            final_output=self._turn_text,
            aux={
                "attempt_index": self.attempt_index,
                **aux,
                **({"session_state": self.session_state} if self.session_state is not None else {}),
                **({"conversation_id": self._context_id} if self._context_id else {}),
                **({"eval_error": eval_error, "error": eval_error} if eval_error else {}),
            },
            trace=EpisodeTrace(
                events=self._events, wall_ms=(self._clock() - self._start) * 1000.0, trajectory=Trajectory()
            ),
        )


def error_episode(task: Task, attempt_index: int, model_name: str, message: str, **aux: Any) -> Episode:
    """An attempt that could not run at all (e.g. the agent was gone)."""
    return ConversationRecorder(task, attempt_index, model_name).finish(eval_error=message, **aux)


SendTurn = Callable[[str], Awaitable[None]]
"""Sends one user message to the agent and feeds its answer to the recorder."""


def scenarios_needing_user(config: EvalConfig, tasks: list[Task]) -> list[str]:
    """Ids of the tasks whose plan the simulated user carries on (a plan, and agent calls
    left after the scripted turns). Refuses (InputError on eval.yaml, entry
    `simulated_user`) such tasks when there is no `simulated_user`, naming the first."""
    limit = config.simulated_user.max_turns if config.simulated_user else None
    needing = [
        t.id
        for t in tasks
        if t.scenario is not None and t.scenario.conversation_plan.strip() and turn_limit(t, limit) > len(t.turns)
    ]
    if needing and config.simulated_user is None:
        raise InputError(
            str(config.source),
            f"scenario '{needing[0]}' has a conversation plan and more than "
            f"{len(next(t for t in tasks if t.id == needing[0]).turns)} turn(s) (max_turns): it needs a "
            "simulated user (`simulated_user: {provider, model}`)",
            entry="simulated_user",
        )
    return needing


def turn_limit(task: Task, user_max_turns: int | None = None) -> int:
    """Agent calls at most (SPEC §13): a scenario's `max_turns`, else the simulated user's
    `max_turns`, else 1; a task without a scenario sends its turns."""
    if task.scenario is None:
        return len(task.turns)
    return task.scenario.max_turns or user_max_turns or 1


async def hold_conversation(
    recorder: ConversationRecorder, send: SendTurn, user: SimulatedUser | None, limit: int
) -> None:
    """The turn loop: the task's turns, then, while agent calls remain and the task has a
    plan, the simulated user's messages until it says TERMINATE. Stops early when a turn
    fails. Sets `recorder.ended`; raises SimulatedUserError (ended
    `simulated_user_failed`) when the simulated user cannot answer, and whatever `send`
    raises."""
    recorder.max_turns = limit
    scenario = recorder.task.scenario
    plan = scenario.conversation_plan if scenario is not None else ""
    calls = 0
    for turn in recorder.task.turns:
        if calls >= limit:
            recorder.ended = "max_turns"
            return
        recorder.user_message(turn)
        await send(turn)
        calls += 1
        if recorder.turn_failed:
            recorder.ended = "agent_failed"
            return
    if user is None or not plan.strip():
        recorder.ended = "max_turns" if calls >= limit else "turns_done"
        return
    while calls < limit:
        try:
            reply = await user.reply(plan, recorder.history())
        except SimulatedUserError:
            recorder.user_cost(user.name, None)
            recorder.ended = "simulated_user_failed"
            raise
        recorder.user_cost(user.name, reply)
        if reply.terminates:
            recorder.ended = "terminated"
            return
        recorder.user_message(reply.text, generated=True)
        await send(reply.text)
        calls += 1
        if recorder.turn_failed:
            recorder.ended = "agent_failed"
            return
    recorder.ended = "max_turns"
