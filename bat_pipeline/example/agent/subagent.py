"""The Forecaster child process and the A2A call to it."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

from bat_pipeline.example.agent.config import AgentConfig

if TYPE_CHECKING:
    from bat_pipeline.example.agent.a2a_call import Exchange

CARD_PATH = "/.well-known/agent-card.json"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ForecasterProcess:
    """A Forecaster agent run as a child process (same process group) on a free port,
    started by the first question for it: a conversation that never needs a forecast costs
    no second process (most tasks do not)."""

    def __init__(self, config: AgentConfig) -> None:
        self.config = config
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self._client: Any = None
        self._starting = asyncio.Lock()

    def spawn(self) -> ForecasterProcess:
        if self.proc is None:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "bat_pipeline.example.agent", "--role", "forecaster", "--port", str(self.port)],
                cwd=self.config.folder,
                env=dict(os.environ),
            )
        return self

    async def start(self, timeout_s: float = 30.0) -> None:
        """Spawn the child if needed and wait until its agent card answers."""
        import httpx

        from bat_pipeline.example.agent.a2a_call import connect

        self.spawn()
        assert self.proc is not None
        deadline = time.monotonic() + timeout_s
        async with httpx.AsyncClient(timeout=2) as http:
            while True:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"Forecaster exited with code {self.proc.returncode} at startup")
                try:
                    if (await http.get(self.url + CARD_PATH)).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"Forecaster not ready at {self.url} after {timeout_s}s")
                await asyncio.sleep(0.05)
        self._client = await connect(self.url)

    async def ask(self, question: str, context_id: str) -> Exchange:
        """Ask the Forecaster; the current trace continues in it through `traceparent`."""
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

        from bat_pipeline.example.agent.a2a_call import send_text

        async with self._starting:  # concurrent first questions start one child
            if self._client is None:
                await self.start()
        headers: dict[str, str] = {}
        TraceContextTextMapPropagator().inject(headers)
        return await send_text(self._client, question, context_id, headers=headers, timeout_s=30)

    async def stop(self, timeout_s: float = 5.0) -> None:
        """SIGTERM the child (it flushes its spans), then SIGKILL if it lingers."""
        if self._client is not None:
            await self._client.close()
            self._client = None
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.to_thread(self.proc.wait, timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
