"""Span JSON-lines files read once into an index (SPEC §5).

One line per span: `name, kind, trace_id, span_id, parent_span_id, start_time, end_time,
attributes, status, status_description, events`. Files are appended to by a live agent,
so a line can be torn (the agent was killed mid-write), blank, garbage, or nested deeper
than any span is (MAX_DEPTH); such lines are skipped and counted per file, never raised.
`wait_until_quiet` waits for a live writer to finish before the files are read.

The index keeps, for every span, its ids, name, kind, times and failure reason; the
attributes only of spans that can become a step or a root (model, tool, agent calls,
failed spans): the LangGraph chain spans that make up most of the bytes are kept as
skeletons, enough for parent links and graph node names.
"""

from __future__ import annotations

import gc
import json
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable

INVOKE_AGENT = "invoke_agent"
_TRACEBACK = "Traceback (most recent call last)"
# An all-zero parent id is OpenTelemetry's "invalid span id": no parent.
_NO_PARENT = {"", "0000000000000000", "0x0000000000000000"}
_NO_ATTRIBUTES: Mapping[str, Any] = MappingProxyType({})

MAX_DEPTH = 64
"""Deepest nesting of arrays and objects accepted in a span line or in JSON text inside an
attribute. A span is about 4 levels deep; far deeper input would make the recursive code
downstream (verdict matching, JSON and pydantic serialisers) raise RecursionError."""
_DEEP_LINES_NAMED = 5


MODEL, TOOL, AGENT_CALL, AGENT_ROOT = "model", "tool", "agent_call", "agent_root"
_ROLES = {"LLM": MODEL, "TOOL": TOOL}


class Span:
    """One span, as much of it as building trajectories needs."""

    __slots__ = ("name", "kind", "trace_id", "span_id", "parent_id", "start", "end",
                 "error", "attributes", "seq", "role")

    def __init__(self, name: str, kind: str, trace_id: str, span_id: str, parent_id: str | None,
                 start: int, end: int, error: str | None, attributes: Mapping[str, Any], seq: int,
                 role: str | None):
        self.name = name
        self.kind = kind
        """INTERNAL | SERVER | CLIENT | PRODUCER | CONSUMER."""
        self.trace_id = trace_id
        self.span_id = span_id
        self.parent_id = parent_id
        """None at a root."""
        self.start = start
        """Unix ns."""
        self.end = end
        self.error = error
        """Why it failed (exception type and message, or the status description); None
        unless its status is ERROR."""
        self.attributes = attributes
        """Empty for spans that can be neither a step nor a root (see the module doc)."""
        self.seq = seq
        """Read order across all files: breaks ties between equal start times."""
        self.role = role
        """MODEL (openinference LLM), TOOL, AGENT_CALL (CLIENT invoke_agent), AGENT_ROOT
        (any other invoke_agent span), or None."""

    @property
    def failed(self) -> bool:
        return self.error is not None

    @property
    def is_agent_call(self) -> bool:
        return self.role == AGENT_CALL

    @property
    def is_agent_root_kind(self) -> bool:
        """A non-CLIENT invoke_agent span: the request an agent served, when it has no parent."""
        return self.role == AGENT_ROOT

    def __repr__(self) -> str:
        return f"Span({self.name!r}, {self.span_id}, parent={self.parent_id})"


