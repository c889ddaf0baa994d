"""The tool loop of one turn, traced as graph → node (`react` / `tools`) → LLM / TOOL spans.

Span attributes follow OpenInference (`openinference.span.kind`, `llm.*`, `tool.*`,
`input.value`, `output.value`) and the GenAI `invoke_agent` convention for the sub-agent call.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from opentelemetry.trace import SpanKind, Status, StatusCode, Tracer

from bat_pipeline.example.agent import tools
from bat_pipeline.example.agent.a2a_call import Exchange
from bat_pipeline.example.agent.model_client import ModelClient, ModelTurn

AskForecaster = Callable[[str], Awaitable[Exchange]]
GRAPH_SPAN = "WeatherGraph"


def _record_llm(span: Any, client: ModelClient, turn: ModelTurn) -> None:
    prefix = "llm.output_messages.0.message"
    span.set_attribute("llm.token_count.prompt", turn.prompt_tokens)
    span.set_attribute("llm.token_count.completion", turn.completion_tokens)
    span.set_attribute("llm.token_count.total", turn.prompt_tokens + turn.completion_tokens)
    span.set_attribute("llm.token_count.prompt_details.cache_read", turn.cached_tokens)
    span.set_attribute("llm.token_count.completion_details.reasoning", turn.reasoning_tokens)
    span.set_attribute(f"{prefix}.role", "assistant")
    if turn.text:
        span.set_attribute(f"{prefix}.content", turn.text)
    for j, call in enumerate(turn.tool_calls):
        span.set_attribute(f"{prefix}.tool_calls.{j}.tool_call.id", call["id"])
        span.set_attribute(f"{prefix}.tool_calls.{j}.tool_call.function.name", call["name"])
        span.set_attribute(f"{prefix}.tool_calls.{j}.tool_call.function.arguments", json.dumps(call["arguments"]))


async def _call_model(tracer: Tracer, client: ModelClient, history: list[dict[str, Any]]) -> ModelTurn:
    attributes = {
        "openinference.span.kind": "LLM",
        "llm.model_name": client.model,
        "llm.provider": client.provider,
        "llm.system": client.provider,
    }
    with tracer.start_as_current_span(f"chat {client.model}", attributes=attributes) as span:
        turn = await client.complete(tools.SYSTEM_PROMPT, history, tools.SCHEMAS)
        _record_llm(span, client, turn)
        span.set_status(Status(StatusCode.OK))
        return turn


async def _ask_forecaster(tracer: Tracer, ask: AskForecaster, question: str) -> str:
    attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Forecaster", "input.value": question}
    with tracer.start_as_current_span("invoke_agent Forecaster", kind=SpanKind.CLIENT, attributes=attributes) as span:
        exchange = await ask(question)
        span.set_attribute("output.value", exchange.text)
        span.set_attribute("bat.a2a.task_state", exchange.state)
        if exchange.state != "completed":
            span.set_status(Status(StatusCode.ERROR, f"Forecaster ended in state {exchange.state}"))
        return exchange.text


async def _run_tool(tracer: Tracer, call: dict[str, Any], ask: AskForecaster) -> str:
    name, args = call["name"], call["arguments"]
    attributes = {
        "openinference.span.kind": "TOOL",
        "tool.name": name,
        "tool_call.id": call["id"],
        "input.value": json.dumps(args),
        "input.mime_type": "application/json",
    }
    with tracer.start_as_current_span(
        name, attributes=attributes, record_exception=False, set_status_on_exception=False
    ) as span:
        try:
            if name == "get_weather":
                result = tools.get_weather(args["city"])
            elif name == "add":
                result = tools.add(args["a"], args["b"])
            elif name == "ask_forecaster":
                result = await _ask_forecaster(tracer, ask, str(args["question"]))
            else:
                raise LookupError(f"unknown tool {name!r}")
        except Exception as exc:  # noqa: BLE001 - a failed tool is reported to the model, not raised
            span.record_exception(exc)
            span.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}"))
            result = f"Error: {type(exc).__name__}: {exc}"
        else:
            span.set_status(Status(StatusCode.OK))
        span.set_attribute("output.value", result)
        return result


async def run_turn(
    tracer: Tracer, client: ModelClient, history: list[dict[str, Any]], ask: AskForecaster, max_iterations: int
) -> str:
    """Loop model → tools until the model answers in text; `history` grows in place.

    A model error propagates (the caller fails the task); tool errors go back to the model.
    """
    chain = {"openinference.span.kind": "CHAIN"}
    with tracer.start_as_current_span(GRAPH_SPAN, attributes=chain):
        for _ in range(max_iterations):
            with tracer.start_as_current_span("react", attributes=chain):
                turn = await _call_model(tracer, client, history)
            history.append(turn.as_message())
            if not turn.tool_calls:
                return turn.text
            with tracer.start_as_current_span("tools", attributes=chain):
                for call in turn.tool_calls:
                    result = await _run_tool(tracer, call, ask)
                    history.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    return f"I could not finish within {max_iterations} steps."
