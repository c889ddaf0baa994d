"""EvalBench's CLI generators (`claude_code`, `gemini_cli`, `codex_cli`) as data: what a
model config asks, the command line of each turn, the files its isolated home holds, and
each CLI's stream output read into EvalBench's envelope (engine.evalbench_harness), with
EvalBench's tool-name canonicalisation (its `tool_naming`: `<server>__<tool>` for MCP
tools, native tools as named). Pure functions; resources.cli_conversations runs them.

Per generator, as EvalBench's source (`evalbench/generators/models/*.py`) does:

- `claude_code`: `claude -p PROMPT --dangerously-skip-permissions --output-format
  stream-json --verbose [--model M] --mcp-config FILE --strict-mcp-config [--resume ID
  --fork-session] [--allowedTools T]…`, HOME `.venv/fake_home_claude`, MCP servers in
  `.claude/mcp_servers.json` (Gemini-style `httpUrl` → `url` + `type: http`), `settings`
  in `.claude/settings.json`, `IS_SANDBOX=1`; run in the fake home;
- `gemini_cli`: `npm exec --yes <gemini_cli_version, default gemini-cli> -- [--resume]
  --yolo --output-format stream-json --prompt PROMPT`, HOME `.venv/fake_home`, MCP servers in `.gemini/settings.json`
  named by GEMINI_CLI_SYSTEM_SETTINGS_PATH; extensions' `settings` join the environment;
- `codex_cli`: `codex exec [resume ID] --json --skip-git-repo-check
  --dangerously-bypass-approvals-and-sandbox [-m M] [--profile P] PROMPT` (or `--sandbox
  MODE --ask-for-approval MODE`), HOME `.venv/fake_home_codex`, CODEX_HOME its `.codex`,
  MCP servers in `.codex/config.toml`; run in the fake home.

For Claude Code and Codex a package spec (`@scope/pkg@1.2`, anything with `/`) runs
through `npm exec --yes SPEC --`, another version string as a command.
MCP servers with `authProviderType: google_credentials` get the bearer token of
GOOGLE_OAUTH_ACCESS_TOKEN (EvalBench runs gcloud for it) and, for Claude Code, a
`headersHelper` that asks gcloud on each connection, as EvalBench's; Gemini CLI reads the
setting itself. Skills and extensions installed from git or npm, plugin marketplaces
(`skills_dir`, a list of `mcp_servers`) and Codex's `setup.config`: refused by name
(`refused_setup`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from bat_pipeline.engine.contracts.evalbench import CliHarness

HARNESSES = ("claude_code", "gemini_cli", "codex_cli")
UNRUN = {
    "agy_cli": "EvalBench installs the Antigravity CLI from the network into its fake home "
    "(curl of antigravity.google/cli/install.sh) and checks it with a probe run; not run by this release",
    "jetski_cli": "EvalBench's own generator registry (get_generator) has no jetski_cli: "
    "EvalBench refuses it too (Unknown Generator)",
}
"""EvalBench generators of its source that this release does not run, and why."""
DEFAULT_CLI = {"claude_code": "claude", "gemini_cli": "gemini-cli", "codex_cli": "codex"}
VERSION_KEY = {
    "claude_code": "claude_code_version",
    "gemini_cli": "gemini_cli_version",
    "codex_cli": "codex_cli_version",
}
FAKE_HOME = {"claude_code": "fake_home_claude", "gemini_cli": "fake_home", "codex_cli": "fake_home_codex"}
"""Each generator's isolated HOME, under `.venv/` of the working directory (EvalBench's)."""
CANONICAL_SEPARATOR = "__"
_GEMINI_MCP = re.compile(r"^mcp_([^_]+)_(.+)$")
_CLAUDE_MCP = "mcp__"


# --- tool names (EvalBench's tool_naming) ----------------------------------------------


def canonical_tool_name(server: str | None, tool: str) -> str:
    """`<server>__<tool>` for an MCP tool, the tool's own name for a native one."""
    return f"{server}{CANONICAL_SEPARATOR}{tool}" if server and tool else tool