@dataclass
class FileStats:
    """What reading one span file found."""

    path: str
    spans: int = 0
    blank: int = 0
    malformed: int = 0
    """Lines skipped: not JSON, not an object, missing ids or fields of the wrong type."""
    torn: int = 0
    """A last line cut mid-write (0 or 1), skipped."""
    duplicates: int = 0
    """Spans skipped because a span with the same id was already read."""
    too_deep: list[int] = field(default_factory=list)
    """Line numbers (1-based) of lines skipped for nesting deeper than MAX_DEPTH."""
    missing: bool = False
    """The path did not exist."""
    unreadable: str | None = None
    """Why the file could not be opened (a folder, no permission...)."""

    @property
    def skipped(self) -> int:
        return self.malformed + self.torn + self.duplicates + len(self.too_deep)

    def message(self) -> str | None:
        """One line for the log when something was skipped or the file was missing."""
        if self.missing:
            return f"span file not found: {self.path}"
        if self.unreadable:
            return f"span file not readable: {self.path} ({self.unreadable})"
        if not self.skipped:
            return None
        parts = []
        if self.malformed:
            parts.append(f"{self.malformed} malformed")
        if self.torn:
            parts.append(f"{self.torn} torn")
        if self.duplicates:
            parts.append(f"{self.duplicates} duplicate")
        message = f"{', '.join(parts)} lines skipped in {self.path}" if parts else ""
        if self.too_deep:
            named = ", ".join(str(n) for n in self.too_deep[:_DEEP_LINES_NAMED])
            more = len(self.too_deep) - _DEEP_LINES_NAMED
            named += f" and {more} more" if more > 0 else ""
            deep = (f"line{'s' if len(self.too_deep) > 1 else ''} {named} of {self.path} skipped: "
                    f"nested deeper than {MAX_DEPTH} levels")
            message = f"{message}; {deep}" if message else deep
        return message


class SpanIndex:
    """Spans of one or more files, indexed by trace, id, parent and conversation.

    Read every file once (`load_spans` or `add_file`); lookups never re-scan the spans.
    """

    def __init__(self) -> None:
        self.by_span_id: dict[str, Span] = {}
        self.by_trace: dict[str, list[Span]] = {}
        """In read order."""
        self.children: dict[str, list[Span]] = {}
        """Parent span id → its children, in read order."""
        self._roots: dict[str, list[Span]] = {}
        self._roots_sorted = True
        self.files: list[FileStats] = []
        self._seen_files: set[Path] = set()
        self._seq = 0
        self.cache: dict[str, object] = {}
        """Per-trace results of the trajectory builder; cleared when a file is added."""

    def add_file(self, path: str | Path) -> FileStats:
        """Read one JSON-lines file. Never raises: bad lines are skipped and counted, a
        missing or unreadable file is noted in its stats. A file already read is skipped."""
        p = Path(path)
        stats = FileStats(str(p))
        try:
            key = p.resolve()
        except OSError:
            key = p
        if key in self._seen_files:
            return stats
        self._seen_files.add(key)
        self.files.append(stats)
        self.cache.clear()
        try:
            # errors="replace": a line with broken UTF-8 fails to parse alone, not the file.
            f = open(p, encoding="utf-8", errors="replace")
        except FileNotFoundError:
            stats.missing = True
            return stats
        except OSError as e:
            stats.unreadable = f"{type(e).__name__}: {e.strerror or e}"
            return stats
        # CPython's cyclic GC rescans every live container each time enough objects are
        # allocated; while bulk-loading hundreds of thousands of span dicts that costs
        # more than the parsing itself, and spans form no reference cycles.
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            with f:
                self._read(f, stats)
        finally:
            if gc_was_enabled:
                gc.enable()
        return stats

    def add_path(self, path: str | Path) -> list[FileStats]:
        """A file, or a folder: every `*.jsonl` in it (not recursive), in name order."""
        p = Path(path)
        if p.is_dir():
            return [self.add_file(c) for c in sorted(p.glob("*.jsonl")) if c.is_file()]
        return [self.add_file(p)]

    def _read(self, f, stats: FileStats) -> None:
        by_id = self.by_span_id
        by_trace = self.by_trace
        children = self.children
        decode = json.JSONDecoder().decode
        seq = self._seq
        for number, line in enumerate(f, 1):
            try:
                obj = decode(line)
            except RecursionError:
                stats.too_deep.append(number)
                continue
            except ValueError:
                if not line.strip():
                    stats.blank += 1
                # Only the file's last line can lack its newline: a torn write.
                elif line.endswith("\n"):
                    stats.malformed += 1
                else:
                    stats.torn += 1
                continue
            # Counting brackets is cheap and bounds the depth; only lines with many are walked.
            if line.count("{") + line.count("[") > MAX_DEPTH and too_deep(obj):
                stats.too_deep.append(number)
                continue
            span = _to_span(obj, seq)
            if span is None:
                stats.malformed += 1
                continue
            seq += 1
            sid = span.span_id
            if sid in by_id:
                stats.duplicates += 1
                continue
            by_id[sid] = span
            trace = by_trace.get(span.trace_id)
            if trace is None:
                by_trace[span.trace_id] = [span]
            else:
                trace.append(span)
            parent = span.parent_id
            if parent is not None:
                sibs = children.get(parent)
                if sibs is None:
                    children[parent] = [span]
                else:
                    sibs.append(span)
            elif span.role == AGENT_ROOT:
                conv = span.attributes.get("gen_ai.conversation.id")
                if isinstance(conv, str):
                    self._roots.setdefault(conv, []).append(span)
                    self._roots_sorted = False
        stats.spans = seq - self._seq - stats.duplicates
        self._seq = seq

    def conversation_roots(self, conversation_id: str) -> list[Span]:
        """Roots (non-CLIENT invoke_agent spans without parent) of a conversation, by start."""
        if not self._roots_sorted:
            for roots in self._roots.values():
                roots.sort(key=start_order)
            self._roots_sorted = True
        return self._roots.get(conversation_id, [])

    def conversations(self) -> list[str]:
        return list(self._roots)

    def trace(self, trace_id: str) -> list[Span]:
        return self.by_trace.get(trace_id, [])

    def children_of(self, span_id: str) -> list[Span]:
        return self.children.get(span_id, [])

    def messages(self) -> list[str]:
        """Log lines for files that were missing or had lines skipped."""
        return [m for m in (s.message() for s in self.files) if m]

    def __len__(self) -> int:
        return len(self.by_span_id)


