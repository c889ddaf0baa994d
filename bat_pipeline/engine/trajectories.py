"""The trajectory of one conversation, rebuilt from the span index (SPEC §5).

Each trace is analysed once (parent links, graph nodes, which spans are steps) and the
result cached on the index, so building every trajectory of a run costs one pass over
the spans in total.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections import deque
from collections.abc import Mapping
from typing import Any

from bat_pipeline.engine.contracts.episode import RecordedToolCall
from bat_pipeline.engine.contracts.trajectory import (
    AgentStep,
    ErrorStep,
    ModelStep,
    ToolStep,
    Totals,
    Trajectory,
    Turn,
)
from bat_pipeline.engine.spans import (
    AGENT_CALL,
    AGENT_ROOT,
    MODEL,
    TOOL,
    Span,
    SpanIndex,
    parse_json_text,
    start_order,
)

THINK_END = "</think>"
_OUT = "llm.output_messages."
# Where instrumentations put the id of the call a TOOL span answers: OpenInference
# (`tool_call.id`, `tool.id`), OpenTelemetry GenAI (`gen_ai.tool.call.id`).
_TOOL_ID_KEYS = ("tool_call.id", "tool.call_id", "tool.id", "gen_ai.tool.call.id")
# How far back to look for the graph node running when a span directly under a root
# started; nodes of one root rarely overlap more than this.
_RUNNING_LOOKBACK = 64


def build_trajectory(index: SpanIndex, conversation_id: str, turns: list[str], *,
                     max_field_chars: int = 4000) -> Trajectory:
    """The trajectory of `conversation_id`: its roots in start order matched to `turns`.

    A turn without a root has no steps; roots beyond the turns are ignored; `found` is
    False when the conversation has no root at all. Text fields longer than
    `max_field_chars` are cut and the trajectory marked truncated.
    """
    cut = _Cutter(max_field_chars)
    roots = [r for r in index.conversation_roots(conversation_id)
             if r.span_id in _plan(index, r.trace_id)]
    out_turns = []
    for i, user in enumerate(turns):
        steps = []
        if i < len(roots):
            root = roots[i]
            steps = _build_steps(_plan(index, root.trace_id)[root.span_id], cut)
        out_turns.append(Turn(user=user, steps=steps))
    return Trajectory(found=bool(roots), turns=out_turns, totals=_totals(out_turns), truncated=cut.cut)


def recorded_tool_calls(trajectory: Trajectory) -> list[RecordedToolCall]:
    """Every tool step, nested ones included, in step order (a tool before its inner steps)."""
    calls: list[RecordedToolCall] = []

    def walk(steps: list) -> None:
        for step in steps:
            if step.kind == "tool":
                calls.append(RecordedToolCall(name=step.name, args=step.args, error=step.error))
            if step.kind in ("tool", "agent"):
                walk(step.steps)

    for turn in trajectory.turns:
        walk(turn.steps)
    return calls


# --- one pass over a trace -------------------------------------------------------------

_Planned = tuple[Span, "Span | None", "str | None"]
"""A step-to-be: its span, the span of the step it nests under (or None), its node."""


def _plan(index: SpanIndex, trace_id: str) -> dict[str, list[_Planned]]:
    """Turn root span id → the steps of that turn, in start order (cached per trace)."""
    key = "plan:" + trace_id
    plan = index.cache.get(key)
    if plan is None:
        plan = _plan_trace(index.trace(trace_id))
        index.cache[key] = plan
    return plan  # type: ignore[return-value]


def _plan_trace(spans: list[Span]) -> dict[str, list[_Planned]]:
    local = {s.span_id: s for s in spans}
    clients = sorted((s for s in spans if s.role == AGENT_CALL), key=start_order)
    parent: dict[Span, Span | None] = {}
    turn_roots: list[Span] = []
    for s in spans:
        if s.parent_id is not None:
            parent[s] = local.get(s.parent_id)
        elif s.role == AGENT_ROOT:
            # A parentless agent root started inside an agent call of the same trace is
            # the called agent's side of that call (it did not record the CLIENT parent).
            client = _covering(clients, s.start) if clients else None
            parent[s] = client
            if client is None:
                turn_roots.append(s)
        else:
            parent[s] = None
    if not turn_roots:
        return {}
    turn_roots.sort(key=start_order)
    walk = _walk(parent, turn_roots)
    if walk is None:
        _break_cycles(spans, parent)
        walk = _walk(parent, turn_roots)
    info, running, candidates, failed = walk  # type: ignore[misc]

    failed_below: set[Span] = set()
    for s in failed:
        p = parent[s]
        while p is not None and p not in failed_below:
            failed_below.add(p)
            p = parent[p]

    for nodes in running.values():
        nodes.sort(key=start_order)
    starts = {k: [n.start for n in v] for k, v in running.items()}

    def running_node(root: Span | None, t: int) -> str | None:
        nodes = running.get(root) if root is not None else None
        if not nodes:
            return None
        i = bisect_right(starts[root], t) - 1
        for j in range(i, max(i - _RUNNING_LOOKBACK, -1), -1):
            if nodes[j].end >= t:
                return nodes[j].name
        return None

    plan: dict[str, list[_Planned]] = {r.span_id: [] for r in turn_roots}
    candidates.sort(key=start_order)
    for s in candidates:
        if (s.role is None or s.role == AGENT_ROOT) and s in failed_below:
            continue
        turn, root, depth, node, container = info[s]
        if node is None and depth == 1:
            node = running_node(root, s.start)
        if node is None:
            node = _metadata_node(s.attributes.get("metadata"))
        if node is None and depth is None:
            node = running_node(turn, s.start)
        plan[turn.span_id].append((s, container, node))
    return plan


def _walk(parent: dict[Span, Span | None], turn_roots: list[Span]):
    """Pre-order walk from the spans without parent: for every step candidate its owning
    turn, agent root, depth below that root, graph node (the depth-2 ancestor) and the
    tool or agent call it nests under. None when some spans were not reached: they hang
    in a parent cycle."""
    kids: dict[Span, list[Span]] = {}
    tops: list[Span] = []
    for s, p in parent.items():
        if p is None:
            tops.append(s)
        elif p in kids:
            kids[p].append(s)
        else:
            kids[p] = [s]
    root_starts = [r.start for r in turn_roots]
    is_turn = set(turn_roots)
    stack: list[tuple[Span, tuple]] = []
    for top in tops:
        if top in is_turn:
            turn = top
        else:
            # An orphan (its parent was never written): the turn running when it started.
            turn = turn_roots[max(bisect_right(root_starts, top.start) - 1, 0)]
        root = top if top.role == AGENT_ROOT else None
        stack.append((top, (turn, root, 0 if root else None, None, None)))
    info: dict[Span, tuple] = {}
    running: dict[Span, list[Span]] = {}
    candidates: list[Span] = []
    failed: list[Span] = []
    reached = 0
    while stack:
        s, data = stack.pop()
        reached += 1
        role = s.role
        if s.error is not None:
            failed.append(s)
            candidates.append(s)
            info[s] = data
        elif role is not None and role != AGENT_ROOT:
            candidates.append(s)
            info[s] = data
        turn, root, depth, node, container = data
        if depth == 2:
            running.setdefault(root, []).append(s)
        children = kids.get(s)
        if children is None:
            continue
        inner = s if (role == TOOL or role == AGENT_CALL) else container
        for c in children:
            if c.role == AGENT_ROOT and role == AGENT_CALL:
                stack.append((c, (turn, c, 0, None, inner)))
            elif depth is None:
                stack.append((c, (turn, root, None, None, inner)))
            else:
                stack.append((c, (turn, root, depth + 1, c.name if depth == 1 else node, inner)))
    if reached < len(parent):
        return None
    return info, running, candidates, failed


def _covering(clients: list[Span], t: int) -> Span | None:
    """The latest-started agent call whose time span contains t."""
    for c in reversed(clients):
        if c.start <= t <= c.end:
            return c
    return None


def _break_cycles(spans: list[Span], parent: dict[Span, Span | None]) -> None:
    """Cut one link of every parent cycle, so every walk up ends."""
    state: dict[Span, int] = {}
    for s in spans:
        path = []
        cur: Span | None = s
        while cur is not None and cur not in state:
            state[cur] = 1
            path.append(cur)
            cur = parent[cur]
        if cur is not None and state[cur] == 1:
            parent[path[-1]] = None
        for x in path:
            state[x] = 2


def _metadata_node(metadata: object) -> str | None:
    """LangGraph's node from the `metadata` attribute (JSON text)."""
    if isinstance(metadata, str):
        try:
            metadata = parse_json_text(metadata)
        except ValueError:
            return None
    if not isinstance(metadata, dict):
        return None
    ns = metadata.get("langgraph_checkpoint_ns")
    if isinstance(ns, str) and ns:
        return ns.split("|", 1)[0].split(":", 1)[0]
    node = metadata.get("langgraph_node")
    return node if isinstance(node, str) and node else None


