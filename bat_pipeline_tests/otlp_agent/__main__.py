"""A test agent that knows nothing of bat_pipeline's span files: an A2A server (a2a-sdk)
instrumented only with the OpenTelemetry SDK and the stock OTLP/HTTP exporter, configured
by the standard OTEL_* variables alone, emitting OpenTelemetry GenAI spans (`invoke_agent`,
`chat`, `execute_tool`) for its model and tool calls. It reuses the example agent's model
client and tools (no instrumentation in them), so on the same tasks and scripted models it
does what the bundled agent does.

`python -m bat_pipeline_tests.otlp_agent --port N` serves the weather agent;
`--role forecaster` the Forecaster it asks (its own process, exporting to the same place).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections import defaultdict
from typing import Any

import httpx
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.types import Part
from opentelemetry.context import Context
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import SpanKind, Status, StatusCode, Tracer

from bat_pipeline.example.agent import tools
from bat_pipeline.example.agent.a2a_call import connect, send_text
from bat_pipeline.example.agent.executors import _open_task
from bat_pipeline.example.agent.model_client import ModelClient, ModelTurn
from bat_pipeline.example.agent.server import FORECASTER_CARD, _serve, build_app, build_card
from bat_pipeline.resources.ports import free_port

CARD = {"name": "OtelWeather", "description": "Weather, sums and forecasts.", "skills": [{"name": "weather"}]}


def _output_messages(turn: ModelTurn) -> str:
    parts: list[dict[str, Any]] = [{"type": "text", "content": turn.text}] if turn.text else []
    parts += [
        {"type": "tool_call", "id": c["id"], "name": c["name"], "arguments": c["arguments"]} for c in turn.tool_calls
    ]
    return json.dumps(
        [{"role": "assistant", "parts": parts, "finish_reason": "tool_call" if turn.tool_calls else "stop"}]
    )


class Forecaster:
    """The Forecaster as a child process, started by the first question for it."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.client: Any = None
        self.lock = asyncio.Lock()

    async def ask(self, question: str, context_id: str) -> tuple[str, str]:
        async with self.lock:
            if self.client is None:
                self._spawn()
                deadline = time.monotonic() + 30
                async with httpx.AsyncClient(timeout=2) as http:
                    while True:
                        try:
                            if (await http.get(self.url + "/.well-known/agent-card.json")).status_code == 200:
                                break
                        except httpx.HTTPError:
                            if time.monotonic() > deadline:
                                raise
                        await asyncio.sleep(0.05)
                self.client = await connect(self.url)
        exchange = await send_text(self.client, question, context_id, timeout_s=30)
        return exchange.text, exchange.state

    def _spawn(self) -> None:
        command = [sys.executable, "-m", "bat_pipeline_tests.otlp_agent", "--role", "forecaster"]
        self.proc = subprocess.Popen([*command, "--port", str(self.port)], env=dict(os.environ))

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(10)