def load_spans(paths: Iterable[str | Path]) -> SpanIndex:
    """Index span files and folders (a folder means every `*.jsonl` in it).

    The same file given twice (e.g. the agent's file also listed in `extra_spans`) is
    read once. Missing or unreadable paths are noted in `index.files` (see
    `index.messages()`), not raised.
    """
    index = SpanIndex()
    for p in paths:
        index.add_path(p)
    return index


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """True when arrays/objects nest deeper than `limit` (walked without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if type(item) is dict:
            children = item.values()
        elif type(item) is list:
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if type(child) in (dict, list))
    return False


def parse_json_text(text: str) -> Any:
    """JSON text inside an attribute, decoded; ValueError when it is not JSON or nests
    deeper than MAX_DEPTH (the caller keeps the text)."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deep") from None
    if type(value) in (dict, list) and too_deep(value):
        raise ValueError("JSON nested too deep")
    return value


def wait_until_quiet(paths: Iterable[str | Path], *, settle_s: float, wait_s: float, since: float = 0.0,
                     clock: Callable[[], float] = time.time,
                     sleep: Callable[[float], None] = time.sleep) -> tuple[float, bool]:
    """Wait until no span file changed for `settle_s`, at most `wait_s`: (seconds waited,
    whether the files were quiet).

    A writer may still be flushing (a called agent, an agent that keeps running at
    `agent.url`, an exporter that batches). Files (and the `*.jsonl` of folders) are
    polled for size and modification time; the quiet time counts from their last change,
    or from `since` (unix time the writer last had spans to write, e.g. the end of the
    conversations) when that is later: an exporter may hold spans without touching the
    file. Files last changed, and `since`, more than `settle_s` ago cost no wait at all.
    A missing file does not hold the wait: a called agent may never write one."""
    paths = [Path(p) for p in paths]
    start = clock()

    def look() -> tuple[dict[Path, tuple[int, int]], float]:
        seen: dict[Path, tuple[int, int]] = {}
        newest = 0.0
        for path in paths:
            files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
            for file in files:
                try:
                    stat = os.stat(file)
                except OSError:
                    continue
                seen[file] = (stat.st_size, stat.st_mtime_ns)
                newest = max(newest, stat.st_mtime_ns / 1e9)
        return seen, newest

    state, newest = look()
    quiet_since = max(newest, since)
    while True:
        now = clock()
        if now - quiet_since >= settle_s:
            return now - start, True
        if now - start >= wait_s:
            return now - start, False
        sleep(min(settle_s / 4 or 0.05, 0.1, max(wait_s - (now - start), 0.0)))
        current, newest = look()
        if current != state:
            state, quiet_since = current, max(clock(), newest)


