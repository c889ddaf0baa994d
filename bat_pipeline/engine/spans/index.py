"""Span files read once into a SpanIndex: by trace, id, parent and conversation, with what
each file held that could not be read."""

from __future__ import annotations

import gc
import itertools
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from bat_pipeline.engine.spans.conventions import AGENT_ROOT, conversation_id
from bat_pipeline.engine.spans.foreign import foreign_lines
from bat_pipeline.engine.spans.lines import MAX_DEPTH, Span, start_order, to_span, too_deep
from bat_pipeline.engine.spans.otlp import OtlpDecodeError, decode_json, is_json_request

_DEEP_LINES_NAMED = 5
MAX_DOCUMENT_CHARS = 256 * 1024 * 1024
"""Largest trace document (a Zipkin or Jaeger export) read whole."""


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
        counted = ((self.malformed, "malformed"), (self.torn, "torn"), (self.duplicates, "duplicate"))
        parts = [f"{count} {what}" for count, what in counted if count]
        message = f"{', '.join(parts)} lines skipped in {self.path}" if parts else ""
        if self.too_deep:
            named = ", ".join(str(n) for n in self.too_deep[:_DEEP_LINES_NAMED])
            more = len(self.too_deep) - _DEEP_LINES_NAMED
            named += f" and {more} more" if more > 0 else ""
            deep = (
                f"line{'s' if len(self.too_deep) > 1 else ''} {named} of {self.path} skipped: "
                f"nested deeper than {MAX_DEPTH} levels"
            )
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
        """A file, or a folder: its span files (`span_files_in`)."""
        p = Path(path)
        return [self.add_file(f) for f in span_files_in(p)] if p.is_dir() else [self.add_file(p)]

    def _read(self, f: TextIO, stats: FileStats) -> None:
        first = f.readline()
        lines: Iterable[str] = itertools.chain([first], f)
        if first.strip() in ("[", "{"):
            # A JSON document over many lines: a Zipkin or Jaeger export, read whole.
            text = first + f.read(MAX_DOCUMENT_CHARS)
            if f.read(1):
                stats.unreadable = f"a JSON document over {MAX_DOCUMENT_CHARS} characters"
                return
            try:
                converted = foreign_lines(json.loads(text))
            except (ValueError, RecursionError):
                converted = None
            if converted is None:
                stats.malformed += 1
                return
            lines = [json.dumps(line) + "\n" for line in converted[0]]
            stats.malformed += converted[1]
        by_id = self.by_span_id
        by_trace = self.by_trace
        children = self.children
        decode = json.JSONDecoder().decode
        seq = self._seq
        for number, line in enumerate(lines, 1):
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
            if type(obj) is dict and is_json_request(obj):
                # An OTLP/JSON request per line (the Collector's file exporter): its spans as lines.
                try:
                    decoded = decode_json(obj)
                except OtlpDecodeError:
                    stats.malformed += 1
                    continue
                stats.malformed += decoded.rejected
                objs: list[Any] | tuple[Any] = decoded.lines
            elif type(obj) is list or (type(obj) is dict and "data" in obj):
                # A Zipkin or Jaeger export on one line.
                converted = foreign_lines(obj)
                if converted is None:
                    stats.malformed += 1
                    continue
                stats.malformed += converted[1]
                objs = converted[0]
            # Counting brackets is cheap and bounds the depth; only lines with many are walked.
            elif line.count("{") + line.count("[") > MAX_DEPTH and too_deep(obj):
                stats.too_deep.append(number)
                continue
            else:
                objs = (obj,)
            for item in objs:
                span = to_span(item, seq)
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
                    conv = conversation_id(span.attributes)
                    if conv is not None:
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


def span_files_in(folder: Path) -> list[Path]:
    """The span files of a folder (SPEC §5: JSON lines, `*.jsonl`; not recursive, hidden
    ones left out), in name order."""
    return sorted(p for p in Path(folder).glob("*.jsonl") if p.is_file())


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
