"""Bench: indexing spans and building every trajectory of a run, against merely parsing them.

Generates (deterministically, in a temp dir) about 100,000 spans shaped like bat-adk's:
1,000 conversations of several turns, a LangGraph ReAct loop per turn whose chain spans
carry the growing message history (most of the bytes), tools, and a called agent writing
its own span file. Then times (a) `json.loads` of every line and (b) `load_spans` plus
`build_trajectory` for every conversation, and prints spans/second and the ratio b/a
(the bar is 2). It prints figures and asserts nothing.

    .venv/bin/python -m bat_pipeline_tests.bench.trajectories
"""

from __future__ import annotations

import json
import random
import tempfile
import time
from pathlib import Path

from bat_pipeline.engine.spans import load_spans
from bat_pipeline.engine.trajectories import build_trajectory, recorded_tool_calls

CONVERSATIONS = 1000
TURNS = (4, 5, 6, 7, 8)
SEED = 7


class _Writer:
    """Writes spans of one agent as SPEC §5 lines with sequential ids and times."""

    def __init__(self, path: Path, ids: list[int], clock: list[int]):
        self.f = open(path, "w", encoding="utf-8")
        self.ids = ids
        self.clock = clock
        self.count = 0

    def new_id(self) -> str:
        self.ids[0] += 1
        return format(self.ids[0] * 2654435761 % (1 << 64), "016x")

    def tick(self) -> int:
        self.clock[0] += 1000
        return self.clock[0]

    def emit(
        self, name, trace_id, span_id, parent, start, attrs, kind="INTERNAL", status="OK", description=None, events=()
    ):
        self.f.write(
            json.dumps(
                {
                    "name": name,
                    "kind": kind,
                    "trace_id": trace_id,
                    "span_id": span_id,
                    "parent_span_id": parent,
                    "start_time": start,
                    "end_time": self.tick(),
                    "attributes": attrs,
                    "status": status,
                    "status_description": description,
                    "events": list(events),
                }
            )
            + "\n"
        )
        self.count += 1


_TOOLS_SCHEMA = json.dumps(
    [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Return the current weather for a city.",
                "parameters": {"properties": {"city": {"type": "string"}}, "required": ["city"], "type": "object"},
            },
        },
        {
            "type": "function",
            "function": {
                "name": "add",
                "description": "Add two integers and return the sum.",
                "parameters": {
                    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                    "required": ["a", "b"],
                    "type": "object",
                },
            },
        },
    ]
)
HISTORY_WINDOW = 4
_SYSTEM = {
    "type": "system",
    "content": "You are the bench assistant. Use get_weather for any weather question "
    "and add to add numbers; answer from the tool results. If the user asks for the weather without "
    "naming a city, ask which city. Remember what the user told you earlier in the conversation. " * 3,
}


def _message(kind: str, content: str, n: int, tool_calls: list | None = None, call_id: str | None = None) -> dict:
    """A LangChain message as LangGraph serializes it into chain spans (~0.2-0.7 KB)."""
    m: dict = {
        "content": content,
        "additional_kwargs": {},
        "response_metadata": {},
        "type": kind,
        "name": None,
        "id": None,
    }
    if kind == "ai":
        usage = {
            "completion_tokens": 7 + n % 20,
            "prompt_tokens": 97 + 10 * n,
            "total_tokens": 104 + 10 * n,
            "completion_tokens_details": None,
            "prompt_tokens_details": None,
        }
        m["additional_kwargs"] = {"refusal": None}
        m["response_metadata"] = {
            "token_usage": usage,
            "model_provider": "openai",
            "model_name": "bench",
            "system_fingerprint": "fp_bench",
            "id": f"chatcmpl-{n:06d}",
            "finish_reason": "tool_calls" if tool_calls else "stop",
            "logprobs": None,
        }
        m["id"] = f"lc_run--0199-{n:08x}-0"
        m["tool_calls"] = tool_calls or []
        m["invalid_tool_calls"] = []
        m["usage_metadata"] = {
            "input_tokens": usage["prompt_tokens"],
            "output_tokens": usage["completion_tokens"],
            "total_tokens": usage["total_tokens"],
            "input_token_details": {},
            "output_token_details": {},
        }
    if kind == "tool":
        m.update(tool_call_id=call_id, artifact=None, status="success")
    return m