def start_order(span: Span) -> tuple[int, int]:
    """Sort key: start time, then read order."""
    return (span.start, span.seq)


def _to_span(obj: Any, seq: int) -> Span | None:
    """A Span from one decoded line, or None when the line is not a usable span."""
    try:
        trace_id = obj["trace_id"]
        span_id = obj["span_id"]
        parent = obj["parent_span_id"]
        name = obj["name"]
        kind = obj["kind"]
        attrs = obj["attributes"]
        start = obj["start_time"]
        end = obj["end_time"]
        status = obj["status"]
    except (KeyError, TypeError, IndexError):
        full = _with_defaults(obj)
        return None if full is None else _to_span(full, seq)
    if type(trace_id) is not str or type(span_id) is not str or not trace_id or not span_id:
        return None
    if parent is not None:
        if type(parent) is not str:
            return None
        if parent in _NO_PARENT:
            parent = None
    if attrs is None:
        attrs = {}
    if type(name) is not str or type(kind) is not str or type(attrs) is not dict:
        return None
    if type(start) is not int:
        start = _ns(start)
    if type(end) is not int:
        end = _ns(end)
    if start is None or end is None:
        return None
    error = None
    if status is not None and status != "OK" and status != "UNSET":
        description = obj.get("status_description")
        if type(status) is dict:
            description = status.get("description", description)
            status = status.get("status_code")
        if status == "ERROR" or status == "StatusCode.ERROR":
            error = failure_reason(obj.get("events"), description)
    span_kind = attrs.get("openinference.span.kind")
    role = _ROLES.get(span_kind) if type(span_kind) is str else None
    if role is None and attrs.get("gen_ai.operation.name") == INVOKE_AGENT:
        role = AGENT_CALL if kind == "CLIENT" else AGENT_ROOT
    if role is None and error is None:
        attrs = _NO_ATTRIBUTES
    return Span(name, kind, trace_id, span_id, parent, start, end, error, attrs, seq, role)


def _with_defaults(obj: Any) -> dict | None:
    """A line missing optional fields, or in the OpenTelemetry SDK's own `Span.to_json()`
    shape (ids under `context`, `parent_id`, `SpanKind.X`), as a complete SPEC §5 dict."""
    if type(obj) is not dict:
        return None
    full = dict(obj)
    ctx = obj.get("context")
    if "trace_id" not in obj and isinstance(ctx, dict):
        full["trace_id"], full["span_id"] = ctx.get("trace_id"), ctx.get("span_id")
        full["parent_span_id"] = obj.get("parent_id")
    kind = full.get("kind")
    if isinstance(kind, str) and kind.startswith("SpanKind."):
        full["kind"] = kind[9:]
    for key, default in (("trace_id", None), ("span_id", None), ("parent_span_id", None), ("name", ""),
                         ("kind", "INTERNAL"), ("attributes", None), ("start_time", None),
                         ("end_time", None), ("status", None)):
        full.setdefault(key, default)
    if full["trace_id"] is None or full["span_id"] is None:
        return None
    return full


def _ns(value: object) -> int | None:
    """Unix ns from an int, a float, a digit string or an ISO-8601 string; 0 when absent."""
    if value is None:
        return 0
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    if isinstance(value, str):
        if value.isdigit():
            return int(value)
        try:
            dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return int(dt.timestamp()) * 1_000_000_000 + dt.microsecond * 1000
    return None


def failure_reason(events: object, description: object) -> str:
    """`exception.type: exception.message` of the last exception event, else the status
    description up to any traceback, else "failed"."""
    if isinstance(events, list):
        for event in reversed(events):
            if not isinstance(event, dict) or event.get("name") != "exception":
                continue
            attrs = event.get("attributes")
            if not isinstance(attrs, dict):
                continue
            etype = attrs.get("exception.type")
            message = attrs.get("exception.message")
            parts = [str(x) for x in (etype, message) if x not in (None, "")]
            if parts:
                return ": ".join(parts)
    if isinstance(description, str):
        cut = description.split(_TRACEBACK, 1)[0].strip()
        if cut:
            return cut
    return "failed"
