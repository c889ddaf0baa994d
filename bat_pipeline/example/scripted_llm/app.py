"""The Starlette app: chat endpoints of four APIs, knobs applied around the personas."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from bat_pipeline.example.scripted_llm import (
    agentv_judge,
    competent,
    judge,
    render,
    scenario_judge,
    simulated_user,
    sloppy,
)
from bat_pipeline.example.scripted_llm.conversation import Conversation, from_anthropic, from_google, from_openai
from bat_pipeline.example.scripted_llm.knobs import KnobBoard, Knobs
from bat_pipeline.example.scripted_llm.reply import Reply
from bat_pipeline.example.scripted_llm.stats import RequestLog

PERSONAS = ("competent", "good", "sloppy", "bad", "judge", "user")
GARBAGE = "}{ not json ]["


def persona_of(model: str) -> str | None:
    """`competent`, `sloppy`, `judge` or `user` (the simulated user) from words in the
    model name; None when none match."""
    low = model.lower()
    if "judge" in low:
        return "judge"
    if "user" in low:
        return "user"
    if "sloppy" in low or "bad" in low:
        return "sloppy"
    if "competent" in low or "good" in low:
        return "competent"
    return None


def _answer(persona: str, conv: Conversation, knobs: Knobs, key: str) -> Reply:
    echo = key if knobs.echo_key and key else None
    if persona == "judge":
        scorer = scenario_judge.handles(conv)
        if scorer:
            return scenario_judge.respond(conv, scorer)
        agentv_mode = agentv_judge.handles(conv)
        if agentv_mode:
            return agentv_judge.respond(conv, agentv_mode)
        if simulated_user.asked(conv):  # EvalBench's configs name one model for judge and user
            return simulated_user.respond(conv)
        return judge.respond(conv, think=knobs.think, echo=echo, pad=knobs.pad_reasoning)
    if persona == "user":
        return simulated_user.respond(conv)
    reply = (competent if persona == "competent" else sloppy).respond(conv)
    if echo and reply.text and not reply.tool_calls and not reply.error:
        reply.text += f" (answered for key {echo})"
    if conv.wants_json and not reply.tool_calls and not reply.error:
        reply.text = json.dumps({"answer": reply.text})
    return reply


def caller_key(request: Request) -> str:
    """The key a request was sent with: `x-api-key` or `x-goog-api-key`, else a bearer
    token; "" without one."""
    bearer = request.headers.get("authorization", "")
    given = request.headers.get("x-api-key") or request.headers.get("x-goog-api-key")
    return given or (bearer[7:].strip() if bearer.lower().startswith("bearer ") else "")


def _should_fail(knobs: Knobs, nth: int) -> bool:
    """Every 1/error_rate-th request of a model fails: deterministic, exact over a run."""
    rate = min(max(knobs.error_rate, 0.0), 1.0)
    return int(nth * rate) > int((nth - 1) * rate)


def create_app(board: KnobBoard, log: RequestLog, stopping: threading.Event) -> Starlette:
    """The scripted model server; `stopping` releases hanging requests at shutdown."""

    async def hang(request: Request) -> None:
        # Polled: `stopping` is a threading.Event, set from another thread.
        while not stopping.is_set() and not await request.is_disconnected():  # noqa: ASYNC110
            await asyncio.sleep(0.05)

    def error(api: str, status: int, message: str, headers: dict[str, str] | None = None) -> Response:
        return JSONResponse(render.error_body(api, status, message), status_code=status, headers=headers)

    async def chat(
        request: Request, api: str, parse: Callable[[dict[str, Any]], Conversation], model: str | None = None
    ) -> Response:
        raw = await request.body()
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            log.record(request.url.path, "")
            return error(api, 400, "request body is not valid JSON")
        model = str(body.get("model", "")) if model is None else model
        rec, nth = log.record(request.url.path, model)
        with log.held():
            response = await _respond(request, api, parse, body, model, nth)
        rec["status"] = response.status_code
        return response

    async def _respond(
        request: Request,
        api: str,
        parse: Callable[[dict[str, Any]], Conversation],
        body: dict[str, Any],
        model: str,
        nth: int,
    ) -> Response:
        knobs = board.for_model(model)
        if knobs.latency_ms:
            await asyncio.sleep(knobs.latency_ms / 1000)
        if knobs.hang:
            await hang(request)
            return error(api, 503, "scripted hang released")
        if model in knobs.fail_model:
            return error(api, 400, f"scripted failure: model '{model}' is set to always fail")
        if knobs.no_structured_output and (body.get("response_format") or body.get("format")):
            return error(api, 400, "response_format is not supported by this server")
        if knobs.no_structured_output and (body.get("generationConfig") or {}).get("responseJsonSchema"):
            return error(api, 400, 'Invalid JSON payload received. Unknown name "responseJsonSchema"')
        if _should_fail(knobs, nth):
            status = knobs.error_status
            retry = knobs.retry_after if knobs.retry_after is not None else (1 if status == 429 else None)
            headers = {"Retry-After": f"{retry:g}"} if retry is not None else None
            return error(api, status, f"scripted error {status} for model '{model}'", headers)
        persona = knobs.persona or persona_of(model)
        if persona is None:
            return error(api, 404, f"model '{model}' not found; names must contain one of {', '.join(PERSONAS)}")
        conv = parse(body)
        reply = _answer(persona, conv, knobs, caller_key(request))
        if reply.error:
            return error(api, *reply.error)
        if knobs.malformed and knobs.malformed != "content" and not body.get("stream"):
            return Response(b'{"id": "broken", "choices": [', media_type="application/json")
        if knobs.malformed == "content":
            reply = Reply(text=GARBAGE)
        usage = render.usage(conv, body, reply)
        if body.get("stream") and api == "openai":
            include = bool((body.get("stream_options") or {}).get("include_usage"))
            payloads = (
                [GARBAGE]
                if knobs.malformed and knobs.malformed != "content"
                else list(render.openai_chunks(conv, reply, usage, include))
            )
            return StreamingResponse(_sse(((None, p) for p in payloads), knobs), media_type="text/event-stream")
        if body.get("stream") and api == "anthropic":
            events = list(render.anthropic_events(conv, reply, usage))
            return StreamingResponse(_sse(events, knobs), media_type="text/event-stream")
        shape = {
            "openai": render.openai_json,
            "anthropic": render.anthropic_json,
            "ollama": render.ollama_json,
            "google": render.google_json,
        }[api]
        return JSONResponse(shape(conv, reply, usage))

    async def _sse(events: Any, knobs: Knobs) -> Any:
        for event, data in events:
            head = f"event: {event}\n" if event else ""
            yield f"{head}data: {data}\n\n"
            await asyncio.sleep(0)

    async def openai(request: Request) -> Response:
        return await chat(request, "openai", from_openai)

    async def anthropic(request: Request) -> Response:
        return await chat(request, "anthropic", from_anthropic)

    async def ollama(request: Request) -> Response:
        return await chat(request, "ollama", from_openai)

    async def google(request: Request) -> Response:
        model = request.path_params["model"]
        return await chat(request, "google", lambda body: from_google(body, model), model)

    async def models(request: Request) -> Response:
        data = [
            {"id": name, "object": "model", "created": render.CREATED, "owned_by": "scripted"}
            for name in ("competent", "sloppy", "judge")
        ]
        return JSONResponse({"object": "list", "data": data})

    async def control(request: Request) -> Response:
        if request.method == "POST":
            body = await request.json()
            if body.pop("clear_stats", False):
                log.clear()
            try:
                board.update(body)
            except (ValueError, TypeError) as exc:
                return JSONResponse({"error": str(exc)}, status_code=400)
        return JSONResponse(board.snapshot())

    async def stats(request: Request) -> Response:
        return JSONResponse(log.summary())

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    return Starlette(
        routes=[
            Route("/v1/chat/completions", openai, methods=["POST"]),
            Route("/chat/completions", openai, methods=["POST"]),
            Route("/v1/messages", anthropic, methods=["POST"]),
            Route("/api/chat", ollama, methods=["POST"]),
            Route("/v1beta/models/{model}:generateContent", google, methods=["POST"]),
            Route(
                "/v1/projects/{project}/locations/{location}/publishers/google/models/{model}:generateContent",
                google,
                methods=["POST"],
            ),
            Route("/v1/models", models, methods=["GET"]),
            Route("/models", models, methods=["GET"]),
            Route("/_control", control, methods=["GET", "POST"]),
            Route("/_stats", stats, methods=["GET"]),
            Route("/health", health, methods=["GET"]),
        ]
    )