_last_state: list = [None, -1, ""]


def _chain(history: list[dict], node: str, conv: str) -> dict:
    if _last_state[0] is not history or _last_state[1] != len(history):
        recent = history[-HISTORY_WINDOW:]
        _last_state[:] = [
            history,
            len(history),
            json.dumps(
                {
                    "bat_extra": {},
                    "bat_buffer": recent[-1:],
                    "query": recent[0]["content"],
                    "response": None,
                    "messages": recent,
                }
            ),
        ]
    state = _last_state[2]
    return {
        "input.value": state,
        "input.mime_type": "application/json",
        "output.value": state,
        "output.mime_type": "application/json",
        "session.id": conv,
        "openinference.span.kind": "CHAIN",
        "metadata": json.dumps(
            {
                "thread_id": conv,
                "ls_integration": "langgraph",
                "langgraph_step": 1,
                "langgraph_node": node,
                "langgraph_triggers": [f"branch:to:{node}"],
                "langgraph_path": ["__pregel_pull", node],
                "langgraph_checkpoint_ns": f"react:0e40bfd3|{node}:b75ae98d",
                "checkpoint_ns": "react:0e40bfd3",
            }
        ),
    }


def _llm(history: list[dict], said: str | None, calls: list[tuple[str, str, dict]], rng) -> dict:
    recent = history[-HISTORY_WINDOW:]
    attrs = {
        "openinference.span.kind": "LLM",
        "llm.model_name": "bench",
        "llm.provider": "openai",
        "llm.token_count.prompt": 90 + 10 * len(history),
        "llm.token_count.completion": rng.randint(3, 30),
        "input.value": json.dumps(
            {"messages": [[{"lc": 1, "type": "constructor", "kwargs": m} for m in [_SYSTEM, *recent]]]}
        ),
        "output.value": json.dumps(
            {
                "generations": [
                    [
                        {
                            "text": said or "",
                            "message": _message(
                                "ai", said or "", len(history), [{"name": n, "args": a, "id": i} for i, n, a in calls]
                            ),
                        }
                    ]
                ]
            }
        ),
        "llm.invocation_parameters": json.dumps({"model": "bench", "tools": json.loads(_TOOLS_SCHEMA)}),
        "llm.output_messages.0.message.role": "assistant",
    }
    for i, m in enumerate([_SYSTEM, *recent]):
        attrs[f"llm.input_messages.{i}.message.role"] = m["type"]
        attrs[f"llm.input_messages.{i}.message.content"] = m["content"]
    if said:
        attrs["llm.output_messages.0.message.content"] = said
    for j, (call_id, name, args) in enumerate(calls):
        p = f"llm.output_messages.0.message.tool_calls.{j}.tool_call."
        attrs[p + "id"], attrs[p + "function.name"], attrs[p + "function.arguments"] = call_id, name, json.dumps(args)
    return attrs


