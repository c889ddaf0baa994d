"""Serve an executor over A2A (JSON-RPC + agent card, streaming) with uvicorn, and shut down
cleanly on SIGTERM: in-flight requests end, the Forecaster child stops, spans are flushed."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import uvicorn
from a2a.server.agent_execution import AgentExecutor
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from starlette.applications import Starlette

from bat_pipeline.example.agent.config import AgentConfig
from bat_pipeline.example.agent.executors import ForecasterExecutor, WeatherExecutor
from bat_pipeline.example.agent.model_client import ModelClient
from bat_pipeline.example.agent.subagent import ForecasterProcess
from bat_pipeline.example.agent.telemetry import build_tracer_provider

FORECASTER_CARD = {
    "name": "Forecaster",
    "description": "Tells tomorrow's weather for a few European cities.",
    "skills": [
        {"id": "forecast", "name": "Forecast", "description": "Tomorrow's weather for a city.", "tags": ["weather"]}
    ],
}


def build_card(spec: dict[str, Any], host: str, port: int) -> AgentCard:
    """An A2A card from `agent.json`-style fields (name, description, version, skills)."""
    skills = [
        AgentSkill(
            id=s.get("id", s["name"]),
            name=s["name"],
            description=s.get("description", ""),
            tags=s.get("tags", []),
            examples=s.get("examples", []),
        )
        for s in spec.get("skills", [])
    ]
    return AgentCard(
        name=spec["name"],
        description=spec.get("description", ""),
        version=str(spec.get("version", "1.0.0")),
        supported_interfaces=[
            AgentInterface(url=f"http://{host}:{port}/", protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=skills,
    )


def build_app(
    card: AgentCard,
    executor: AgentExecutor,
    on_startup: Callable[[], Awaitable[None]] | None = None,
    on_shutdown: Callable[[], Awaitable[None]] | None = None,
) -> Starlette:
    handler = DefaultRequestHandler(agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if on_startup:
            await on_startup()
        try:
            yield
        finally:
            if on_shutdown:
                await on_shutdown()

    routes = [*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/", enable_v0_3_compat=True)]
    return Starlette(routes=routes, lifespan=lifespan)


def _serve(app: Starlette, host: str, port: int) -> None:
    # uvicorn re-raises the SIGTERM it caught once shutdown is done; exit 0 instead of dying by it.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=os.environ.get("AGENT_LOG_LEVEL", "warning"),
        timeout_graceful_shutdown=5,
        lifespan="on",
    )
    uvicorn.Server(config).run()


def run_weather_agent(config: AgentConfig) -> None:
    """The main agent: card from `agent.json`; its Forecaster child starts with the first
    question for it and stops with the agent."""
    spec = json.loads((config.folder / "agent.json").read_text())
    card = build_card(spec, config.host, config.port)
    provider = build_tracer_provider(spec["name"], config.outputs, config.folder)
    client = ModelClient(config.provider, config.model, config.base_url)
    forecaster = ForecasterProcess(config)
    executor = WeatherExecutor(
        spec["name"], provider.get_tracer("bat_pipeline.example.agent"), client, forecaster, config.max_iterations
    )

    async def shutdown() -> None:
        await forecaster.stop()
        await client.aclose()
        provider.shutdown()

    _serve(build_app(card, executor, None, shutdown), config.host, config.port)


def run_forecaster(config: AgentConfig, port: int) -> None:
    """The Forecaster child: spans to `sub_agent.telemetry_file` (else the agent's own file);
    exits when its parent dies."""
    card = build_card(FORECASTER_CARD, "127.0.0.1", port)
    provider = build_tracer_provider("Forecaster", config.outputs, config.folder, config.forecaster_spans)
    executor = ForecasterExecutor(provider.get_tracer("bat_pipeline.example.agent.forecaster"))
    parent = os.getppid()
    watchdog: list[asyncio.Task[None]] = []

    async def watch_parent() -> None:
        while os.getppid() == parent:  # noqa: ASYNC110 - a parent's death sends no event
            await asyncio.sleep(0.5)
        os.kill(os.getpid(), signal.SIGTERM)

    async def startup() -> None:
        watchdog.append(asyncio.create_task(watch_parent()))

    async def shutdown() -> None:
        for task in watchdog:
            task.cancel()
        provider.shutdown()

    _serve(build_app(card, executor, startup, shutdown), "127.0.0.1", port)
