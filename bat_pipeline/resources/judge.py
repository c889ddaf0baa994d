"""The LLM judge client (SPEC §7): asks each rubric of each episode over HTTP.

Two wire protocols cover the providers of SPEC §2:
- OpenAI-compatible chat completions (`openai`, `deepseek`, `nvidia`, `ollama`):
  `POST <base>/chat/completions`, `Authorization: Bearer <key>` (none for ollama without a
  key); structured output as `response_format: {type: json_schema}`.
- Anthropic messages (`anthropic`): `POST <base>/v1/messages` with `x-api-key` and
  `anthropic-version`; structured output as a forced tool whose input schema is the
  answer's (rubrics.JSON_SCHEMA).

Base URLs (see endpoint_url): for OpenAI-compatible providers a base given without a
path gets `/v1` appended (`http://localhost:11434` → `http://localhost:11434/v1`), a base
with a path is used as given (`…/v1`, `…/v1beta/openai`), and a trailing
`/chat/completions` is dropped. For Anthropic a trailing `/v1` or `/v1/messages` is
dropped, then `/v1/messages` is appended.

Failures never stop the run: a rubric whose judge call fails keeps a null score, with the
reason in `judge_errors` and `judge_reasoning` ("judge failed: …"). Only a missing API
key raises, and it does so when the client is built, before any episode is judged.
HTTP 429, 5xx, timeouts, connection errors and unreadable answers (no JSON with a score,
a score out of range, an empty or non-JSON response) are asked again, up to
`max_retries` times per question in all.

Calls in flight are bounded by `max_concurrency` within the client, and, given a
SlotPool (JudgeResource gives `<storage root>/judge_slots`), across every process and
thread judging on the machine: the partitions of a run share the bound.

The key is never logged, stored or put in a message: every text that leaves this module
(reasoning, errors, what the cache keeps) passes through `_redact`, which also removes
the other secrets of the evaluation when a Redactor is given.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import random
import re
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
from dagster import ConfigurableResource
from pydantic import BaseModel, Field

from bat_pipeline.engine.contracts import Episode, JudgeScores, JudgeSettings, RUBRICS, Task
from bat_pipeline.engine.contracts.episode import SCORE_FIELDS
from bat_pipeline.engine.environment import JUDGE_KEY_ENV, MissingJudgeKey, judge_key, judge_key_variable
from bat_pipeline.engine.redaction import Redactor
from bat_pipeline.engine.rubrics import (
    JSON_SCHEMA,
    SCHEMA_NAME,
    JudgeAnswerError,
    build_messages,
    parse_answer,
    rubrics_for,
    skipped_rubrics,
)
from bat_pipeline.resources.judge_cache import JudgeCache, cache_key
from bat_pipeline.resources.slots import SlotPool
from bat_pipeline.storage import default_root

log = logging.getLogger(__name__)

DEFAULT_BASE_URLS = {
    "openai": "https://api.openai.com/v1",
    "deepseek": "https://api.deepseek.com/v1",
    "nvidia": "https://integrate.api.nvidia.com/v1",
    "ollama": "http://localhost:11434/v1",
    "anthropic": "https://api.anthropic.com",
}
DEFAULT_KEY_ENV = JUDGE_KEY_ENV
"""The variable holding each provider's key when `judge.api_key_env` is not set; a local
ollama needs none."""

ANTHROPIC_VERSION = "2023-06-01"
"""The Messages API version header; Anthropic requires one on every request."""
ANTHROPIC_MAX_TOKENS = 2048
"""Anthropic requires `max_tokens`; a rubric answer is a few sentences."""
ANSWER_TOOL = "record_score"
"""The tool Anthropic is made to call with the answer, in structured mode."""
RETRY_AFTER_CAP_S = 60.0
"""Longest wait honoured from a `Retry-After` header."""
BACKOFF_CAP_S = 30.0
_DETAIL_CHARS = 300

_STRUCTURED_REJECTION = re.compile(
    r"response_format|json_schema|json schema|structured|tool_choice|tools?\b|not supported|"
    r"unsupported|not implemented|unknown (?:field|parameter)|unrecognized|extra inputs",
    re.IGNORECASE,
)
"""What a 400/422 says when the server cannot do structured output (OpenAI-compatible
servers without json_schema, e.g. DeepSeek; vLLM/llama.cpp builds without it)."""


class JudgeConfigError(ValueError):
    """The judge cannot be used as configured (e.g. its API key is missing)."""


class JudgeStats(BaseModel):
    """What one judging run did."""

    episodes: int = 0
    questions: int = 0
    """Rubric answers needed (skipped rubrics not counted)."""
    calls: int = 0
    """Questions sent to the judge, i.e. not served from the cache."""
    requests: int = 0
    """HTTP requests made, retries and structured-output fallbacks included."""
    retries: int = 0
    cache_hits: int = 0
    failures: int = 0
    """Rubric answers left null because the judge failed."""
    skipped: int = 0
    """Rubrics not asked (tool_call for a task without expected tool calls, outcome mode)."""
    text_fallbacks: list[str] = Field(default_factory=list)
    """Rubrics switched to plain-text answers because structured output was refused."""


class JudgeRunResult(BaseModel):
    """Scores of one judging run, in the order of the episodes given, and its stats."""

    scores: list[JudgeScores]
    stats: JudgeStats

    def mean_scores(self) -> dict[str, float | None]:
        """Score field → mean over the non-null scores (None when there is none)."""
        means: dict[str, float | None] = {}
        for rubric in RUBRICS:
            values = [s.score(rubric) for s in self.scores if s.score(rubric) is not None]
            means[SCORE_FIELDS[rubric]] = sum(values) / len(values) if values else None
        return means


def endpoint_url(provider: str, base_url: str | None) -> str:
    """The URL answers are asked at, from the provider and an optional base (module docstring).
    Raises JudgeConfigError for a base that is not an http(s) URL."""
    base = (base_url or DEFAULT_BASE_URLS[provider]).strip().rstrip("/")
    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise JudgeConfigError(f"judge.base_url must be an http(s) URL such as http://localhost:11434, "
                               f"got '{base_url}'")
    if provider == "anthropic":
        for suffix in ("/v1/messages", "/v1"):
            if base.endswith(suffix):
                base = base[: -len(suffix)]
                break
        return f"{base}/v1/messages"
    if base.endswith("/chat/completions"):
        base = base[: -len("/chat/completions")]
    if urlsplit(base).path in ("", "/"):
        base += "/v1"
    return f"{base}/chat/completions"


def key_variable(settings: JudgeSettings) -> str | None:
    """The variable the key is read from: `api_key_env`, else the provider's usual one."""
    return judge_key_variable(settings)