def claude_tool_name(name: str) -> str:
    """Claude Code's `mcp__<server>__<tool>` (split at the first `__` after the prefix);
    anything else as it is."""
    if not name.startswith(_CLAUDE_MCP):
        return name
    server, sep, tool = name[len(_CLAUDE_MCP) :].partition(CANONICAL_SEPARATOR)
    return canonical_tool_name(server, tool) if sep and server and tool else name


def gemini_tool_name(name: str) -> str:
    """Gemini CLI's `mcp_<server>_<tool>` (a server name holds no `_`); else as it is."""
    match = _GEMINI_MCP.match(name)
    return canonical_tool_name(match.group(1), match.group(2)) if match else name


# --- the model config -------------------------------------------------------------------


def refused_setup(generator: str, setup: dict[str, Any]) -> str | None:
    """Why a `setup` block cannot be prepared here (it needs the network or gcloud), or None."""
    servers = setup.get("mcp_servers") or {}
    if isinstance(servers, list):
        return "setup.mcp_servers as a list (install_from_repo: a git clone of a plugin marketplace) is not run here"
    if not isinstance(servers, dict):
        return "setup.mcp_servers must map server names to their settings"
    for name, server in servers.items():
        if not isinstance(server, dict):
            return f"setup.mcp_servers.{name} must be a mapping (command/args or httpUrl/url)"
    for key in ("skills", "extensions"):
        if setup.get(key):
            return f"setup.{key} (installed with git or npm from the network) is not run here"
    if setup.get("skills_dir"):
        return "setup.skills_dir (a plugin marketplace installed by the CLI itself) is not run here"
    if setup.get("config"):
        return "setup.config (Codex's extra config.toml keys) is not run here"
    if generator != "claude_code" and setup.get("settings"):
        return f"setup.settings is Claude Code's; {generator} has none"
    return None


def harness_from_config(generator: str, data: dict[str, Any], workdir: Path) -> CliHarness:
    """A model config of one of HARNESSES as what the run needs (ValueError naming the
    field when unusable); `workdir` holds `.venv/<fake home>`."""
    setup = data.get("setup") or {}
    if not isinstance(setup, dict):
        raise ValueError("setup: expected a mapping (mcp_servers, settings)")
    problem = refused_setup(generator, setup)
    if problem:
        raise ValueError(problem)
    env = data.get("env") or {}
    if not isinstance(env, dict):
        raise ValueError("env: expected a mapping of variables")
    allowed = data.get("allowed_tools") or []
    if not isinstance(allowed, list):
        raise ValueError("allowed_tools: expected a list of tool names")
    cli = data.get(VERSION_KEY[generator]) or DEFAULT_CLI[generator]
    return CliHarness(
        generator=generator,
        cli=str(cli),
        model=None if data.get("model") is None else str(data["model"]),
        env={str(k): str(v) for k, v in env.items() if v is not None},
        mcp_servers=dict(setup.get("mcp_servers") or {}),
        settings=dict(setup.get("settings") or {}),
        allowed_tools=[str(t) for t in allowed],
        sandbox_mode=str(data.get("sandbox_mode") or "danger-full-access"),
        approval_mode=str(data.get("approval_mode") or "never"),
        profile=None if data.get("profile") is None else str(data["profile"]),
        json_flag=str(data.get("json_flag") or "--json"),
        use_vertex=bool(data.get("use_vertex")),
        vertex_project_id=None if data.get("vertex_project_id") is None else str(data["vertex_project_id"]),
        vertex_region=None if data.get("vertex_region") is None else str(data["vertex_region"]),
        fake_home=(workdir / ".venv" / FAKE_HOME[generator]).resolve(),
    )


# --- the isolated home ------------------------------------------------------------------