def _turn(w: _Writer, sub: _Writer, conv: str, user: str, history: list[dict], rng, n_calls: int):
    trace_id = format(rng.getrandbits(128), "032x")
    root = w.new_id()
    root_start = w.tick()
    history.append(_message("human", user, len(history)))
    graph, react, loop, inner = (w.new_id() for _ in range(4))
    starts = {s: w.tick() for s in (graph, react, loop, inner)}

    def node(name: str, parent: str, body=None) -> None:
        sid, start = w.new_id(), w.tick()
        if body:
            body(sid)
        w.emit(name, trace_id, sid, parent, start, _chain(history, name, conv))

    node("prepare", inner)
    for call in range(n_calls + 1):
        last = call == n_calls
        call_id = f"call-{w.ids[0]}"
        tool = rng.choice(("get_weather", "add", "ask_planner"))
        args = {"city": rng.choice(("Paris", "Rome", "Oslo"))} if tool != "add" else {"a": 2, "b": call}
        said = f"Here is what I found for {user}." if last else None

        def model(llm_chain: str) -> None:
            w.emit(
                "ChatOpenAI",
                trace_id,
                w.new_id(),
                llm_chain,
                w.tick(),
                _llm(history, said, [] if last else [(call_id, tool, args)], rng),
            )
            node("_tools_or_cleanup", llm_chain)

        node("llm", inner, model)
        history.append(
            _message("ai", said or "", len(history), [] if last else [{"name": tool, "args": args, "id": call_id}])
        )
        if last:
            break

        def run_tool(tools_chain: str) -> None:
            tid, start = w.new_id(), w.tick()
            value = args["city"] if "city" in args else json.dumps(args)
            if tool == "ask_planner":
                client, cstart = w.new_id(), w.tick()
                _called_agent(sub, trace_id, client, conv, rng)
                w.emit(
                    "invoke_agent Planner",
                    trace_id,
                    client,
                    tid,
                    cstart,
                    {
                        "gen_ai.operation.name": "invoke_agent",
                        "gen_ai.agent.name": "Planner",
                        "input.value": user,
                        "output.value": "plan ready",
                        "bat.a2a.task_state": "completed",
                    },
                    kind="CLIENT",
                )
            result = json.dumps(
                {"type": "tool", "data": {"content": f"result {call}", "type": "tool", "tool_call_id": call_id}}
            )
            w.emit(
                tool,
                trace_id,
                tid,
                tools_chain,
                start,
                {
                    "openinference.span.kind": "TOOL",
                    "tool.name": tool,
                    "input.value": value,
                    "output.value": result,
                    "session.id": conv,
                },
            )
            history.append(_message("tool", f"result {call}", len(history), call_id=call_id))

        node("tools", inner, run_tool)
    node("cleanup", inner)
    for sid, name, parent in (
        (inner, "LangGraph", loop),
        (loop, "ReActLoop", react),
        (react, "react", graph),
        (graph, "LangGraph", root),
    ):
        w.emit(name, trace_id, sid, parent, starts[sid], _chain(history, "react", conv))
    w.emit(
        "invoke_agent Bench",
        trace_id,
        root,
        None,
        root_start,
        {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "Bench",
            "gen_ai.conversation.id": conv,
            "session.id": conv,
        },
    )


def _called_agent(w: _Writer, trace_id: str, client: str, conv: str, rng) -> None:
    root, start = w.new_id(), w.tick()
    graph, gstart = w.new_id(), w.tick()
    history = [_message("human", "plan", 0)]
    for name in ("prepare", "llm", "cleanup"):
        sid, s = w.new_id(), w.tick()
        if name == "llm":
            w.emit("ChatOpenAI", trace_id, w.new_id(), sid, w.tick(), _llm(history, "plan ready", [], rng))
        w.emit(name, trace_id, sid, graph, s, _chain(history, name, conv))
    w.emit("LangGraph", trace_id, graph, root, gstart, _chain(history, "plan", conv))
    w.emit(
        "invoke_agent Planner",
        trace_id,
        root,
        client,
        start,
        {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "Planner",
            "gen_ai.conversation.id": f"planner-{conv}",
        },
    )


