"""A stand-in for Claude Code, Gemini CLI and Codex (and `npm exec --yes <package> --` of
them) under EvalBench's CLI generators: prints, in the CLI's own stream format
(`claude -p … --output-format stream-json`, `gemini --output-format stream-json`,
`codex exec --json`), the turn transcripts.json beside it holds for the scenario.

Usage: fake_agent_cli.py NAME ARGS… (NAME: claude, gemini, codex or npm). The scenario is
found by the first turn's prompt (FAKE_CLI_PROMPTS: a JSON file mapping a prompt to its
scenario id); later turns resume the session the previous turn printed, whose id names
the scenario and turn (`<id>~<turn>`). Gemini's `--resume` takes no id: the last session
is kept in the fake home. Each invocation is appended to $FAKE_CLI_LOG as a JSON line
(argv, HOME, working directory, a few variables) for the test to check."""

import json
import os
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
NATIVE_FOR_CODEX = "shell"


def after(args: list[str], flag: str) -> str | None:
    return args[args.index(flag) + 1] if flag in args and args.index(flag) + 1 < len(args) else None


def main() -> None:
    name, args = sys.argv[1], sys.argv[2:]
    via, package = name, None
    if name == "npm":  # npm exec --yes <package> -- <args>
        package, args = args[2], args[args.index("--") + 1 :]
        name = next(n for n in ("claude", "gemini", "codex") if n in package)
    if name == "claude":
        prompt, resumed = after(args, "-p"), after(args, "--resume")
    elif name == "gemini":
        prompt = after(args, "--prompt")
        last = Path(os.environ["HOME"]) / ".fake_gemini_session"
        resumed = last.read_text() if "--resume" in args and last.exists() else None
    else:
        prompt = args[-1]
        resumed = args[args.index("resume") + 1] if args[:2] == ["exec", "resume"] else None
    with open(os.environ["FAKE_CLI_LOG"], "a", encoding="utf-8") as log:
        seen = {
            k: os.environ.get(k)
            for k in ("IS_SANDBOX", "CODEX_HOME", "GEMINI_CLI_SYSTEM_SETTINGS_PATH", "CLAUDE_CODE_USE_VERTEX")
        }
        call = {
            "cli": name,
            "via": via,
            "package": package,
            "argv": args,
            "home": os.environ["HOME"],
            "cwd": os.getcwd(),
        }
        log.write(json.dumps({**call, **seen}))
        log.write("\n")
    if resumed:
        eval_id, _, turn = resumed.rpartition("~")
        turn_number = int(turn) + 1
    else:
        eval_id = json.loads(Path(os.environ["FAKE_CLI_PROMPTS"]).read_text())[prompt]
        turn_number = 1
    turns = json.loads((HERE / "transcripts.json").read_text())[eval_id]
    envelope = turns[min(turn_number, len(turns)) - 1]
    session = f"{eval_id}~{turn_number}"
    if name == "gemini":
        (Path(os.environ["HOME"]) / ".fake_gemini_session").write_text(session)
    {"claude": claude, "gemini": gemini, "codex": codex}[name](envelope, session)


def usage_of(envelope: dict) -> tuple[str, dict, int]:
    """(the first model, the tokens of all models summed, their latencies summed): a
    stream reports one turn's totals."""
    models = envelope["stats"]["models"]
    tokens: dict = {}
    for stats in models.values():
        for key, value in stats["tokens"].items():
            tokens[key] = tokens.get(key, 0) + value
    return next(iter(models)), tokens, sum(s["api"]["totalLatencyMs"] for s in models.values())


def emit(event: dict) -> None:
    print(json.dumps(event), flush=True)