GCLOUD_HEADERS_HELPER = (
    'token="$(gcloud auth application-default print-access-token 2>/dev/null'
    ' || gcloud auth print-access-token 2>/dev/null)" && [ -n "$token" ]'
    ' && printf \'{"Authorization": "Bearer %s"}\' "$token"'
)
"""Claude Code's `headersHelper` for a `google_credentials` server: a fresh token per
connection from gcloud (ADC first), nothing when gcloud has none."""


def _claude_mcp(server: dict[str, Any], token: str | None) -> dict[str, Any]:
    """A Gemini-style MCP server as Claude Code's (`httpUrl` → `url`, `type: http`)."""
    config = dict(server)
    if "command" in config:
        return config
    if "httpUrl" in config and "url" not in config:
        config["url"] = config.pop("httpUrl")
    if "url" in config:
        config.setdefault("type", "http")
    config.pop("oauth", None)
    if config.pop("authProviderType", None) == "google_credentials":
        config.setdefault("headersHelper", GCLOUD_HEADERS_HELPER)
        headers = dict(config.get("headers") or {})
        if token and "Authorization" not in headers:
            headers["Authorization"] = f"Bearer {token}"
        config["headers"] = headers
    return config


def _toml_key(key: str) -> str:
    return key if key and all(c.isalnum() or c in "_-" for c in key) else json.dumps(key)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_toml_key(str(k))} = {_toml_value(v)}" for k, v in value.items()) + " }"
    return json.dumps(str(value))


def _codex_mcp(server: dict[str, Any], token: str | None) -> dict[str, Any]:
    if "command" in server:
        return {k: server[k] for k in ("command", "args", "env", "cwd") if k in server}
    out: dict[str, Any] = {"url": server.get("url") or server.get("httpUrl")}
    headers = dict(server.get("headers") or {})
    if server.get("authProviderType") == "google_credentials" and token and "Authorization" not in headers:
        headers["Authorization"] = f"Bearer {token}"
    if headers:
        out["http_headers"] = headers
    return out


