"""Talking to the agent over A2A: k attempts of every task, concurrently (SPEC §4).

One httpx client and one resolved agent card serve every attempt of a partition.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Iterable
from datetime import UTC, datetime

import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.client.card_resolver import A2ACardResolver
from a2a.types import Message, Part, Role, SendMessageRequest, StreamResponse, TaskState

from bat_pipeline.engine.contracts import Episode
from bat_pipeline.engine.conversation import Attempt, ConversationRecorder, hold_conversation, turn_limit
from bat_pipeline.engine.simulated_user import SimulatedUser
from bat_pipeline.resources.tls import tls_context

HTTP_TIMEOUT_MARGIN_S = 5.0


def _text(parts) -> str:
    return "".join(p.text for p in parts if p.text)


STATE_NAME = "session_state"
"""How an agent exposes its session state: an artifact of this name whose data part is the
state, or a data part `{"session_state": {...}}` (docs/formats.md, Google ADK)."""


def _plain(value) -> object:
    """A protobuf `Value` (a data part) as JSON data."""
    kind = value.WhichOneof("kind")
    if kind == "struct_value":
        return {k: _plain(v) for k, v in value.struct_value.fields.items()}
    if kind == "list_value":
        return [_plain(v) for v in value.list_value.values]
    if kind == "number_value":
        number = value.number_value
        return int(number) if number.is_integer() else number
    return None if kind in (None, "null_value") else getattr(value, kind)


def _session_state(recorder: ConversationRecorder, parts, artifact_name: str = "") -> None:
    for part in parts:
        if not part.HasField("data"):
            continue
        value = _plain(part.data)
        if artifact_name == STATE_NAME and isinstance(value, dict):
            recorder.session_state = value
        elif isinstance(value, dict) and isinstance(value.get(STATE_NAME), dict):
            recorder.session_state = value[STATE_NAME]


def _state(value: int) -> str:
    return TaskState.Name(value)


def record_event(recorder: ConversationRecorder, event: StreamResponse) -> None:
    """Feed one streamed A2A event to the recorder."""
    kind = event.WhichOneof("payload")
    _record_state(recorder, event, kind)
    if kind == "task":
        task = event.task
        text = _text(task.status.message.parts) if task.status.HasField("message") else ""
        if not text:
            text = "".join(_text(a.parts) for a in task.artifacts)
        recorder.update(_state(task.status.state), text)
    elif kind == "status_update":
        status = event.status_update.status
        text = _text(status.message.parts) if status.HasField("message") else ""
        recorder.update(_state(status.state), text)
    elif kind == "artifact_update":
        recorder.update(None, _text(event.artifact_update.artifact.parts), plain=True)
    elif kind == "message":
        recorder.update(None, _text(event.message.parts), plain=True)


def _record_state(recorder: ConversationRecorder, event: StreamResponse, kind: str | None) -> None:
    """The session state in the event's data parts, if any (STATE_NAME)."""
    if kind == "task":
        if event.task.status.HasField("message"):
            _session_state(recorder, event.task.status.message.parts)
        for artifact in event.task.artifacts:
            _session_state(recorder, artifact.parts, artifact.name)
    elif kind == "status_update" and event.status_update.status.HasField("message"):
        _session_state(recorder, event.status_update.status.message.parts)
    elif kind == "artifact_update":
        _session_state(recorder, event.artifact_update.artifact.parts, event.artifact_update.artifact.name)
    elif kind == "message":
        _session_state(recorder, event.message.parts)


async def open_client(http: httpx.AsyncClient, url: str):
    """An A2A client for the agent at `url`, its card resolved once.

    The card may advertise the port from the user's config.yaml rather than the one this
    run chose; the interface URLs are pointed at `url`."""
    card = await A2ACardResolver(http, url).get_agent_card()
    for interface in card.supported_interfaces:
        interface.url = url
    factory = ClientFactory(ClientConfig(streaming=True, httpx_client=http))
    return factory.create(card)


async def run_attempt(
    client,
    attempt: Attempt,
    model_name: str,
    *,
    turn_timeout_s: float,
    aux: dict,
    user: SimulatedUser | None = None,
    user_max_turns: int | None = None,
) -> Episode:
    """One conversation (engine.conversation.hold_conversation: the task's turns, then the
    simulated user's when the task has a plan); an exception becomes an error episode,
    never propagates. A turn unanswered after `turn_timeout_s` ends it as an error episode
    naming the turn."""
    recorder = ConversationRecorder(attempt.task, attempt.attempt_index, model_name, context_id=attempt.conversation_id)
    aux = {**aux, "started_at": datetime.now(UTC).isoformat()}
    limit = turn_limit(attempt.task, user_max_turns)

    async def send(turn: str) -> None:
        request = SendMessageRequest(
            message=Message(
                message_id=uuid.uuid4().hex,
                context_id=recorder.context_id,
                role=Role.ROLE_USER,
                parts=[Part(text=turn)],
            )
        )
        async with asyncio.timeout(turn_timeout_s):
            async for event in client.send_message(request):
                record_event(recorder, event)

    try:
        await hold_conversation(recorder, send, user, limit)
    except asyncio.CancelledError:
        raise
    except BaseException as exc:  # noqa: BLE001 - every failure of one attempt is its episode
        reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        if isinstance(exc, TimeoutError):
            reason = (
                f"turn {len(recorder.turns)} of {limit} timed out: no answer within {turn_timeout_s:g}s "
                "(evaluation.turn_timeout_s)"
            )
        return recorder.finish(eval_error=reason, **aux)
    return recorder.finish(**aux)


async def run_attempts(
    url: str,
    attempts: Iterable[Attempt],
    model_name: str,
    *,
    concurrency: int,
    on_episode: Callable[[Episode], Awaitable[None] | None],
    turn_timeout_s: float,
    user: SimulatedUser | None = None,
    user_max_turns: int | None = None,
) -> list[Episode]:
    """All attempts against the agent at `url`, at most `concurrency` at once.

    `on_episode` is called as each episode ends (to store it at once); `turn_timeout_s`
    bounds each turn (`evaluation.turn_timeout_s`); `user` plays the user of scenarios
    with a plan, `user_max_turns` their turn limit when they set none."""
    # Longest conversations first (most turns), so the last slots are not held by a long
    # straggler while the others sit idle; asyncio.Semaphore wakes waiters in order.
    attempts = sorted(attempts, key=lambda a: -turn_limit(a.task, user_max_turns))
    episodes: list[Episode] = []
    limits = httpx.Limits(max_connections=max(concurrency * 2, 10))
    # The turn's own deadline (asyncio.timeout) must fire first, so the episode says which
    # turn ran out; httpx's read timeout only guards the agent card and a stalled socket.
    timeout = httpx.Timeout(turn_timeout_s + HTTP_TIMEOUT_MARGIN_S, connect=10.0)
    async with httpx.AsyncClient(timeout=timeout, limits=limits, verify=tls_context()) as http:
        client = await open_client(http, url)
        gate = asyncio.Semaphore(concurrency)
        aux = {"agent_url": url}

        async def one(attempt: Attempt) -> None:
            async with gate:
                episode = await run_attempt(
                    client,
                    attempt,
                    model_name,
                    turn_timeout_s=turn_timeout_s,
                    aux=aux,
                    user=user,
                    user_max_turns=user_max_turns,
                )
            episodes.append(episode)
            result = on_episode(episode)
            if asyncio.iscoroutine(result):
                await result

        await asyncio.gather(*(one(a) for a in attempts))
    episodes.sort(key=lambda e: (e.task_id, e.attempt_index))
    return episodes