def resolve_api_key(settings: JudgeSettings, environ: Mapping[str, str] | None = None,
                    looked_in: str | None = None) -> str | None:
    """The judge's API key from its environment (engine.environment.judge_key): `environ`
    (default `os.environ`; the asset passes the project's `.env` overlaid by the shell)
    with `api_key_env` copied onto the provider's variable and `judge.env` on top. None
    when the provider needs none. Raises JudgeConfigError naming the variable and
    `looked_in` (never a value) when it is missing."""
    try:
        return judge_key(settings, os.environ if environ is None else environ,
                         looked_in=looked_in or "the environment and judge.env")
    except MissingJudgeKey as exc:
        raise JudgeConfigError(str(exc)) from None


class _Failure(Exception):
    """A judge question that could not be answered; the message is already redacted."""


class _Unreadable(_Failure):
    """An answer without a usable score; asked again while retries are left."""


class _Rejected(Exception):
    """The server refused structured output."""


@dataclass
class _Run:
    """State of one `judge_episodes` call; asyncio primitives bind to its event loop."""

    http: httpx.AsyncClient
    semaphore: asyncio.Semaphore
    stats: JudgeStats
    slots: SlotPool | None = None
    probe_locks: dict[str, asyncio.Lock] = field(default_factory=dict)
    refused: str | None = None
    """Set when the server refused the credentials: every later question fails at once."""

    def probe_lock(self, rubric: str) -> asyncio.Lock:
        return self.probe_locks.setdefault(rubric, asyncio.Lock())

    @contextlib.asynccontextmanager
    async def in_flight(self) -> AsyncIterator[None]:
        """One call's place: the client's own bound, then a slot shared across processes
        (taken after the local one, so at most `max_concurrency` coroutines poll for it)."""
        async with self.semaphore:
            if self.slots is None:
                yield
                return
            async with self.slots.slot():
                yield