# --- steps -------------------------------------------------------------------------------

class _Cutter:
    def __init__(self, limit: int):
        self.limit = max(1, limit)
        self.cut = False

    def text(self, value: str | None) -> str | None:
        if value is None or len(value) <= self.limit:
            return value
        self.cut = True
        return value[: self.limit - 1] + "…"

    def value(self, value: Any) -> Any:
        """Cut every string inside a JSON value."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        return value


class _DecidedCalls:
    """Tool calls the models of a turn decided, to give arguments to tool spans without."""

    def __init__(self) -> None:
        self.by_id: dict[str, list] = {}
        self.by_name: dict[str, deque[list]] = {}

    def add(self, call_id: str | None, name: str, args: Any) -> None:
        call = [name, args, False]
        if call_id:
            self.by_id.setdefault(call_id, call)
        self.by_name.setdefault(name, deque()).append(call)

    def take(self, call_id: str | None, name: str, own_args: Any = None) -> Any:
        """The decided call with this id, else the oldest unused one with this name
        (preferring one whose arguments equal `own_args`); marks it used."""
        call = self.by_id.get(call_id) if call_id else None
        if call is None or call[2]:
            queue = self.by_name.get(name)
            call = None
            if queue:
                while queue and queue[0][2]:
                    queue.popleft()
                if own_args is not None:
                    call = next((c for c in queue if not c[2] and c[1] == own_args), None)
                if call is None and queue:
                    call = queue[0]
        if call is None:
            return None
        call[2] = True
        return call


def _build_steps(planned: list[_Planned], cut: _Cutter) -> list:
    decided = _DecidedCalls()
    made: dict[Span, Any] = {}
    for span, _container, node in planned:
        made[span] = _make_step(span, node, decided, cut)
    top: list = []
    for span, container, _node in planned:
        step = made[span]
        holder = made.get(container) if container is not None else None
        (holder.steps if holder is not None else top).append(step)
    return top


def _make_step(span: Span, node: str | None, decided: _DecidedCalls, cut: _Cutter):
    a = span.attributes
    error = cut.text(span.error)
    node = cut.text(node)
    if span.role == MODEL:
        said, calls = _llm_output(a)
        for call_id, name, args in calls:
            decided.add(call_id, name, args)
        return ModelStep(
            node=node, model=cut.text(_str(a.get("llm.model_name"))),
            tokens_in=_int(a.get("llm.token_count.prompt")),
            tokens_out=_int(a.get("llm.token_count.completion")),
            tokens_cached=_int(a.get("llm.token_count.prompt_details.cache_read")),
            reasoning_tokens=_int(a.get("llm.token_count.completion_details.reasoning")),
            said=cut.text(said), called=[name for _, name, _ in calls], error=error)
    if span.role == TOOL:
        name = _str(a.get("tool.name")) or span.name
        result, answered_id = _tool_result(a.get("output.value"))
        call_id = next((a[k] for k in _TOOL_ID_KEYS if isinstance(a.get(k), str) and a[k]),
                       answered_id)
        own = _json_or_text(a.get("input.value"))
        if isinstance(own, dict):
            decided.take(call_id, name, own)
            args = own
        else:
            call = decided.take(call_id, name)
            args = call[1] if call is not None else own
        return ToolStep(node=node, name=cut.text(name), args=cut.value(args),
                        result=cut.text(result), error=error)
    if span.role == AGENT_CALL:
        agent = _str(a.get("gen_ai.agent.name")) or span.name.removeprefix("invoke_agent").strip()
        return AgentStep(node=node, agent=cut.text(agent or None),
                         asked=cut.text(_text(a.get("input.value"))),
                         answered=cut.text(_text(a.get("output.value"))),
                         status=_a2a_state(a.get("bat.a2a.task_state")), error=error)
    return ErrorStep(node=node, span=cut.text(span.name), error=error or "failed")


def _llm_output(a: Mapping[str, Any]) -> tuple[str | None, list[tuple[str | None, str, Any]]]:
    """What the model said (after a final `</think>`) and the tool calls it decided.

    Probes `llm.output_messages.<i>...` for i, j = 0, 1, ... (OpenInference numbers them
    without gaps) rather than scanning every attribute: a model span also carries the
    whole input history.
    """
    texts: list[str] = []
    calls: list[tuple[str | None, str, Any]] = []
    i = 0
    while True:
        p = f"{_OUT}{i}.message."
        found = p + "role" in a
        content = a.get(p + "content")
        if isinstance(content, str) and content:
            texts.append(content)
            found = True
        else:
            parts, j = [], 0
            while True:
                q = f"{p}contents.{j}.message_content."
                text = a.get(q + "text")
                if text is None and q + "type" not in a:
                    break
                if isinstance(text, str) and text:
                    parts.append(text)
                j += 1
            if parts:
                texts.append("\n".join(parts))
            found = found or j > 0
        j = 0
        while True:
            q = f"{p}tool_calls.{j}.tool_call."
            name, call_id = a.get(q + "function.name"), a.get(q + "id")
            if name is None and call_id is None:
                break
            if isinstance(name, str) and name:
                calls.append((_str(call_id), name, _json_or_text(a.get(q + "function.arguments"))))
            j += 1
        if not (found or j):
            break
        i += 1
    said = "\n".join(texts)
    if THINK_END in said:
        said = said.rsplit(THINK_END, 1)[1]
    said = said.strip()
    return (said or None), calls


def _tool_result(output: object) -> tuple[str | None, str | None]:
    """A tool's result text and the call id it answers, from `output.value`: plain text,
    a serialized tool message, or a LangGraph command whose `update` holds tool messages."""
    if output is None:
        return None, None
    if not isinstance(output, str):
        return _text(output), None
    stripped = output.lstrip()
    if not stripped.startswith("{"):
        return output, None
    try:
        value = parse_json_text(output)
    except ValueError:
        return output, None
    message = _tool_message(value)
    if message is not None:
        return message
    if isinstance(value, dict) and "update" in value:
        found = [m for m in map(_tool_message, _update_items(value["update"])) if m is not None]
        if found:
            ids = {i for _, i in found if i}
            return "\n".join(t for t, _ in found if t is not None), (ids.pop() if len(ids) == 1 else None)
    return output, None


def _update_items(update: object) -> list:
    """The messages in a command's `update` (a dict of channels, or a list of pairs)."""
    values: list = []
    if isinstance(update, dict):
        values = list(update.values())
    elif isinstance(update, list):
        values = [p[1] for p in update if isinstance(p, list | tuple) and len(p) == 2]
    items: list = []
    for v in values:
        items.extend(v if isinstance(v, list) else [v])
    return items