def home_files(harness: CliHarness, token: str | None = None, openai_key: str | None = None) -> dict[Path, str]:
    """The files written into the fake home before the first turn, by absolute path;
    `token`: the Google access token for `google_credentials` MCP servers, if any;
    `openai_key`: Codex's API key, kept in its `auth.json` as `codex login --api-key` does."""
    home = harness.fake_home
    if harness.generator == "claude_code":
        servers = {name: _claude_mcp(s, token) for name, s in harness.mcp_servers.items()}
        files = {mcp_config_path(harness): json.dumps({"mcpServers": servers}, indent=2)}
        if harness.settings:
            files[home / ".claude" / "settings.json"] = json.dumps(harness.settings, indent=2)
        return files
    if harness.generator == "gemini_cli":
        return {home / ".gemini" / "settings.json": json.dumps({"mcpServers": harness.mcp_servers}, indent=2)}
    lines = ['forced_login_method = "api"', ""]
    for name, server in harness.mcp_servers.items():
        lines.append(f"[mcp_servers.{_toml_key(name)}]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in _codex_mcp(server, token).items() if v is not None]
        lines.append("")
    files = {home / ".codex" / "config.toml": "\n".join(lines).rstrip() + "\n"}
    if openai_key:
        files[home / ".codex" / "auth.json"] = json.dumps({"auth_mode": "apikey", "OPENAI_API_KEY": openai_key})
    return files


def mcp_config_path(harness: CliHarness) -> Path:
    """Claude Code's `--mcp-config` file (`mcp_empty.json` without servers, as EvalBench)."""
    name = "mcp_servers.json" if harness.mcp_servers else "mcp_empty.json"
    return harness.fake_home / ".claude" / name


def environment(harness: CliHarness, shell: Mapping[str, str]) -> dict[str, str]:
    """What the model config's environment becomes for the CLI, given the shell's: HOME
    the fake home, and per generator what EvalBench's sets (Claude Code: IS_SANDBOX, an
    API key or Vertex AI, a `<placeholder>` key ignored; Gemini CLI: its settings file and
    the real home's gcloud config; Codex: CODEX_HOME)."""
    env = {**harness.env, "HOME": str(harness.fake_home)}
    real_home = Path(shell.get("HOME") or "~").expanduser()
    if harness.generator == "claude_code":
        env["IS_SANDBOX"] = "1"
        key = env.get("ANTHROPIC_API_KEY") or shell.get("ANTHROPIC_API_KEY")
        if key and key.strip().startswith("<"):
            env.pop("ANTHROPIC_API_KEY", None)
            key = None
        if key:
            env["ANTHROPIC_API_KEY"] = key
            env.pop("CLAUDE_CODE_USE_VERTEX", None)
        elif harness.use_vertex:
            env["CLAUDE_CODE_USE_VERTEX"] = "1"
            for variable, given in (
                ("ANTHROPIC_VERTEX_PROJECT_ID", harness.vertex_project_id),
                ("CLOUD_ML_REGION", harness.vertex_region),
            ):
                value = given or env.get(variable) or shell.get(variable)
                if value:
                    env[variable] = value
    elif harness.generator == "gemini_cli":
        env["GEMINI_CLI_SYSTEM_SETTINGS_PATH"] = str(harness.fake_home / ".gemini" / "settings.json")
        adc = real_home / ".config" / "gcloud" / "application_default_credentials.json"
        if "GOOGLE_APPLICATION_CREDENTIALS" not in env and shell.get("HOME") and adc.is_file():
            env["GOOGLE_APPLICATION_CREDENTIALS"] = str(adc)
        env.setdefault("CLOUDSDK_CONFIG", str(real_home / ".config" / "gcloud"))
    else:
        env["CODEX_HOME"] = str(harness.fake_home / ".codex")
        key = env.get("OPENAI_API_KEY") or shell.get("OPENAI_API_KEY")
        if key:
            env["OPENAI_API_KEY"] = key
    return env


def workdir(harness: CliHarness) -> Path | None:
    """Where the CLI runs: the fake home for Claude Code and Codex; None (the working
    directory) for Gemini CLI."""
    return None if harness.generator == "gemini_cli" else harness.fake_home


# --- the command of one turn --------------------------------------------------------------


def _base(cli: str, *, npm: bool) -> list[str]:
    return ["npm", "exec", "--yes", cli, "--"] if npm else [cli]


def command(harness: CliHarness, prompt: str, *, resume: bool, session_id: str | None) -> list[str]:
    """The argv of one turn: the first (`resume` False) or a later one, continuing
    `session_id` (the session id the previous turn's output named)."""
    cli = harness.cli
    package = cli.startswith("@") or "/" in cli
    if harness.generator == "claude_code":
        argv = _base(cli, npm=package)
        argv += ["-p", prompt, "--dangerously-skip-permissions", "--output-format", "stream-json", "--verbose"]
        if harness.model:
            argv += ["--model", harness.model]
        argv += ["--mcp-config", str(mcp_config_path(harness)), "--strict-mcp-config"]
        if resume and session_id:
            argv += ["--resume", session_id, "--fork-session"]
        for tool in harness.allowed_tools:
            argv += ["--allowedTools", tool]
        return argv
    if harness.generator == "gemini_cli":
        argv = _base(cli, npm=True)  # gemini_cli.py always runs `npm exec --yes <version> --`
        if resume:
            argv.append("--resume")
        return [*argv, "--yolo", "--output-format", "stream-json", "--prompt", prompt]
    argv = _base(cli, npm=package)
    argv += ["exec", "resume", session_id] if resume and session_id else ["exec"]
    argv += [harness.json_flag, "--skip-git-repo-check"]
    if harness.sandbox_mode == "danger-full-access":
        argv.append("--dangerously-bypass-approvals-and-sandbox")
    else:
        argv += ["--sandbox", harness.sandbox_mode]
        if harness.approval_mode:
            argv += ["--ask-for-approval", harness.approval_mode]
    if harness.model:
        argv += ["-m", harness.model]
    if harness.profile:
        argv += ["--profile", harness.profile]
    return [*argv, prompt]


# --- stream output into EvalBench's envelope ---------------------------------------------


def _events(stream: str) -> Iterable[dict[str, Any]]:
    for line in stream.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            yield event


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _number(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def _model_stats(tokens_in: int, tokens_out: int, cached: int, latency_ms: int, **extra: Any) -> dict[str, Any]:
    tokens = {
        "input": tokens_in,
        "prompt": tokens_in,
        "candidates": tokens_out,
        "total": tokens_in + tokens_out,
        "cached": cached,
        "thoughts": 0,
        "tool": 0,
    }
    api = {"totalRequests": 1, "totalErrors": 0, "totalLatencyMs": latency_ms}
    return {
        "api": api,
        "tokens": {**tokens, **extra.pop("tokens_extra", {})},
        **extra,
        "roles": {"main": {**api, "tokens": tokens}},
    }


def _tool_stats(calls: list[dict[str, Any]], durations: dict[str, int]) -> dict[str, Any]:
    by_name: dict[str, dict[str, Any]] = {}
    for call in calls:
        bucket = by_name.setdefault(
            call["tool_name"],
            {"count": 0, "success": 0, "fail": 0, "durationMs": 0, "parameters": [], "decisions": _decisions(0)},
        )
        bucket["count"] += 1
        bucket["parameters"].append(call.get("parameters", {}))
        bucket["durationMs"] += durations.get(call["tool_id"], 0)
        bucket["decisions"]["accept"] += 1
        bucket["decisions"]["auto_accept"] += 1
        if call.get("status") == "success":
            bucket["success"] += 1
        elif call.get("status") is not None:
            bucket["fail"] += 1
    return {
        "totalCalls": len(calls),
        "totalSuccess": sum(1 for c in calls if c.get("status") == "success"),
        "totalFail": sum(1 for c in calls if c.get("status") != "success"),
        "totalDurationMs": sum(durations.get(c["tool_id"], 0) for c in calls),
        "decisions": _decisions(len(calls)),
        "byName": by_name,
    }


def _decisions(n: int) -> dict[str, int]:
    return {"accept": n, "reject": 0, "modify": 0, "auto_accept": n}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join((b.get("text") or "") if isinstance(b, dict) else str(b) for b in content)
    return "" if content is None else str(content)


def claude_envelope(stream: str, model: str | None = None) -> dict[str, Any]:
    """Claude Code's `--output-format stream-json` (`system`, `assistant` text and
    tool_use blocks, `user` tool_result blocks, `result` with usage) as the envelope."""
    out: dict[str, Any] = {"session_id": "", "response": "", "stats": {}, "tool_calls": []}
    calls: dict[str, dict[str, Any]] = {}
    model_name = model or "unknown"

    def result_of(tool_id: Any, is_error: Any, content: Any) -> None:
        if tool_id in calls:
            calls[tool_id]["status"] = "error" if is_error else "success"
            calls[tool_id]["response"] = _text(content)

    for event in _events(stream):
        kind = event.get("type")
        message = _dict(event.get("message"))
        if kind == "system":
            out["session_id"] = event.get("session_id", "") or out["session_id"]
            model_name = event.get("model") or model_name
        elif kind == "assistant":
            for block in message.get("content") or []:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text":
                    out["response"] += block.get("text", "")
                elif block.get("type") == "tool_use" and block.get("id"):
                    calls[block["id"]] = {
                        "tool_id": block["id"],
                        "tool_name": claude_tool_name(str(block.get("name") or "unknown")),
                        "parameters": block.get("input", {}),
                        "status": None,
                        "response": None,
                    }
        elif kind == "tool_result":
            result_of(event.get("tool_use_id") or event.get("id"), event.get("is_error"), event.get("content"))
        elif kind == "user":
            for block in message.get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    result_of(block.get("tool_use_id") or block.get("id"), block.get("is_error"), block.get("content"))
        elif kind == "result":
            out["session_id"] = event.get("session_id") or out["session_id"]
            usage = _dict(event.get("usage"))
            latency = _number(event.get("duration_ms"))
            per_model = _dict(event.get("modelUsage"))
            if per_model:
                models = {
                    name: _model_stats(
                        _number(m.get("inputTokens")),
                        _number(m.get("outputTokens")),
                        _number(m.get("cacheReadInputTokens")),
                        latency,
                        tokens_extra={"cache_creation": _number(m.get("cacheCreationInputTokens"))},
                        cost_usd=m.get("costUSD", 0),
                    )
                    for name, m in per_model.items()
                    if isinstance(m, dict)
                }
            else:
                models = {
                    model_name: _model_stats(
                        _number(usage.get("input_tokens")),
                        _number(usage.get("output_tokens")),
                        _number(usage.get("cache_read_input_tokens")),
                        latency,
                        tokens_extra={"cache_creation": _number(usage.get("cache_creation_input_tokens"))},
                        cost_usd=event.get("total_cost_usd", 0),
                    )
                }
            out["stats"]["models"] = models
            out["stats"]["tools"] = _tool_stats(list(calls.values()), {})
            if not out["response"] and event.get("result"):
                out["response"] = str(event["result"])
    out["tool_calls"] = list(calls.values())
    return out


def _ms_between(start: Any, end: Any) -> int:
    try:
        first = datetime.fromisoformat(str(start).replace("Z", "+00:00"))
        last = datetime.fromisoformat(str(end).replace("Z", "+00:00"))
    except ValueError:
        return 0
    return int((last - first).total_seconds() * 1000)


def gemini_envelope(stream: str, model: str | None = None) -> dict[str, Any]:
    """Gemini CLI's `--output-format stream-json` (`init`, `message`, `tool_use`,
    `tool_result`, `result` with stats) as the envelope; tool durations from the events'
    timestamps."""
    out: dict[str, Any] = {"session_id": "", "response": "", "stats": {}, "tool_calls": []}
    uses: dict[str, dict[str, Any]] = {}
    results: dict[str, dict[str, Any]] = {}
    model_name = model or "gemini-2.5-flash"
    for event in _events(stream):
        kind = event.get("type")
        if kind == "init":
            out["session_id"] = event.get("session_id", "")
            model_name = event.get("model") or model_name
        elif kind == "message" and event.get("role") == "assistant":
            out["response"] += str(event.get("content") or "")
        elif kind == "tool_use" and event.get("tool_id"):
            uses[str(event["tool_id"])] = event
        elif kind == "tool_result" and event.get("tool_id"):
            results[str(event["tool_id"])] = event
        elif kind == "result":
            stats = _dict(event.get("stats"))
            out["stats"]["models"] = {
                model_name: _model_stats(
                    _number(stats.get("input_tokens")),
                    _number(stats.get("output_tokens")),
                    _number(stats.get("cached")),
                    _number(stats.get("duration_ms")),
                )
            }
            if stats.get("total_tokens") is not None:
                out["stats"]["models"][model_name]["tokens"]["total"] = _number(stats["total_tokens"])
    calls, durations = [], {}
    for tool_id, use in uses.items():
        result = results.get(tool_id)
        status = None if result is None else ("success" if result.get("status") == "success" else "error")
        calls.append(
            {
                "tool_id": tool_id,
                "tool_name": gemini_tool_name(str(use.get("tool_name") or "unknown")),
                "parameters": use.get("parameters", {}),
                "status": status,
                "response": None if result is None else _text(result.get("output")),
            }
        )
        if result is not None:
            durations[tool_id] = _ms_between(use.get("timestamp"), result.get("timestamp"))
    if "models" in out["stats"]:
        out["stats"]["tools"] = _tool_stats(calls, durations)
    out["tool_calls"] = calls
    return out


_CODEX_TOOL_KINDS = ("mcp_tool_call", "command_execution", "web_search", "file_change")


def codex_envelope(
    stream: str, model: str | None = None, duration_ms: int = 0, tool_durations: dict[str, int] | None = None
) -> dict[str, Any]:
    """Codex's `exec --json` ThreadEvents (`thread.started`, `item.*` of agent messages
    and tool items, `turn.completed` usage, `error`) as the envelope; `duration_ms` the
    process's wall time, `tool_durations` per item id (Codex's events carry no times:
    the caller stamps their arrival)."""
    out: dict[str, Any] = {"session_id": "", "response": "", "stats": {}, "tool_calls": []}
    calls: dict[str, dict[str, Any]] = {}
    usage: dict[str, Any] = {}
    for event in _events(stream):
        kind = event.get("type", "")
        if kind == "thread.started":
            out["session_id"] = event.get("thread_id", "") or out["session_id"]
            continue
        if kind == "turn.completed":
            usage = _dict(event.get("usage")) or usage
            continue
        if kind == "error":
            if event.get("message"):
                out["response"] += ("\n" if out["response"] else "") + f"[error] {event['message']}"
            continue
        if kind not in ("item.started", "item.updated", "item.completed"):
            continue
        item = _dict(event.get("item"))
        details = _dict(item.get("details"))
        payload = details if details.get("type") else item
        item_kind = item.get("type") or item.get("item_type") or details.get("type") or ""
        item_id = str(item.get("id") or payload.get("id") or "")
        done = kind == "item.completed"
        if item_kind == "agent_message":
            if done and payload.get("text"):
                out["response"] += str(payload["text"])
            continue
        if item_kind not in _CODEX_TOOL_KINDS or not item_id:
            continue
        if item_kind == "mcp_tool_call":
            name = canonical_tool_name(str(payload.get("server") or ""), str(payload.get("tool") or "unknown"))
            params = _coerce_json(payload.get("arguments", {}))
        elif item_kind == "command_execution":
            name, params = "shell", {"command": payload.get("command", "")}
        elif item_kind == "web_search":
            name, params = "web_search", {"query": payload.get("query", "")}
        else:
            name, params = "file_change", {"changes": payload.get("changes", [])}
        call = calls.setdefault(
            item_id, {"tool_id": item_id, "tool_name": name, "parameters": params, "status": None, "response": None}
        )
        call["parameters"] = params
        if done:
            status = str(payload.get("status") or "")
            if item_kind == "mcp_tool_call":
                failed = bool(payload.get("error")) or status not in ("", "completed", "success", "ok")
                call["response"] = payload.get("result", "")
            elif item_kind == "command_execution":
                failed = bool(payload.get("exit_code"))
                call["response"] = payload.get("aggregated_output", "")
            elif item_kind == "file_change":
                failed = status not in ("", "completed", "success", "ok")
                call["response"] = ""
            else:
                failed = False
                call["response"] = ""
            call["status"] = "error" if failed else "success"
    tokens_in, tokens_out = _number(usage.get("input_tokens")), _number(usage.get("output_tokens"))
    out["stats"]["models"] = {
        model or "unknown": _model_stats(
            tokens_in,
            tokens_out,
            _number(usage.get("cached_input_tokens")),
            duration_ms,
            tokens_extra={"cache_creation": 0},
            cost_usd=0.0,
        )
    }
    out["stats"]["tools"] = _tool_stats(list(calls.values()), tool_durations or {})
    out["tool_calls"] = list(calls.values())
    return out


def _coerce_json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return {"raw": value}
    return value or {}


def envelope(
    harness: CliHarness, stdout: str, duration_ms: int = 0, tool_durations: dict[str, int] | None = None
) -> dict[str, Any]:
    """One turn's stream output as EvalBench's envelope, per generator."""
    if harness.generator == "claude_code":
        return claude_envelope(stdout, harness.model)
    if harness.generator == "gemini_cli":
        return gemini_envelope(stdout, harness.model)
    return codex_envelope(stdout, harness.model, duration_ms, tool_durations)
