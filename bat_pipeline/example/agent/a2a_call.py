"""Send one text message to an A2A agent and follow its stream (used by the sub-agent tool
and by tests)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

import httpx
from a2a.client import ClientCallContext, ClientConfig, create_client
from a2a.client.client import Client
from a2a.helpers import get_stream_response_text
from a2a.types import Message, Part, Role, SendMessageRequest, TaskState

STATES = {
    TaskState.TASK_STATE_SUBMITTED: "submitted",
    TaskState.TASK_STATE_WORKING: "working",
    TaskState.TASK_STATE_INPUT_REQUIRED: "input-required",
    TaskState.TASK_STATE_COMPLETED: "completed",
    TaskState.TASK_STATE_FAILED: "failed",
    TaskState.TASK_STATE_CANCELED: "canceled",
    TaskState.TASK_STATE_REJECTED: "rejected",
    TaskState.TASK_STATE_AUTH_REQUIRED: "auth-required",
}


@dataclass
class Exchange:
    """What one message produced: every `(state, text)` streamed, and the task id."""

    events: list[tuple[str, str]] = field(default_factory=list)
    task_id: str = ""

    @property
    def state(self) -> str:
        return self.events[-1][0] if self.events else ""

    @property
    def text(self) -> str:
        """The last non-empty text streamed."""
        return next((t for _, t in reversed(self.events) if t), "")


async def connect(url: str, http: httpx.AsyncClient | None = None) -> Client:
    """A streaming JSON-RPC client for the agent at `url` (its card is fetched first),
    over `http` when given (the caller closes it), else over a client of its own."""
    return await create_client(url, ClientConfig(streaming=True, httpx_client=http))


async def send_text(
    client: Client,
    text: str,
    context_id: str,
    task_id: str | None = None,
    headers: dict[str, str] | None = None,
    timeout_s: float = 60.0,
) -> Exchange:
    """Stream one user message; `headers` go on the HTTP request (e.g. `traceparent`)."""
    message = Message(
        role=Role.ROLE_USER,
        parts=[Part(text=text)],
        message_id=str(uuid.uuid4()),
        context_id=context_id,
        task_id=task_id or None,
    )
    context = ClientCallContext(service_parameters=dict(headers or {}), timeout=timeout_s)
    out = Exchange()
    async for response in client.send_message(SendMessageRequest(message=message), context=context):
        if response.HasField("task"):
            out.task_id = response.task.id
            out.events.append((STATES.get(response.task.status.state, "unknown"), get_stream_response_text(response)))
        elif response.HasField("status_update"):
            out.task_id = response.status_update.task_id
            out.events.append(
                (STATES.get(response.status_update.status.state, "unknown"), get_stream_response_text(response))
            )
        elif response.HasField("message"):
            out.events.append(("completed", get_stream_response_text(response)))
        elif response.HasField("artifact_update"):
            out.events.append((out.state or "working", get_stream_response_text(response)))
    return out