def _tool_message(value: object) -> tuple[str | None, str | None] | None:
    """(content, tool_call_id) of a serialized tool message, in any of LangChain's forms."""
    if not isinstance(value, dict):
        return None
    if value.get("type") == "tool" and isinstance(value.get("data"), dict):
        body = value["data"]
    elif value.get("type") == "tool" and "content" in value:
        body = value
    elif value.get("lc") == 1 and isinstance(value.get("kwargs"), dict) \
            and value["kwargs"].get("type") == "tool":
        body = value["kwargs"]
    else:
        return None
    return _content_text(body.get("content")), _str(body.get("tool_call_id"))


def _content_text(content: object) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
        if parts:
            return "\n".join(parts)
    return _text(content)


def _json_or_text(value: object) -> Any:
    """JSON text parsed (kept as text when nested deeper than spans.MAX_DEPTH), other text as is."""
    if isinstance(value, str):
        s = value.lstrip()
        if s[:1] in ("{", "[", '"') or s in ("true", "false", "null") or s[:1].isdigit():
            try:
                return parse_json_text(value)
            except ValueError:
                return value
    return value


def _text(value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: object) -> int:
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    if isinstance(value, str):
        try:
            return int(float(value))
        except ValueError:
            return 0
    return 0


def _totals(turns: list[Turn]) -> Totals:
    n = [0] * 7  # model calls, tokens in, out, cached, tool calls, agent calls, errors
    stack = [step for turn in turns for step in turn.steps]
    while stack:
        step = stack.pop()
        kind = step.kind
        if kind == "model":
            n[0] += 1
            n[1] += step.tokens_in
            n[2] += step.tokens_out
            n[3] += step.tokens_cached
        elif kind == "tool":
            n[4] += 1
            stack.extend(step.steps)
        elif kind == "agent":
            n[5] += 1
            stack.extend(step.steps)
        if step.error:
            n[6] += 1
    return Totals(model_calls=n[0], tokens_in=n[1], tokens_out=n[2], tokens_cached=n[3],
                  tool_calls=n[4], agent_calls=n[5], errors=n[6])


def _a2a_state(value: object) -> str | None:
    """An A2A task state as the protocol spells it in JSON (`input-required`), whether the
    span holds that or the protobuf enum name (`TASK_STATE_INPUT_REQUIRED`, bat-adk)."""
    text = _str(value)
    if text is None:
        return None
    if text.upper().startswith("TASK_STATE_"):
        text = text[len("TASK_STATE_"):]
    return text.lower().replace("_", "-")
