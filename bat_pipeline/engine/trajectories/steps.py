"""Planned spans into steps: a model call, a tool, a call to another agent or a failure,
each nested under the tool or agent call it ran in; and the totals over them."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any, overload

from bat_pipeline.engine.contracts import AgentStep, ErrorStep, ModelStep, Step, ToolStep, Totals, Turn
from bat_pipeline.engine.contracts.trajectory import count
from bat_pipeline.engine.spans import AGENT_CALL, MODEL, TOOL, Span, conventions as cv
from bat_pipeline.engine.trajectories.attributes import (
    a2a_state,
    json_or_text,
    llm_output,
    messages_text,
    str_value,
    tool_result,
)
from bat_pipeline.engine.trajectories.plan import Planned


class Cutter:
    def __init__(self, limit: int):
        self.limit = max(1, limit)
        self.cut = False

    @overload
    def text(self, value: str) -> str: ...
    @overload
    def text(self, value: str | None) -> str | None: ...

    def text(self, value: str | None) -> str | None:
        if value is None or len(value) <= self.limit:
            return value
        self.cut = True
        return value[: self.limit - 1] + "…"

    def value(self, value: object) -> object:
        """Cut every string inside a JSON value."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        return value


@dataclass(slots=True)
class _Decided:
    """One tool call a model decided, and whether a tool span has taken it yet."""

    name: str
    args: Any
    used: bool = False


class _DecidedCalls:
    """Tool calls the models of a turn decided, to give arguments to tool spans without."""

    def __init__(self) -> None:
        self.by_id: dict[str, _Decided] = {}
        self.by_name: dict[str, deque[_Decided]] = {}

    def add(self, call_id: str | None, name: str, args: Any) -> None:
        call = _Decided(name, args)
        if call_id:
            self.by_id.setdefault(call_id, call)
        self.by_name.setdefault(name, deque()).append(call)

    def take(self, call_id: str | None, name: str, own_args: Any = None) -> _Decided | None:
        """The decided call with this id, else the oldest unused one with this name
        (preferring one whose arguments equal `own_args`); marks it used."""
        call = self.by_id.get(call_id) if call_id else None
        if call is None or call.used:
            queue = self.by_name.get(name)
            call = None
            if queue:
                while queue and queue[0].used:
                    queue.popleft()
                if own_args is not None:
                    call = next((c for c in queue if not c.used and c.args == own_args), None)
                if call is None and queue:
                    call = queue[0]
        if call is None:
            return None
        call.used = True
        return call


def build_steps(planned: list[Planned], cut: Cutter) -> list[Step]:
    decided = _DecidedCalls()
    made: dict[Span, Step] = {}
    for span, _container, node in planned:
        made[span] = _make_step(span, node, decided, cut)
    top: list[Step] = []
    for span, container, _node in planned:
        step = made[span]
        holder = made.get(container) if container is not None else None
        if holder is None:
            top.append(step)
        else:
            # Only tool and agent calls hold steps (plan._walk), and their spans make
            # ToolStep and AgentStep: anything else is a bug worth an error here.
            assert isinstance(holder, ToolStep | AgentStep), holder
            holder.steps.append(step)
    return top


def _make_step(span: Span, node: str | None, decided: _DecidedCalls, cut: Cutter) -> Step:
    a = span.attributes
    error = cut.text(span.error)
    node = cut.text(node)
    if span.role == MODEL:
        said, calls = llm_output(a)
        for call_id, name, args in calls:
            decided.add(call_id, name, args)
        return ModelStep(
            node=node,
            model=cut.text(str_value(cv.first(a, cv.MODEL_NAME))),
            tokens_in=count(cv.first(a, cv.TOKENS_IN)),
            tokens_out=count(cv.first(a, cv.TOKENS_OUT)),
            tokens_cached=count(cv.first(a, cv.TOKENS_CACHED)),
            reasoning_tokens=count(cv.first(a, cv.TOKENS_REASONING)),
            said=cut.text(said),
            called=[name for _, name, _ in calls],
            error=error,
        )
    if span.role == TOOL:
        name = str_value(cv.first(a, cv.TOOL_NAME)) or span.name.removeprefix("execute_tool").strip() or span.name
        result, answered_id = tool_result(cv.first(a, cv.TOOL_RESULT))
        call_id = next((a[k] for k in cv.TOOL_CALL_ID if isinstance(a.get(k), str) and a[k]), answered_id)
        own = json_or_text(cv.first(a, cv.TOOL_ARGS))
        if isinstance(own, dict):
            decided.take(call_id, name, own)
            args = own
        else:
            call = decided.take(call_id, name)
            args = call.args if call is not None else own
        return ToolStep(node=node, name=cut.text(name), args=cut.value(args), result=cut.text(result), error=error)
    if span.role == AGENT_CALL:
        agent = str_value(cv.first(a, cv.AGENT_NAME)) or span.name.removeprefix("invoke_agent").strip()
        return AgentStep(
            node=node,
            agent=cut.text(agent or None),
            asked=cut.text(messages_text(cv.first(a, cv.AGENT_ASKED))),
            answered=cut.text(messages_text(cv.first(a, cv.AGENT_ANSWERED))),
            status=a2a_state(cv.first(a, cv.AGENT_STATE)),
            error=error,
        )
    return ErrorStep(node=node, span=cut.text(span.name), error=error or "failed")


def totals(turns: list[Turn]) -> Totals:
    n = [0] * 7  # model calls, tokens in, out, cached, tool calls, agent calls, errors
    stack = [step for turn in turns for step in turn.steps]
    while stack:
        step = stack.pop()
        if isinstance(step, ModelStep):
            n[0] += 1
            n[1] += step.tokens_in
            n[2] += step.tokens_out
            n[3] += step.tokens_cached
        elif isinstance(step, ToolStep):
            n[4] += 1
            stack.extend(step.steps)
        elif isinstance(step, AgentStep):
            n[5] += 1
            stack.extend(step.steps)
        if step.error:
            n[6] += 1
    return Totals(
        model_calls=n[0],
        tokens_in=n[1],
        tokens_out=n[2],
        tokens_cached=n[3],
        tool_calls=n[4],
        agent_calls=n[5],
        errors=n[6],
    )