def claude(envelope: dict, session: str) -> None:
    model, tokens, latency = usage_of(envelope)
    emit({"type": "system", "subtype": "init", "session_id": session, "model": model, "tools": []})
    for i, call in enumerate(envelope["tool_calls"]):
        server, sep, tool = call["tool_name"].partition("__")
        raw = f"mcp__{server}__{tool}" if sep else call["tool_name"]
        use = {"type": "tool_use", "id": f"toolu_{i}", "name": raw, "input": call["parameters"]}
        emit({"type": "assistant", "message": {"role": "assistant", "content": [use]}, "session_id": session})
        result = {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": [{"type": "text", "text": "ok"}]}
        emit({"type": "user", "message": {"role": "user", "content": [result]}, "session_id": session})
    text = {"type": "text", "text": envelope["response"]}
    emit({"type": "assistant", "message": {"role": "assistant", "content": [text]}, "session_id": session})
    usage = {
        "input_tokens": tokens["input"],
        "output_tokens": tokens["candidates"],
        "cache_read_input_tokens": tokens.get("cached", 0),
        "cache_creation_input_tokens": tokens.get("cache_creation", 0),
    }
    model_usage = {
        name: {
            "inputTokens": stats["tokens"]["input"],
            "outputTokens": stats["tokens"]["candidates"],
            "cacheReadInputTokens": stats["tokens"].get("cached", 0),
            "cacheCreationInputTokens": stats["tokens"].get("cache_creation", 0),
            "costUSD": 0.01,
        }
        for name, stats in envelope["stats"]["models"].items()
    }
    emit(
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "duration_ms": latency,
            "num_turns": len(envelope["tool_calls"]) + 1,
            "result": envelope["response"],
            "session_id": session,
            "total_cost_usd": 0.01,
            "usage": usage,
            "modelUsage": model_usage,
        }
    )


def gemini(envelope: dict, session: str) -> None:
    model, tokens, latency = usage_of(envelope)
    clock = datetime(2026, 1, 1, tzinfo=UTC)
    emit({"type": "init", "timestamp": clock.isoformat(), "session_id": session, "model": model})
    # The turn's tool time spread over its calls (Gemini CLI's events carry timestamps).
    took = envelope["stats"]["tools"].get("totalDurationMs", 0) // max(len(envelope["tool_calls"]), 1)
    for i, call in enumerate(envelope["tool_calls"]):
        server, sep, tool = call["tool_name"].partition("__")
        raw = f"mcp_{server}_{tool}" if sep else call["tool_name"]
        emit(
            {
                "type": "tool_use",
                "timestamp": clock.isoformat().replace("+00:00", "Z"),
                "tool_name": raw,
                "tool_id": f"call-{i}",
                "parameters": call["parameters"],
            }
        )
        clock += timedelta(milliseconds=took)
        emit(
            {
                "type": "tool_result",
                "timestamp": clock.isoformat().replace("+00:00", "Z"),
                "tool_id": f"call-{i}",
                "status": "success",
                "output": "ok",
            }
        )
    emit({"type": "message", "role": "assistant", "content": envelope["response"], "delta": True})
    stats = {
        "total_tokens": tokens["total"],
        "input_tokens": tokens["input"],
        "output_tokens": tokens["candidates"],
        "cached": tokens.get("cached", 0),
        "duration_ms": latency,
        "tool_calls": len(envelope["tool_calls"]),
    }
    emit({"type": "result", "timestamp": clock.isoformat(), "status": "success", "stats": stats})


def codex(envelope: dict, session: str) -> None:
    _, tokens, _ = usage_of(envelope)
    emit({"type": "thread.started", "thread_id": session})
    emit({"type": "turn.started"})
    for i, call in enumerate(envelope["tool_calls"]):
        server, sep, tool = call["tool_name"].partition("__")
        if sep:
            item = {
                "id": f"item_{i}",
                "type": "mcp_tool_call",
                "server": server,
                "tool": tool,
                "arguments": json.dumps(call["parameters"]),
            }
            done = {**item, "status": "completed", "result": {"content": [{"type": "text", "text": "ok"}]}}
        else:
            item = {"id": f"item_{i}", "type": "command_execution", "command": "true", "status": "in_progress"}
            done = {**item, "status": "completed", "exit_code": 0, "aggregated_output": "ok"}
        emit({"type": "item.started", "item": {**item, "status": "in_progress"}})
        emit({"type": "item.completed", "item": done})
    message = {"id": "item_reply", "type": "agent_message", "text": envelope["response"]}
    emit({"type": "item.completed", "item": message})
    usage = {
        "input_tokens": tokens["input"],
        "cached_input_tokens": tokens.get("cached", 0),
        "output_tokens": tokens["candidates"],
    }
    emit({"type": "turn.completed", "usage": usage})


main()