class WeatherExecutor(AgentExecutor):
    def __init__(self, tracer: Tracer, client: ModelClient, forecaster: Forecaster) -> None:
        self.tracer, self.client, self.forecaster = tracer, client, forecaster
        self.histories: defaultdict[str, list[dict[str, Any]]] = defaultdict(list)

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = await _open_task(context, event_queue)
        conversation = updater.context_id
        history = self.histories[conversation]
        history.append({"role": "user", "content": context.get_user_input()})
        root = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": CARD["name"],
            "gen_ai.conversation.id": conversation,
        }
        with self.tracer.start_as_current_span(
            f"invoke_agent {CARD['name']}", context=Context(), kind=SpanKind.SERVER, attributes=root
        ):
            text = "I could not finish."
            for _ in range(6):
                turn = await self._chat(history)
                history.append(turn.as_message())
                if not turn.tool_calls:
                    text = turn.text
                    break
                for call in turn.tool_calls:
                    result = await self._tool(call, conversation)
                    history.append({"role": "tool", "tool_call_id": call["id"], "content": result})
        await updater.add_artifact([Part(text=text)], name="answer")
        await updater.complete(updater.new_agent_message([Part(text=text)]))

    async def _chat(self, history: list[dict[str, Any]]) -> ModelTurn:
        attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": self.client.provider,
            "gen_ai.request.model": self.client.model,
        }
        with self.tracer.start_as_current_span(
            f"chat {self.client.model}", kind=SpanKind.CLIENT, attributes=attributes
        ) as span:
            turn = await self.client.complete(tools.SYSTEM_PROMPT, history, tools.SCHEMAS)
            span.set_attribute("gen_ai.usage.input_tokens", turn.prompt_tokens)
            span.set_attribute("gen_ai.usage.output_tokens", turn.completion_tokens)
            span.set_attribute("gen_ai.output.messages", _output_messages(turn))
            return turn

    async def _tool(self, call: dict[str, Any], conversation: str) -> str:
        name, args = call["name"], call["arguments"]
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": call["id"],
            "gen_ai.tool.call.arguments": json.dumps(args),
        }
        with self.tracer.start_as_current_span(f"execute_tool {name}", attributes=attributes) as span:
            try:
                if name == "get_weather":
                    result = tools.get_weather(args["city"])
                elif name == "add":
                    result = tools.add(args["a"], args["b"])
                elif name == "ask_forecaster":
                    result = await self._ask(str(args["question"]), conversation)
                else:
                    raise LookupError(f"unknown tool {name!r}")
            except Exception as exc:  # noqa: BLE001 - a failed tool is reported to the model
                span.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}"))
                span.set_attribute("error.type", type(exc).__name__)
                result = f"Error: {exc}"
            span.set_attribute("gen_ai.tool.call.result", result)
            return result

    async def _ask(self, question: str, conversation: str) -> str:
        attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Forecaster"}
        with self.tracer.start_as_current_span(
            "invoke_agent Forecaster", kind=SpanKind.CLIENT, attributes=attributes
        ) as span:
            asked = [{"role": "user", "parts": [{"type": "text", "content": question}]}]
            span.set_attribute("gen_ai.input.messages", json.dumps(asked))
            text, state = await self.forecaster.ask(question, f"{conversation}--forecaster")
            answered = [{"role": "assistant", "parts": [{"type": "text", "content": text}]}]
            span.set_attribute("gen_ai.output.messages", json.dumps(answered))
            if state != "completed":
                span.set_status(Status(StatusCode.ERROR, f"Forecaster ended in state {state}"))
            return text

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await (await _open_task(context, event_queue)).cancel()


class ForecasterExecutor(AgentExecutor):
    def __init__(self, tracer: Tracer) -> None:
        self.tracer = tracer

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = await _open_task(context, event_queue)
        question = context.get_user_input()
        root = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "Forecaster",
            "gen_ai.conversation.id": updater.context_id,
        }
        with self.tracer.start_as_current_span("invoke_agent Forecaster", kind=SpanKind.SERVER, attributes=root):
            tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "forecast_table"}
            with self.tracer.start_as_current_span("execute_tool forecast_table", attributes=tool) as span:
                answer = tools.forecast(question)
                span.set_attribute("gen_ai.tool.call.result", answer)
        await updater.complete(updater.new_agent_message([Part(text=answer)]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await (await _open_task(context, event_queue)).cancel()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--role", default="weather", choices=["weather", "forecaster"])
    # Exit without flushing the batch processor, like an agent killed hard: only spans
    # exported while it ran reach the receiver.
    parser.add_argument("--no-flush-at-exit", action="store_true")
    args = parser.parse_args()
    name = CARD["name"] if args.role == "weather" else "Forecaster"
    provider = TracerProvider(resource=Resource.create({"service.name": name}))
    # Where and how to export: OTEL_EXPORTER_OTLP_* and OTEL_BSP_* from the environment only.
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    tracer = provider.get_tracer("otlp_agent")
    if args.role == "forecaster":
        card, executor = build_card(FORECASTER_CARD, "127.0.0.1", args.port), ForecasterExecutor(tracer)
        forecaster = None
    else:
        client = ModelClient(os.environ["MODEL_PROVIDER"], os.environ["MODEL"], os.environ.get("BASE_URL"))
        forecaster = Forecaster()
        card, executor = build_card(CARD, "127.0.0.1", args.port), WeatherExecutor(tracer, client, forecaster)

    async def shutdown() -> None:
        if forecaster is not None:
            await asyncio.to_thread(forecaster.stop)
        if args.no_flush_at_exit:
            os._exit(0)  # skips the provider's own flush at exit too
        provider.shutdown()  # flushes what the batch processor still holds

    _serve(build_app(card, executor, None, shutdown), "127.0.0.1", args.port)


if __name__ == "__main__":
    main()