class JudgeClient:
    """Judges episodes with one judge model; usable without Dagster.

    Per-client state: the rubrics switched to plain text (structured output refused), and
    whether the temperature parameter is accepted. The first question of each rubric is
    asked alone, so a server refusing structured output costs one extra request per
    rubric rather than one per call in flight."""

    def __init__(
        self,
        settings: JudgeSettings,
        *,
        cache: JudgeCache | None = None,
        environ: Mapping[str, str] | None = None,
        looked_in: str | None = None,
        backoff_base_s: float = 0.5,
        transport: httpx.AsyncBaseTransport | None = None,
        redactor: Redactor | None = None,
        slots: SlotPool | None = None,
    ) -> None:
        """`environ`: where the key is read (see resolve_api_key), `looked_in` says it in
        words for the error. Raises JudgeConfigError when the API key is missing.
        `redactor`: the other secrets to keep out of reasoning and errors (the key itself
        always is); `slots`: a bound shared with other processes, on top of `max_concurrency`."""
        self.settings = settings
        self.cache = cache
        self.url = endpoint_url(settings.provider, settings.base_url)
        self.backoff_base_s = backoff_base_s
        self.slots = slots
        self._key = resolve_api_key(settings, environ, looked_in)
        self._redactor = (redactor or Redactor()).plus(self._key)
        self._transport = transport
        self._anthropic = settings.provider == "anthropic"
        self._text_rubrics: set[str] = set()
        self._probed: set[str] = set()
        self._temperature = True

    def __repr__(self) -> str:
        return f"JudgeClient({self.settings.provider}:{self.settings.model} at {self.url})"

    @property
    def name(self) -> str:
        return f"{self.settings.provider}:{self.settings.model}"

    async def judge_episodes(self, episodes: list[Episode], tasks: Mapping[str, Task] | Iterable[Task]) -> JudgeRunResult:
        """Scores for every episode (same order), asking at most `max_concurrency` calls at
        once. Never raises for an episode: its failed rubrics stay null with the reason."""
        task_by_id = dict(tasks) if isinstance(tasks, Mapping) else {t.id: t for t in tasks}
        stats = JudgeStats(episodes=len(episodes))
        timeout = httpx.Timeout(self.settings.timeout_s)
        async with httpx.AsyncClient(timeout=timeout, headers=self._headers(), transport=self._transport) as http:
            run = _Run(http=http, semaphore=asyncio.Semaphore(self.settings.max_concurrency), stats=stats,
                       slots=self.slots)
            scores = await asyncio.gather(*(self._judge_one(run, ep, task_by_id.get(ep.task_id)) for ep in episodes))
        return JudgeRunResult(scores=list(scores), stats=stats)

    # --- one episode -------------------------------------------------------------------

    async def _judge_one(self, run: _Run, episode: Episode, task: Task | None) -> JudgeScores:
        mode = self.settings.mode
        reasoning: dict[str, str] = {}
        errors: dict[str, str] = {}
        values: dict[str, float] = {}
        if task is None:
            asks: list[str] = []
            for rubric in (["task_completion"] if mode == "outcome" else RUBRICS):
                errors[rubric] = f"task '{episode.task_id}' is not in the dataset"
                run.stats.failures += 1
        else:
            for rubric, why in skipped_rubrics(task, mode).items():
                reasoning[rubric] = f"skipped: {why}"
                run.stats.skipped += 1
            asks = rubrics_for(task, mode)
        answers = await asyncio.gather(*(self._answer(run, r, task, episode) for r in asks))
        for rubric, answer in zip(asks, answers):
            if isinstance(answer, str):
                errors[rubric] = self._redact(answer)
            else:
                values[rubric], reasoning[rubric] = answer
        for rubric, why in errors.items():
            reasoning[rubric] = f"judge failed: {why}"
        return JudgeScores(
            **{SCORE_FIELDS[r]: v for r, v in values.items()},
            judge_reasoning={r: reasoning[r] for r in RUBRICS if r in reasoning},
            judge_errors={r: errors[r] for r in RUBRICS if r in errors},
        )

    async def _answer(self, run: _Run, rubric: str, task: Task, episode: Episode) -> tuple[float, str] | str:
        """`(score, reasoning)`, or why there is none."""
        run.stats.questions += 1
        try:
            messages = build_messages(rubric, task, episode, self.settings)
        except Exception as exc:  # a bug or odd data in one episode must not stop the others
            run.stats.failures += 1
            return self._redact(f"could not build the prompt: {type(exc).__name__}: {exc}")
        structured = rubric not in self._text_rubrics
        if self.cache is not None:
            hit = self.cache.get(self._cache_key(rubric, messages, structured),
                                 self._cache_key(rubric, messages, not structured))
            if hit is not None:
                run.stats.cache_hits += 1
                return hit[0], self._redact(hit[1])
        if run.refused:
            run.stats.failures += 1
            return run.refused
        run.stats.calls += 1
        try:
            score, reasoning, structured = await self._ask(run, rubric, messages)
            reasoning = self._redact(reasoning)
        except _Failure as exc:
            run.stats.failures += 1
            return str(exc)
        except Exception as exc:
            run.stats.failures += 1
            return self._redact(f"{type(exc).__name__}: {exc}")
        if self.cache is not None:
            try:
                self.cache.put(self._cache_key(rubric, messages, structured), score, reasoning, rubric=rubric,
                               provider=self.settings.provider, model=self.settings.model)
            except OSError as exc:  # a full or read-only disk costs the cache, not the score
                log.warning("judge cache not written: %s", exc)
        return score, reasoning

    def _cache_key(self, rubric: str, messages: list[dict[str, str]], structured: bool) -> str:
        return cache_key(self.settings.provider, self.settings.model, rubric, messages, structured)

    # --- one question --------------------------------------------------------------------

    async def _ask(self, run: _Run, rubric: str, messages: list[dict[str, str]]) -> tuple[float, str, bool]:
        """`(score, reasoning, structured)`; the first question of a rubric goes alone."""
        if rubric not in self._text_rubrics and rubric not in self._probed:
            async with run.probe_lock(rubric):
                if rubric not in self._probed:
                    try:
                        return await self._ask_in_mode(run, rubric, messages)
                    finally:
                        self._probed.add(rubric)
        return await self._ask_in_mode(run, rubric, messages)

    async def _ask_in_mode(self, run: _Run, rubric: str, messages: list[dict[str, str]]) -> tuple[float, str, bool]:
        if rubric not in self._text_rubrics:
            try:
                return (*await self._exchange(run, messages, structured=True), True)
            except _Rejected as exc:
                if rubric not in self._text_rubrics:
                    self._text_rubrics.add(rubric)
                    run.stats.text_fallbacks.append(rubric)
                    log.warning("judge %s refused structured output for rubric %s (%s); asking in plain text "
                                "from now on", self.name, rubric, exc)
        return (*await self._exchange(run, messages, structured=False), False)

    def _parse(self, text: str) -> tuple[float, str]:
        try:
            return parse_answer(text)
        except JudgeAnswerError as exc:
            raise _Unreadable(self._redact(f"unusable answer: {exc}")) from None

    async def _exchange(self, run: _Run, messages: list[dict[str, str]], *, structured: bool) -> tuple[float, str]:
        """`(score, reasoning)` of one question, asking again on 429, 5xx, timeouts,
        connection errors and unreadable answers, up to `max_retries` times in all. Raises
        _Rejected (structured output refused) or _Failure."""
        retries = self.settings.max_retries
        attempt = 0
        while True:
            delay: float | None = None
            try:
                async with run.in_flight():
                    if run.refused:
                        raise _Failure(run.refused)
                    run.stats.requests += 1
                    async with asyncio.timeout(self.settings.timeout_s):
                        response = await run.http.post(self.url, json=self._body(messages, structured))
            except (httpx.TimeoutException, TimeoutError):
                problem = f"no answer within {self.settings.timeout_s:g} s"
            except httpx.TransportError as exc:
                problem = self._redact(f"connection failed ({type(exc).__name__}: {exc})")
            else:
                status = response.status_code
                if status < 300:
                    try:
                        return self._parse(self._answer_text(response))
                    except _Unreadable as exc:
                        problem, delay = str(exc), 0.0  # asking again needs no wait
                else:
                    detail = self._detail(response)
                    if status == 429 or status >= 500 or status == 408:
                        problem = f"HTTP {status}: {detail}"
                        delay = _retry_after(response.headers.get("retry-after"))
                    elif status in (400, 422) and self._temperature and "temperature" in detail.lower():
                        # Some models (reasoning ones) accept only their default temperature.
                        self._temperature = False
                        continue
                    elif status in (401, 403):
                        # A refused key fails every other question the same way: stop asking.
                        run.refused = (f"HTTP {status}: {detail} (the judge refused the credentials; "
                                       f"no further calls)")
                        raise _Failure(f"HTTP {status}: {detail}")
                    elif structured and status in (400, 404, 422) and _STRUCTURED_REJECTION.search(detail):
                        raise _Rejected(f"HTTP {status}: {detail}")
                    else:
                        raise _Failure(f"HTTP {status}: {detail}")
            if attempt >= retries:
                tries = "1 attempt" if attempt == 0 else f"{attempt + 1} attempts"
                raise _Failure(f"{problem} (gave up after {tries})")
            wait = delay if delay is not None else self._backoff(attempt)
            log.info("judge %s: %s; retrying in %.1f s", self.name, problem, wait)
            attempt += 1
            run.stats.retries += 1
            await asyncio.sleep(wait)

    def _backoff(self, attempt: int) -> float:
        return min(BACKOFF_CAP_S, self.backoff_base_s * 2 ** attempt) * random.uniform(0.5, 1.0)

    # --- wire formats ----------------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        if self._anthropic:
            headers = {"anthropic-version": ANTHROPIC_VERSION}
            if self._key:
                headers["x-api-key"] = self._key
            return headers
        return {"Authorization": f"Bearer {self._key}"} if self._key else {}

    def _body(self, messages: list[dict[str, str]], structured: bool) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.settings.model}
        if self._temperature:
            body["temperature"] = 0
        if self._anthropic:
            body["max_tokens"] = ANTHROPIC_MAX_TOKENS
            body["system"] = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
            body["messages"] = [m for m in messages if m["role"] != "system"]
            if structured:
                body["tools"] = [{"name": ANSWER_TOOL, "description": "Record the score and the reasoning for it.",
                                  "input_schema": JSON_SCHEMA}]
                body["tool_choice"] = {"type": "tool", "name": ANSWER_TOOL}
            return body
        body["messages"] = messages
        if structured:
            body["response_format"] = {"type": "json_schema",
                                       "json_schema": {"name": SCHEMA_NAME, "schema": JSON_SCHEMA, "strict": True}}
        return body

    def _answer_text(self, response: httpx.Response) -> str:
        """The judge's answer as text (a forced tool call's input as JSON text)."""
        try:
            data = response.json()
        except ValueError:
            raise _Unreadable(f"the judge's response is not JSON: {self._short(response.text)}") from None
        text = ""
        if self._anthropic:
            blocks = data.get("content") if isinstance(data, dict) else None
            blocks = blocks if isinstance(blocks, list) else []
            for block in blocks:
                if isinstance(block, dict) and block.get("type") == "tool_use" and isinstance(block.get("input"), dict):
                    return json.dumps(block["input"], ensure_ascii=False)
            text = "".join(b.get("text") or "" for b in blocks if isinstance(b, dict) and b.get("type") == "text")
        else:
            choices = data.get("choices") if isinstance(data, dict) else None
            message = (choices[0] or {}).get("message") if isinstance(choices, list) and choices else None
            if not isinstance(message, dict):
                raise _Unreadable(f"the judge's response has no message: {self._short(response.text)}")
            content = message.get("content")
            if isinstance(content, list):
                content = "".join(p.get("text") or "" for p in content if isinstance(p, dict))
            text = content if isinstance(content, str) else ""
            if not text.strip() and message.get("refusal"):
                raise _Unreadable(f"the judge refused: {self._short(str(message['refusal']))}")
        if not text.strip():
            raise _Unreadable("the judge's answer is empty")
        return text

    def _detail(self, response: httpx.Response) -> str:
        """The server's error message, short and redacted."""
        try:
            data = response.json()
        except ValueError:
            return self._short(response.text) or response.reason_phrase
        message: Any = data
        if isinstance(data, dict):
            error = data.get("error")
            if isinstance(error, dict):
                message = error.get("message") or error
            elif error:
                message = error
            else:
                message = data.get("message") or data.get("detail") or data
        text = message if isinstance(message, str) else json.dumps(message, ensure_ascii=False)
        return self._short(text)

    def _redact(self, text: str) -> str:
        return self._redactor.text(text)

    def _short(self, text: str) -> str:
        """Redacted before shortened, so a cut can never leave part of the key."""
        return _clip(self._redact(text))


