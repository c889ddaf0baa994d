"""A plain LLM target (`provider: openai | anthropic | ollama | deepseek | nvidia`): one
completion per test and attempt, in the provider's wire format (resources.llm, shared
with the judge), a few at a time.

The test's input goes as chat messages (engine.target_inputs); the answer text is the
episode's output, the response's token counts and the wall time are kept on the episode.
HTTP 429, 408 and 5xx, timeouts, connection errors and unreadable answers are asked again
(Retry-After honoured, else exponential backoff), up to `max_retries` times; anything else
makes that attempt an error episode. HTTP 401/403 fails every later attempt of the
partition at once, as the judge does. The key never leaves this module: every text kept
passes through a redactor that knows it.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx

from bat_pipeline.engine.contracts.agentv import AgentvTarget
from bat_pipeline.engine.contracts.episode import Episode
from bat_pipeline.engine.conversation import Attempt
from bat_pipeline.engine.redaction import Redactor
from bat_pipeline.engine.target_inputs import chat_messages
from bat_pipeline.engine.target_records import TargetAnswer, answered_episode, error_episode
from bat_pipeline.resources.llm import wire
from bat_pipeline.resources.llm.google_generate import usage_counts
from bat_pipeline.resources.llm.providers import endpoint_url, wire_format
from bat_pipeline.resources.llm.wire import WireFormat
from bat_pipeline.resources.tls import tls_context

BACKOFF_BASE_S = 0.5
BACKOFF_CAP_S = 30.0


@dataclass
class _Partition:
    """What every attempt of one partition shares."""

    target: AgentvTarget
    url: str
    http: httpx.AsyncClient
    gate: asyncio.Semaphore
    redactor: Redactor
    backoff_base_s: float
    wire: WireFormat
    refused: str | None = None
    """Set when the server refused the credentials: every later attempt fails at once."""


def run_llm_target(
    target: AgentvTarget,
    attempts: list[Attempt],
    *,
    key: str | None,
    workers: int,
    on_episode: Callable[[Episode], None],
    backoff_base_s: float = BACKOFF_BASE_S,
    environ: Mapping[str, str] | None = None,
) -> None:
    """Every attempt, at most `workers` requests in flight; each episode handed to
    `on_episode` as it ends. `environ`: where a vertex model's project and location are
    read (default `os.environ`). Raises ValueError for an unusable `base_url` or a vertex
    model without its project."""
    assert target.llm is not None
    url = endpoint_url(target.provider, target.llm.base_url, target.llm.model, environ)
    asyncio.run(_run_all(target, url, attempts, key, max(1, workers), on_episode, backoff_base_s, environ))


async def _run_all(
    target: AgentvTarget,
    url: str,
    attempts: list[Attempt],
    key: str | None,
    workers: int,
    on_episode: Callable[[Episode], None],
    backoff_base_s: float,
    environ: Mapping[str, str] | None,
) -> None:
    headers = wire_format(target.provider, environ).headers(key)
    limits = httpx.Limits(max_connections=workers)
    async with httpx.AsyncClient(
        timeout=httpx.Timeout(target.timeout_s), headers=headers, limits=limits, verify=tls_context()
    ) as http:
        shared = _Partition(
            target=target,
            url=url,
            http=http,
            gate=asyncio.Semaphore(workers),
            redactor=Redactor().plus(key),
            backoff_base_s=backoff_base_s,
            wire=wire_format(target.provider, environ),
        )

        async def one(attempt: Attempt) -> None:
            try:
                episode = await _attempt(shared, attempt)
            except Exception as exc:  # noqa: BLE001 - one attempt's failure is its episode, not the partition's
                reason = shared.redactor.text(f"target '{target.name}': {type(exc).__name__}: {exc}")
                episode = error_episode(
                    attempt.task,
                    target.name,
                    attempt.attempt_index,
                    wire.clip(reason, 500),
                    started_at=datetime.now(UTC).isoformat(),
                )
            on_episode(episode)

        await asyncio.gather(*(one(a) for a in attempts))


async def _attempt(shared: _Partition, attempt: Attempt) -> Episode:
    """One completion; every failure becomes the attempt's error episode."""
    target, task, index = shared.target, attempt.task, attempt.attempt_index
    assert target.llm is not None and task.agentv is not None
    started_at = datetime.now(UTC).isoformat()
    started = time.perf_counter()
    formats = shared.wire
    body = formats.body(
        wire.ChatRequest(
            target.llm.model,
            chat_messages(task.agentv),
            temperature=target.llm.temperature,
            max_tokens=target.llm.max_output_tokens,
        )
    )
    requests = 0
    while True:
        delay: float | None = None
        try:
            async with shared.gate:
                # Checked once in flight: an attempt that waited may find the key refused.
                if shared.refused:
                    problem = shared.refused
                    break
                requests += 1
                async with asyncio.timeout(target.timeout_s):
                    # A longer answer (wire.AnswerTooLarge) is the attempt's error episode.
                    response = await wire.post_capped(shared.http, shared.url, json=body, limit=wire.MAX_ANSWER_BYTES)
        except (httpx.TimeoutException, TimeoutError):
            problem = f"no answer within {target.timeout_s:g} s"
        except httpx.TransportError as exc:
            problem = f"connection failed ({type(exc).__name__}: {exc})"
        else:
            status = response.status_code
            if status < 300:
                try:
                    text = wire.response_text(formats, response)
                except wire.UnreadableAnswer as exc:
                    problem, delay = exc.message + (f": {exc.quote}" if exc.quote else ""), 0.0
                else:
                    answer = TargetAnswer(text=shared.redactor.text(text), token_usage=_usage(response.json()))
                    episode = answered_episode(
                        task,
                        target.name,
                        index,
                        answer,
                        started_at=started_at,
                        wall_ms=(time.perf_counter() - started) * 1000,
                    )
                    episode.aux.update(requests=requests, llm=f"{target.provider}:{target.llm.model}")
                    episode.trace.trajectory.totals.model_calls = 1
                    return episode
            else:
                detail = wire.error_detail(response)
                problem = f"HTTP {status}: {detail}"
                if status in (401, 403):
                    shared.refused = f"{problem} (the server refused the credentials; no further requests)"
                    break
                if not wire.worth_retrying(status):
                    break
                delay = wire.retry_after(response.headers.get("retry-after"))
        if requests > target.llm.max_retries:
            problem += f" (gave up after {requests} requests)"
            break
        await asyncio.sleep(delay if delay is not None else _backoff(shared.backoff_base_s, requests - 1))
    message = wire.clip(shared.redactor.text(f"target '{target.name}': {problem}"), 500)
    episode = error_episode(
        task, target.name, index, message, started_at=started_at, wall_ms=(time.perf_counter() - started) * 1000
    )
    episode.aux["requests"] = requests
    return episode


def _usage(data: Any) -> dict[str, int] | None:
    """Token counts as AgentV writes them (`input`, `output`, `cached`), from OpenAI's
    `prompt_tokens` / `completion_tokens`, Anthropic's `input_tokens` / `output_tokens` or
    Google's `usageMetadata`."""
    usage = data.get("usage") if isinstance(data, dict) else None
    google = usage_counts(data)
    if usage is None and google is not None:
        usage = {"prompt_tokens": google[0], "completion_tokens": google[1], "cache_read_input_tokens": google[2]}
    if not isinstance(usage, dict):
        return None
    tokens_in = usage.get("prompt_tokens", usage.get("input_tokens"))
    tokens_out = usage.get("completion_tokens", usage.get("output_tokens"))
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else usage.get("cache_read_input_tokens")
    out = {"input": tokens_in, "output": tokens_out, "cached": cached}
    return {k: int(v) for k, v in out.items() if isinstance(v, (int, float)) and not isinstance(v, bool)} or None


def _backoff(base_s: float, attempt: int) -> float:
    return min(BACKOFF_CAP_S, base_s * 2**attempt) * random.uniform(0.5, 1.0)
