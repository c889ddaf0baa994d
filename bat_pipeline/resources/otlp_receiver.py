"""An OTLP/HTTP trace receiver for one partition's agent: `POST /v1/traces` on 127.0.0.1,
protobuf or JSON, gzip or not, each request's spans appended to the partition's span file
as SPEC §5 lines the moment they arrive (engine.spans.otlp decodes them).

Answers as the OTLP/HTTP specification says: 200 with an `ExportTraceServiceResponse`
(`partial_success` naming the spans refused: invalid ids, or the span file full), 400 for a
body that is no trace request, 413 for a body over the request bound, 415 for another
content type, 404/405 elsewhere; a 4xx carries a `google.rpc.Status`. Each connection is
served on its own thread and dropped after `read_timeout_s` without a byte, so a slow
client holds only itself; what was appended before stays.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from google.rpc.status_pb2 import Status

from bat_pipeline.engine.spans.otlp import JSON, PROTOBUF, OtlpDecodeError, decode_request, response_body
from bat_pipeline.resources.ports import LOOPBACK, free_port, release
from bat_pipeline.resources.process_group import prepare_child, stop_process_group

TRACES_PATH = "/v1/traces"
MAX_REQUEST_BYTES = 16 * 1024 * 1024
"""Largest request body, compressed or not (the SDK exporters send batches of 512 spans)."""
MAX_FILE_BYTES = 1024 * 1024 * 1024
"""Largest span file the receiver writes; spans past it are refused (partial success)."""
READ_TIMEOUT_S = 10.0
MAX_CONNECTIONS = 32
"""Connections served at once; one more is answered 503 (OTLP: retry later) and closed."""


class OtlpReceiver:
    """Started with `start()` (or as a context manager), stopped with `stop()`."""

    def __init__(
        self,
        spans_file: Path,
        *,
        max_request_bytes: int = MAX_REQUEST_BYTES,
        max_file_bytes: int = MAX_FILE_BYTES,
        max_connections: int = MAX_CONNECTIONS,
        read_timeout_s: float = READ_TIMEOUT_S,
        log: Callable[[str], None] | None = None,
    ):
        self.spans_file = Path(spans_file)
        self.max_request_bytes = max_request_bytes
        self.max_file_bytes = max_file_bytes
        self.read_timeout_s = read_timeout_s
        self.max_connections = max_connections
        self.log = log or (lambda message: None)
        self.port: int | None = None
        self.spans_written = 0
        self.spans_rejected = 0
        self.requests_refused: dict[int, int] = {}
        """HTTP status → requests answered with it (4xx)."""
        self.last_received = 0.0
        """Unix time spans were last appended (0: never)."""
        self._changed = threading.Condition()
        self._arrivals = 0
        """Requests whose spans were appended, for `wait_until`."""
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def endpoint(self) -> str:
        """The base URL (`OTEL_EXPORTER_OTLP_ENDPOINT`); exporters add `/v1/traces`."""
        assert self.port is not None, "the receiver is not started"
        return f"http://{LOOPBACK}:{self.port}"

    def environment(self) -> dict[str, str]:
        """The variables that point an OpenTelemetry SDK's OTLP exporter here."""
        return {
            "OTEL_EXPORTER_OTLP_ENDPOINT": self.endpoint,
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": self.endpoint + TRACES_PATH,
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
        }

    def start(self, port: int | None = None) -> OtlpReceiver:
        """Listen on `port` (OSError when it is taken), else on a free one."""
        self.port = port or free_port()
        try:
            server = _Server((LOOPBACK, self.port), _handler(self))
        except OSError:
            if port is None:
                release(self.port)
            raise
        self.spans_file.parent.mkdir(parents=True, exist_ok=True)
        server.log = self.log
        server.slots = threading.BoundedSemaphore(self.max_connections)
        server.receiver = self
        server.daemon_threads = True
        self._server = server
        # A short poll: stopping waits for the loop to look at its flag.
        self._thread = threading.Thread(
            target=server.serve_forever, args=(0.05,), name=f"otlp-receiver-{self.port}", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        release(self.port)  # nothing for a port it was given

    def __enter__(self) -> OtlpReceiver:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def wait_until(self, done: Callable[[], bool], timeout_s: float) -> bool:
        """Wait, at most `timeout_s`, until `done()` holds; it is asked again each time spans
        arrive (outside the receiver's lock: requests go on meanwhile). Whether it held."""
        deadline = time.monotonic() + timeout_s
        while True:
            with self._changed:
                seen = self._arrivals
            if done():
                return True
            with self._changed:
                while self._arrivals == seen:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return False
                    self._changed.wait(left)

    def summary(self) -> str:
        refused = ", ".join(f"{n} answered {code}" for code, n in sorted(self.requests_refused.items()))
        return (
            f"OTLP receiver {self.endpoint}: {self.spans_written} spans written to {self.spans_file}"
            + (f", {self.spans_rejected} refused" if self.spans_rejected else "")
            + (f"; requests {refused}" if refused else "")
        )

    def _append(self, lines: list[bytes]) -> tuple[int, int]:
        """Append whole lines while the file stays under its bound: (written, refused)."""
        with self._changed:
            try:
                size = os.path.getsize(self.spans_file)
            except OSError:
                size = 0
            kept: list[bytes] = []
            for line in lines:
                if size + len(line) > self.max_file_bytes:
                    break
                kept.append(line)
                size += len(line)
            if kept:
                fd = os.open(self.spans_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                try:
                    os.write(fd, b"".join(kept))
                finally:
                    os.close(fd)
                self.spans_written += len(kept)
                self.last_received = time.time()
            refused = len(lines) - len(kept)
            self.spans_rejected += refused
            self._arrivals += 1
            self._changed.notify_all()
            return len(kept), refused


_BUSY = b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


class _Server(ThreadingHTTPServer):
    log: Callable[[str], None]
    slots: threading.BoundedSemaphore
    receiver: OtlpReceiver

    def process_request(self, request: Any, client_address: Any) -> None:
        """A thread per connection while there is a slot; past that 503 and closed, so a
        flood of connections holds no more than `max_connections` threads."""
        if not self.slots.acquire(blocking=False):
            with self.receiver._changed:
                self.receiver.requests_refused[503] = self.receiver.requests_refused.get(503, 0) + 1
            with contextlib.suppress(OSError):
                request.sendall(_BUSY)
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()

    def handle_error(self, request: object, client_address: tuple[str, int]) -> None:
        """One line in the log, never a traceback: a client's fault ends its connection."""
        self.log(f"OTLP receiver: a request from {client_address[0]} failed and was dropped")


def _handler(receiver: OtlpReceiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = receiver.read_timeout_s
        server_version = "bat-pipeline-otlp"

        def log_message(self, format: str, *args: object) -> None:
            return None

        def do_POST(self) -> None:
            if self.path.split("?", 1)[0] != TRACES_PATH:
                self._refuse(404, f"no such endpoint {self.path}; traces go to {TRACES_PATH}")
                return
            content_type = (self.headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()
            if content_type not in (PROTOBUF, JSON):
                self._refuse(415, f"content type {content_type or '(none)'} is not {PROTOBUF} or {JSON}")
                return
            length = self.headers.get("Content-Length")
            if length is None or not length.strip().isdigit():
                self._refuse(411, "a Content-Length is required", content_type)
                return
            size = int(length)
            if size > receiver.max_request_bytes:
                self._refuse(413, f"request of {size} bytes is over {receiver.max_request_bytes}", content_type)
                return
            try:
                body = self.rfile.read(size)
            except OSError:  # a read timeout included
                body = b""
            if len(body) < size:
                # Too slow, or gone mid-body: dropped unanswered, counted as a timeout.
                self.close_connection = True
                with receiver._changed:
                    receiver.requests_refused[408] = receiver.requests_refused.get(408, 0) + 1
                return
            encoding = (self.headers.get("Content-Encoding") or "identity").strip().lower()
            if encoding == "gzip":
                try:
                    body = _gunzip(body, receiver.max_request_bytes)
                except _TooLarge:
                    self._refuse(
                        413, f"request over {receiver.max_request_bytes} bytes once decompressed", content_type
                    )
                    return
                except (zlib.error, EOFError) as exc:
                    self._refuse(400, f"body is not gzip: {exc}", content_type)
                    return
            elif encoding != "identity":
                self._refuse(415, f"content encoding {encoding} is not gzip", content_type)
                return
            try:
                decoded = decode_request(body, content_type)
            except OtlpDecodeError as exc:
                self._refuse(400, str(exc), content_type)
                return
            lines = [(json.dumps(line, ensure_ascii=False) + "\n").encode() for line in decoded.lines]
            _, full = receiver._append(lines)
            reasons = list(decoded.reasons)
            if full:
                reasons.append(f"{full} spans refused: the span file reached {receiver.max_file_bytes} bytes")
            with receiver._changed:
                receiver.spans_rejected += decoded.rejected
            self._answer(200, response_body(content_type, decoded.rejected + full, "; ".join(reasons)), content_type)

        def do_GET(self) -> None:
            self._refuse(405, f"only POST {TRACES_PATH}")

        do_PUT = do_DELETE = do_PATCH = do_GET

        def _refuse(self, code: int, message: str, content_type: str = JSON) -> None:
            with receiver._changed:
                receiver.requests_refused[code] = receiver.requests_refused.get(code, 0) + 1
            status = Status(code=_GRPC_CODES.get(code, 2), message=message)
            if content_type == PROTOBUF:
                body = status.SerializeToString()
            else:
                content_type = JSON
                body = json.dumps({"code": status.code, "message": message}).encode()
            # The body may be unread (413, 415...): the connection cannot be reused.
            self.close_connection = True
            self._answer(code, body, content_type)

        def _answer(self, code: int, body: bytes, content_type: str) -> None:
            with contextlib.suppress(OSError):
                self.send_response(code)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                if self.close_connection:
                    self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(body)

    return Handler


_GRPC_CODES = {400: 3, 404: 5, 405: 12, 411: 3, 413: 8, 415: 3}
"""HTTP status → the google.rpc code its Status body carries (INVALID_ARGUMENT, NOT_FOUND,
UNIMPLEMENTED, RESOURCE_EXHAUSTED; UNKNOWN otherwise)."""


class _TooLarge(Exception):
    pass


def _gunzip(body: bytes, limit: int) -> bytes:
    """Decompressed, refusing (_TooLarge) past `limit` bytes without inflating the rest."""
    inflate = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    out = inflate.decompress(body, limit + 1)
    if len(out) > limit or inflate.unconsumed_tail:
        raise _TooLarge
    out += inflate.flush()
    if len(out) > limit:
        raise _TooLarge
    if not inflate.eof:
        raise EOFError("the gzip stream ends early")
    return out


class RunReceiverError(RuntimeError):
    """The run's receiver (`start_run_receiver`) could not listen."""


def start_run_receiver(port: int, spans_file: Path, timeout_s: float = 30.0) -> subprocess.Popen[str]:
    """A receiver on 127.0.0.1:`port` writing `spans_file`, in a process (and process group)
    of its own: `bat-pipeline run` forks its partitions and must have no thread of its own
    then. Stop it with `stop_process_group`; its last stdout line is its summary. Raises
    RunReceiverError when the port is taken or it does not start."""
    process = subprocess.Popen(
        [sys.executable, "-m", "bat_pipeline.resources.otlp_receiver", "--port", str(port), "--spans", str(spans_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
        preexec_fn=prepare_child,
    )
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], timeout_s)
    line = process.stdout.readline().strip() if ready else ""
    if line.startswith("LISTENING "):
        return process
    stop_process_group(process, 5)
    raise RunReceiverError(line.removeprefix("REFUSED ") or f"did not start within {timeout_s:g}s")


def main(argv: list[str] | None = None) -> int:
    """`python -m bat_pipeline.resources.otlp_receiver --port N --spans FILE`: prints
    `LISTENING <endpoint>` (or `REFUSED <why>` and exits 2), serves until SIGTERM, then
    prints its summary."""
    parser = argparse.ArgumentParser(prog="python -m bat_pipeline.resources.otlp_receiver")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--spans", type=Path, required=True)
    args = parser.parse_args(argv)
    receiver = OtlpReceiver(args.spans)
    try:
        receiver.start(args.port)
    except OSError as exc:
        print(f"REFUSED cannot listen on {LOOPBACK}:{args.port} ({exc.strerror or exc})", flush=True)
        return 2
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    signal.signal(signal.SIGINT, lambda *_: stopping.set())
    print(f"LISTENING {receiver.endpoint}", flush=True)
    stopping.wait()
    receiver.stop()
    print(receiver.summary(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
