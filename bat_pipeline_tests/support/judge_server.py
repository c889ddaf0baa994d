"""A judge server for tests: real HTTP on 127.0.0.1, answers scripted per test.

It speaks both wire formats the judge client uses (OpenAI chat completions under
`/v1/chat/completions`, Anthropic messages under `/v1/messages`), records every request
(path, headers, JSON body) and the most requests it ever held at once.

A test scripts it with `server.script(...)`: answers taken in order, one per request,
then `server.default` for the rest. An answer is a Reply, or a callable receiving the
recorded request and returning one.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from bat_pipeline.engine.contracts import (
    A2AEvent,
    Episode,
    EpisodeTrace,
    Expected,
    ModelStep,
    Task,
    ToolCallExpectation,
    ToolStep,
    Trajectory,
    Turn,
)
from bat_pipeline.example.loopback import LoopbackServer


@dataclass
class Reply:
    """What the server sends back for one request."""

    status: int = 200
    content: str | None = None
    """The answer text, wrapped in the API's response shape (ignored when `raw` is set)."""
    tool_input: dict[str, Any] | None = None
    """Anthropic only: answer with a tool_use block carrying this input."""
    raw: bytes | None = None
    """Sent as is, instead of a shaped body."""
    error: str | None = None
    """An error body with this message (for status >= 400)."""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    hang: bool = False
    """Never answer, until the client gives up or the server stops."""


def answer(score: float = 0.8, reasoning: str = "looks right") -> Reply:
    return Reply(content=json.dumps({"reasoning": reasoning, "score": score}))


def error(status: int, message: str = "scripted error", retry_after: str | None = None) -> Reply:
    return Reply(status=status, error=message, headers={"Retry-After": retry_after} if retry_after else {})


Script = Reply | Callable[[dict[str, Any]], Reply]


class JudgeServer:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.default: Script = answer()
        self._queue: list[Script] = []
        self._lock = threading.Lock()
        self._in_flight = 0
        self.max_in_flight = 0
        app = Starlette(routes=[Route("/{path:path}", self._handle, methods=["POST", "GET"])])
        self._loop = LoopbackServer(app, name="judge-server", graceful_s=1)
        self._stopping = self._loop.stopping
        self.port = self._loop.port

    @property
    def base_url(self) -> str:
        return self._loop.base_url

    def script(self, *replies: Script, default: Script | None = None) -> None:
        with self._lock:
            self._queue = list(replies)
            if default is not None:
                self.default = default

    def bodies(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests]

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.max_in_flight = 0

    async def _handle(self, request: Request) -> Response:
        raw = await request.body()
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        record = {
            "path": request.url.path,
            "headers": dict(request.headers),
            "body": body,
            "raw": raw.decode("utf-8", "replace"),
        }
        with self._lock:
            self.requests.append(record)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            step = self._queue.pop(0) if self._queue else self.default
        try:
            reply = step(record) if callable(step) else step
            if reply.delay_s:
                await asyncio.sleep(reply.delay_s)
            if reply.hang:
                # Two things end the wait, neither an asyncio event: the server's stop (a
                # threading.Event) and the client hanging up.
                while not self._stopping.is_set() and not await request.is_disconnected():  # noqa: ASYNC110
                    await asyncio.sleep(0.02)
                return Response(status_code=503)
            return self._render(request.url.path, body, reply)
        finally:
            with self._lock:
                self._in_flight -= 1

    @staticmethod
    def _render(path: str, body: dict[str, Any], reply: Reply) -> Response:
        if reply.raw is not None:
            return Response(reply.raw, status_code=reply.status, headers=reply.headers, media_type="application/json")
        anthropic = path.endswith("/messages")
        if reply.status >= 400:
            if anthropic:
                data: Any = {"type": "error", "error": {"type": "invalid_request_error", "message": reply.error}}
            else:
                data = {"error": {"message": reply.error, "type": "invalid_request_error"}}
            return JSONResponse(data, status_code=reply.status, headers=reply.headers)
        if anthropic:
            blocks: list[dict[str, Any]] = []
            if reply.tool_input is not None:
                blocks.append({"type": "tool_use", "id": "toolu_1", "name": "record_score", "input": reply.tool_input})
            if reply.content is not None:
                blocks.append({"type": "text", "text": reply.content})
            data = {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": body.get("model"),
                "content": blocks,
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 10, "output_tokens": 5},
            }
        else:
            data = {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "model": body.get("model"),
                "choices": [
                    {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": reply.content}}
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            }
        return JSONResponse(data, status_code=reply.status, headers=reply.headers)


@contextmanager
def serve_judge() -> Iterator[JudgeServer]:
    """A judge server listening on 127.0.0.1 for the `with` block."""
    server = JudgeServer()
    server._loop.start()
    try:
        yield server
    finally:
        server._loop.stop()


# --- records to judge ---------------------------------------------------------------------


def weather_task(task_id: str = "weather_paris", *, tool_calls: bool = True) -> Task:
    calls = [ToolCallExpectation(name="get_weather", args_subset={"city": "Paris"})] if tool_calls else []
    return Task(
        id=task_id,
        turns=["What is the weather in Paris?"],
        expected=Expected(expected_outcome="Reports that Paris is sunny at 21 C", tool_calls=calls),
    )


def weather_episode(
    task_id: str = "weather_paris", attempt: int = 0, *, answer_text: str = "Paris: sunny, 21 C.", found: bool = True
) -> Episode:
    steps = [
        ModelStep(model="m", said="", called=["get_weather"], tokens_in=50, tokens_out=5),
        ToolStep(name="get_weather", args={"city": "Paris"}, result="sunny, 21 C"),
        ModelStep(model="m", said=answer_text, tokens_in=80, tokens_out=9),
    ]
    turns = [Turn(user="What is the weather in Paris?", steps=steps)] if found else []
    trajectory = Trajectory(found=found, turns=turns)
    events = [
        A2AEvent(t_ms=5, task_status="working", user_input="What is the weather in Paris?"),
        A2AEvent(t_ms=900, task_status="completed", content_preview=answer_text),
    ]
    return Episode(
        model_name="openai:agent-model",
        task_id=task_id,
        expected_outcome="Reports that Paris is sunny at 21 C",
        final_status="completed",
        final_output=answer_text,
        aux={"attempt_index": attempt},
        trace=EpisodeTrace(events=events, wall_ms=900, trajectory=trajectory),
    )