def generate(
    folder: Path, conversations_n: int = CONVERSATIONS, turns_n: tuple[int, ...] = TURNS
) -> tuple[list[Path], dict[str, list[str]], int]:
    """Write the agent's and the called agent's span files for `conversations_n`
    conversations of `turns_n` turns (one drawn each); return the files, the turns per
    conversation, and the number of spans."""
    rng = random.Random(SEED)
    ids, clock = [0], [1_700_000_000_000_000_000]
    main, sub = folder / "agent.jsonl", folder / "called" / "planner.jsonl"
    sub.parent.mkdir(parents=True, exist_ok=True)
    w, s = _Writer(main, ids, clock), _Writer(sub, ids, clock)
    conversations: dict[str, list[str]] = {}
    for c in range(conversations_n):
        conv = f"task_{c}__try0"
        turns = [f"question {t} of {c}" for t in range(rng.choice(turns_n))]
        conversations[conv] = turns
        history: list[dict] = []
        for user in turns:
            _turn(w, s, conv, user, history, rng, rng.choice((0, 1, 1, 2)))
    w.f.close()
    s.f.close()
    return [main, sub.parent], conversations, w.count + s.count


def _parse_only(files: list[Path]) -> int:
    n = 0
    for p in files:
        for path in sorted(p.glob("*.jsonl")) if p.is_dir() else [p]:
            with open(path, encoding="utf-8") as f:
                for line in f:
                    json.loads(line)
                    n += 1
    return n


def _index_and_build(files: list[Path], conversations: dict[str, list[str]]):
    index = load_spans(files)
    steps = 0
    for conv, turns in conversations.items():
        t = build_trajectory(index, conv, turns)
        recorded_tool_calls(t)
        steps += t.totals.model_calls + t.totals.tool_calls + t.totals.agent_calls
    return index, steps


def _timed(fn, *args):
    """(wall seconds, CPU seconds, result). CPU time is what the ratio uses: these
    machines are shared, and wall time swings with the neighbours' load."""
    w, c = time.perf_counter(), time.process_time()
    result = fn(*args)
    return time.perf_counter() - w, time.process_time() - c, result


def run(print=print) -> dict[str, float]:
    """Generate, time (best of 3, alternating a and b), print; returns the figures."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        files, conversations, count = generate(folder)
        size = sum(p.stat().st_size for p in folder.rglob("*.jsonl"))
        print(
            f"generated {count:,} spans ({size / 1e6:.0f} MB) in {len(files)} sources for "
            f"{len(conversations):,} conversations in {time.perf_counter() - t0:.1f}s"
        )
        _parse_only(files)  # warm the page cache
        a_wall = a_cpu = b_wall = b_cpu = float("inf")
        for _ in range(3):
            wall, cpu, _n = _timed(_parse_only, files)
            a_wall, a_cpu = min(a_wall, wall), min(a_cpu, cpu)
            wall, cpu, (index, steps) = _timed(_index_and_build, files, conversations)
            b_wall, b_cpu = min(b_wall, wall), min(b_cpu, cpu)
            indexed = len(index)
            del index  # freeing the index is not part of building
    figures = {
        "spans": count,
        "parse_cpu_s": a_cpu,
        "index_build_cpu_s": b_cpu,
        "parse_wall_s": a_wall,
        "index_build_wall_s": b_wall,
        "parse_spans_per_s": count / a_cpu,
        "index_build_spans_per_s": count / b_cpu,
        "ratio": b_cpu / a_cpu,
    }
    print(
        f"(a) json.loads of every line:       {a_cpu:5.2f}s CPU ({a_wall:5.2f}s wall)  "
        f"{figures['parse_spans_per_s']:>9,.0f} spans/s"
    )
    print(
        f"(b) index + build all trajectories: {b_cpu:5.2f}s CPU ({b_wall:5.2f}s wall)  "
        f"{figures['index_build_spans_per_s']:>9,.0f} spans/s  ({indexed:,} spans, "
        f"{len(conversations):,} trajectories, {steps:,} steps)"
    )
    print(f"ratio b/a: {figures['ratio']:.2f} (bar: 2)")
    return figures


if __name__ == "__main__":
    run()
