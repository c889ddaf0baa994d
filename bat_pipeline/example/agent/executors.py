"""A2A executors: the weather agent (model + tools) and the Forecaster (a fixed table)."""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from typing import Any

from a2a.helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import Part, TaskState
from opentelemetry.context import Context
from opentelemetry.trace import SpanKind, Status, StatusCode, Tracer
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from bat_pipeline.example.agent import tools
from bat_pipeline.example.agent.loop import run_turn
from bat_pipeline.example.agent.model_client import ModelClient
from bat_pipeline.example.agent.subagent import ForecasterProcess

NEED_INPUT = "NEED_INPUT:"


async def _open_task(context: RequestContext, event_queue: EventQueue) -> TaskUpdater:
    # a2a-sdk 1.x: a new task must be enqueued before any status update for it.
    task = context.current_task
    if task is None:
        # Only a request carrying a user message (message/send, message/stream) opens a task.
        assert context.message is not None, "a request without a message opened a task"
        task = new_task_from_user_message(context.message)
        await event_queue.enqueue_event(task)
    return TaskUpdater(event_queue, task.id, task.context_id)


def _say(updater: TaskUpdater, text: str) -> Any:
    return updater.new_agent_message([Part(text=text)])


def _root_attributes(agent: str, context: RequestContext, updater: TaskUpdater) -> dict[str, Any]:
    return {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": agent,
        "gen_ai.conversation.id": updater.context_id,
        "session.id": updater.context_id,
        "bat.a2a.task_id": updater.task_id,
        "input.value": context.get_user_input(),
    }


class WeatherExecutor(AgentExecutor):
    """One model-driven turn per A2A message; history kept per context id."""

    def __init__(
        self, name: str, tracer: Tracer, client: ModelClient, forecaster: ForecasterProcess, max_iterations: int
    ) -> None:
        self.name, self.tracer, self.client, self.forecaster = name, tracer, client, forecaster
        self.max_iterations = max_iterations
        self.histories: dict[str, list[dict[str, Any]]] = {}
        self.locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = await _open_task(context, event_queue)
        await updater.update_status(TaskState.TASK_STATE_WORKING, _say(updater, "Generating response..."))
        conversation = updater.context_id
        async with self.locks[conversation]:
            history = list(self.histories.get(conversation, []))
            history.append({"role": "user", "content": context.get_user_input()})

            async def ask(question: str) -> Any:
                return await self.forecaster.ask(question, f"{conversation}--forecaster")

            # Each request starts its own trace: the evaluation finds conversations by their roots.
            with self.tracer.start_as_current_span(
                f"invoke_agent {self.name}",
                context=Context(),
                kind=SpanKind.SERVER,
                attributes=_root_attributes(self.name, context, updater),
                record_exception=False,
                set_status_on_exception=False,
            ) as root:
                try:
                    text = await run_turn(self.tracer, self.client, history, ask, self.max_iterations)
                except Exception as exc:  # noqa: BLE001 - a failed turn fails the task, not the agent
                    root.record_exception(exc)
                    root.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}"))
                    root.set_attribute("bat.a2a.task_state", "failed")
                    await updater.failed(_say(updater, f"The model call failed: {exc}"))
                    return
                self.histories[conversation] = history
                root.set_attribute("output.value", text)
                if text.startswith(NEED_INPUT):
                    root.set_attribute("bat.a2a.task_state", "input-required")
                    await updater.requires_input(_say(updater, text[len(NEED_INPUT) :].strip()))
                    return
                root.set_attribute("bat.a2a.task_state", "completed")
                await updater.add_artifact([Part(text=text)], name="answer")
                await updater.complete(_say(updater, text))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = await _open_task(context, event_queue)
        await updater.cancel()


class ForecasterExecutor(AgentExecutor):
    """Answers from the forecast table; continues the caller's trace (W3C `traceparent`)."""

    def __init__(self, tracer: Tracer) -> None:
        self.tracer = tracer

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = await _open_task(context, event_queue)
        await updater.update_status(TaskState.TASK_STATE_WORKING, _say(updater, "Looking up the forecast..."))
        carrier = {k.lower(): v for k, v in (context.call_context.state.get("headers") or {}).items()}
        carrier.update({k: str(v) for k, v in context.metadata.items() if k in ("traceparent", "tracestate")})
        parent = TraceContextTextMapPropagator().extract(carrier)
        question = context.get_user_input()
        chain = {"openinference.span.kind": "CHAIN"}
        with self.tracer.start_as_current_span(
            "invoke_agent Forecaster",
            context=parent,
            kind=SpanKind.SERVER,
            attributes=_root_attributes("Forecaster", context, updater),
        ) as root:
            with self.tracer.start_as_current_span("ForecastGraph", attributes=chain):
                with self.tracer.start_as_current_span("lookup", attributes=chain):
                    attributes = {
                        "openinference.span.kind": "TOOL",
                        "tool.name": "forecast_table",
                        "input.value": json.dumps({"question": question}),
                    }
                    with self.tracer.start_as_current_span("forecast_table", attributes=attributes) as span:
                        answer = tools.forecast(question)
                        span.set_attribute("output.value", answer)
            root.set_attribute("output.value", answer)
            root.set_attribute("bat.a2a.task_state", "completed")
        await updater.complete(_say(updater, answer))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = await _open_task(context, event_queue)
        await updater.cancel()