async def judge_episodes(
    episodes: list[Episode],
    tasks: Mapping[str, Task] | Iterable[Task],
    settings: JudgeSettings,
    cache: JudgeCache | None,
    **client_options: Any,
) -> JudgeRunResult:
    """Judge every episode with the judge of `settings`; scores in the episodes' order.

    Raises JudgeConfigError (missing key) before any call; never raises for one episode's
    failure. `client_options` go to JudgeClient (environ, backoff_base_s, transport)."""
    client = JudgeClient(settings, cache=cache, **client_options)
    return await client.judge_episodes(episodes, tasks)


JUDGE_SLOTS = "judge_slots"
"""Folder under the storage root holding the slots that bound judge calls machine-wide."""


class JudgeResource(ConfigurableResource):
    """The judge for assets: builds a JudgeClient from the eval config's `judge:` block,
    with the answer cache under the storage root and `judge.max_concurrency` calls in
    flight at most across every partition judging from that root (`<root>/judge_slots`)."""

    storage_root: str | None = None
    """Root of the pipeline's storage; the cache is `<root>/judge_cache`. Default:
    `$BAT_PIPELINE_HOME`, else `.bat_pipeline` in the current folder."""
    use_cache: bool = True
    """False: ask every question again (answers are still not stored)."""

    def cache(self) -> JudgeCache | None:
        if not self.use_cache:
            return None
        return JudgeCache(Path(self.storage_root) if self.storage_root else default_root())

    def client(self, settings: JudgeSettings, redactor: Redactor | None = None, *,
               environ: Mapping[str, str] | None = None, looked_in: str | None = None) -> JudgeClient:
        """A client for `settings` reading its key from `environ` (default `os.environ`;
        `looked_in` names those places in the error); raises JudgeConfigError when the key
        is missing. `redactor`: the evaluation's other secrets."""
        root = Path(self.storage_root) if self.storage_root else default_root()
        return JudgeClient(settings, cache=self.cache(), redactor=redactor, environ=environ, looked_in=looked_in,
                           slots=SlotPool(root / JUDGE_SLOTS, settings.max_concurrency))


def _retry_after(value: str | None) -> float | None:
    """Seconds to wait from a `Retry-After` header (seconds or an HTTP date), capped."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        seconds = (when - datetime.now(timezone.utc)).total_seconds()
    if seconds != seconds:  # NaN
        return None
    return min(max(seconds, 0.0), RETRY_AFTER_CAP_S)


def _clip(text: str, limit: int = _DETAIL_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
