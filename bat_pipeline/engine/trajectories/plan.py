"""One pass over a trace: which spans are steps, the turn and the call each belongs to, and
the graph node that ran it."""

from __future__ import annotations

from bisect import bisect_right
from typing import cast

from bat_pipeline.engine.spans import AGENT_CALL, AGENT_ROOT, TOOL, Span, SpanIndex, parse_json_text, start_order

# How far back to look for the graph node running when a span directly under a root
# started; nodes of one root rarely overlap more than this.
_RUNNING_LOOKBACK = 64

Planned = tuple[Span, "Span | None", "str | None"]
"""A step-to-be: its span, the span of the step it nests under (or None), its node."""

_Where = tuple[Span, "Span | None", "int | None", "str | None", "Span | None"]
"""Where a span sits: its turn's root span, the agent root it runs under and its depth
below that root (both None outside any agent root), its graph node, the tool or agent
call it nests under."""
_Walk = tuple[dict[Span, _Where], dict[Span, list[Span]], list[Span], list[Span]]
"""A walk's step candidates with where each sits, the graph-node spans of each agent
root, the candidates and the failed spans."""


def planned_steps(index: SpanIndex, trace_id: str) -> dict[str, list[Planned]]:
    """Turn root span id → the steps of that turn, in start order (cached per trace)."""
    key = "plan:" + trace_id
    plan = index.cache.get(key)
    if plan is None:
        plan = _plan_trace(index.trace(trace_id))
        index.cache[key] = plan
    # Only this function writes "plan:" keys, always with a plan.
    return cast("dict[str, list[Planned]]", plan)


def _plan_trace(spans: list[Span]) -> dict[str, list[Planned]]:
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
    assert walk is not None, "a parent cycle survived _break_cycles"
    info, running, candidates, failed = walk

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
        if root is None:
            return None
        nodes = running.get(root)
        if not nodes:
            return None
        i = bisect_right(starts[root], t) - 1
        for j in range(i, max(i - _RUNNING_LOOKBACK, -1), -1):
            if nodes[j].end >= t:
                return nodes[j].name
        return None

    plan: dict[str, list[Planned]] = {r.span_id: [] for r in turn_roots}
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


def _walk(parent: dict[Span, Span | None], turn_roots: list[Span]) -> _Walk | None:
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
    stack: list[tuple[Span, _Where]] = []
    for top in tops:
        if top in is_turn:
            turn = top
        else:
            # An orphan (its parent was never written): the turn running when it started.
            turn = turn_roots[max(bisect_right(root_starts, top.start) - 1, 0)]
        root = top if top.role == AGENT_ROOT else None
        stack.append((top, (turn, root, 0 if root else None, None, None)))
    info: dict[Span, _Where] = {}
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
        if depth == 2 and root is not None:  # a depth is counted only below a root
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
