"""The LLM judge client (SPEC §7): answers the LLM scorers' questions
(engine.scorers.judging.JudgeQuestion) over HTTP, in the wire format of its provider
(resources.llm).

Each question is asked as structured output first (its schema) and, once a server
refuses that for a purpose, in plain text for that purpose from then on; the first
question of each purpose goes alone, so a refusal costs one extra request per purpose.
The temperature is dropped for good when the server refuses it.

Failures never raise: an answer without a value says why in `error` ("HTTP 500: …",
"unusable answer: …", each with "(gave up after N attempts)" when retried). Only a missing
API key or an unusable base URL raise (JudgeConfigError), when the client is built.
HTTP 429, 408, 5xx, timeouts, connection errors and unreadable answers (no answer text,
or the question's `parse` raising ValueError) are asked again, up to `max_retries` times
per question in all. HTTP 401/403 stops every later question of the opening.

Calls in flight are bounded by `max_concurrency` within one opening of the client, and,
given a SlotPool (JudgeResource gives `<storage root>/judge_slots`), across every process
and thread judging on the machine: the partitions of a run share the bound.

The key is never logged, stored or put in a message: every text that leaves this module
(answers, errors, what the cache keeps) passes through the redactor first, which also
removes the other secrets of the evaluation when a Redactor is given. A value is parsed
from the redacted text, so a cached answer reads exactly like a fresh one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
from collections.abc import AsyncIterator, Collection, Iterable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar

import httpx
from dagster import ConfigurableResource

from bat_pipeline.engine.contracts import Episode, EvalConfig, JudgeSettings, Task
from bat_pipeline.engine.environment import (
    MissingJudgeKey,
    config_environ,
    config_key_sources,
    judge_environment,
    judge_key,
)
from bat_pipeline.engine.judge import JudgeRunResult, JudgeStats, run_llm_scorers
from bat_pipeline.engine.redaction import Redactor
from bat_pipeline.engine.scorers.judging import JudgeAnswer, JudgeQuestion
from bat_pipeline.resources.graders import GraderRunner
from bat_pipeline.resources.judge_cache import JudgeCache
from bat_pipeline.resources.llm import wire
from bat_pipeline.resources.llm.providers import endpoint_url, wire_format
from bat_pipeline.resources.slots import SlotPool
from bat_pipeline.resources.tls import tls_context
from bat_pipeline.storage import default_root

log = logging.getLogger(__name__)

T = TypeVar("T")
BACKOFF_CAP_S = 30.0


class JudgeConfigError(ValueError):
    """The judge cannot be used as configured (e.g. its API key is missing)."""


def resolve_api_key(
    settings: JudgeSettings, environ: Mapping[str, str] | None = None, looked_in: str | None = None
) -> str | None:
    """The judge's API key from its environment (engine.environment.judge_key): `environ`
    (default `os.environ`; the asset passes the project's `.env` overlaid by the shell)
    with `api_key_env` copied onto the provider's variable and `judge.env` on top. None
    when the provider needs none. Raises JudgeConfigError naming the variable and
    `looked_in` (never a value) when it is missing."""
    try:
        return judge_key(
            settings, os.environ if environ is None else environ, looked_in=looked_in or "the environment and judge.env"
        )
    except MissingJudgeKey as exc:
        raise JudgeConfigError(str(exc)) from None


class _Failure(Exception):
    """A question that could not be answered; the message is already redacted."""


class _Rejected(Exception):
    """The server refused structured output."""


@dataclass
class _Opening:
    """One opening of the client: its connections and bounds bind to one event loop."""

    http: httpx.AsyncClient
    semaphore: asyncio.Semaphore
    stats: JudgeStats = field(default_factory=JudgeStats)
    slots: SlotPool | None = None
    probe_locks: dict[str, asyncio.Lock] = field(default_factory=dict)
    refused: str | None = None
    """Set when the server refused the credentials: every later question fails at once."""

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


_OPENINGS: ContextVar[Mapping[JudgeClient, _Opening]] = ContextVar("judge_openings")
"""The opening each client asks in, for the current task and the tasks it starts."""
_NO_OPENINGS: Mapping[JudgeClient, _Opening] = MappingProxyType({})


class JudgeClient:
    """One judge model, answering JudgeQuestions (the engine's Judge protocol); usable
    without Dagster. Per client: the purposes switched to plain text, and whether the
    temperature parameter is accepted."""

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
        words for the error. Raises JudgeConfigError when the API key is missing or the
        base URL unusable. `redactor`: the other secrets to keep out of answers and errors
        (the key itself always is); `slots`: a bound shared with other processes, on top of
        `max_concurrency`."""
        self.settings = settings
        self.cache = cache
        place = judge_environment(settings, os.environ if environ is None else environ)
        try:
            self.url = endpoint_url(settings.provider, settings.base_url, settings.model, place)
        except ValueError as exc:
            message = str(exc)
            raise JudgeConfigError(f"judge.{message}" if message.startswith("base_url") else message) from None
        self.backoff_base_s = backoff_base_s
        self.slots = slots
        self._wire = wire_format(settings.provider, place)
        self._key = resolve_api_key(settings, environ, looked_in)
        self.redactor = (redactor or Redactor()).plus(self._key)
        self._transport = transport
        self._text_purposes: set[str] = set()
        self._probed: set[str] = set()
        self._temperature = True

    def __repr__(self) -> str:
        return f"JudgeClient({self.name} at {self.url})"

    @property
    def name(self) -> str:
        return f"{self.settings.provider}:{self.settings.model}"

    @contextlib.asynccontextmanager
    async def opened(self) -> AsyncIterator[JudgeStats]:
        """Hold connections and the in-flight bound for the questions asked inside (in
        this task and the tasks it starts); yields the stats they fill. Nested openings
        share the outer one."""
        current = _OPENINGS.get(_NO_OPENINGS).get(self)
        if current is not None:
            yield current.stats
            return
        timeout = httpx.Timeout(self.settings.timeout_s)
        async with httpx.AsyncClient(
            timeout=timeout, headers=self._wire.headers(self._key), transport=self._transport, verify=tls_context()
        ) as http:
            opening = _Opening(http=http, semaphore=asyncio.Semaphore(self.settings.max_concurrency), slots=self.slots)
            token = _OPENINGS.set({**_OPENINGS.get(_NO_OPENINGS), self: opening})
            try:
                yield opening.stats
            finally:
                _OPENINGS.reset(token)

    async def ask(self, question: JudgeQuestion[T]) -> JudgeAnswer[T]:
        """The answer, from the cache or the judge; never raises (module docstring). Asked
        outside `opened()`, the question gets an opening of its own."""
        opening = _OPENINGS.get(_NO_OPENINGS).get(self)
        if opening is None:
            async with self.opened():
                return await self.ask(question)
        opening.stats.questions += 1
        cached = self._from_cache(question)
        if cached is not None:
            opening.stats.cache_hits += 1
            return cached
        if opening.refused:
            return JudgeAnswer(error=opening.refused)
        opening.stats.calls += 1
        try:
            value, text, structured = await self._ask(opening, question)
        except _Failure as exc:
            return JudgeAnswer(error=str(exc))
        except Exception as exc:  # noqa: BLE001 - the judge's contract: never raises, the answer says why
            return JudgeAnswer(error=self.redactor.text(f"{type(exc).__name__}: {exc}"))
        if self.cache is not None:
            try:
                self.cache.keep(self.settings.provider, self.settings.model, question, text, structured=structured)
            except OSError as exc:  # a full or read-only disk costs the cache, not the answer
                log.warning("judge cache not written: %s", exc)
        return JudgeAnswer(value=value, text=text, details={"structured": structured})

    def _from_cache(self, question: JudgeQuestion[T]) -> JudgeAnswer[T] | None:
        """A stored answer (either mode, the one asked now first) that still parses."""
        if self.cache is None:
            return None
        structured = question.purpose not in self._text_purposes
        text = self.cache.answer(self.settings.provider, self.settings.model, question, structured_first=structured)
        if text is None:
            return None
        text = self.redactor.text(text)
        try:
            return JudgeAnswer(value=question.parse(text), text=text, cached=True)
        except ValueError:
            return None  # written under another parse: asked again, and replaced

    # --- one question ------------------------------------------------------------------------

    async def _ask(self, opening: _Opening, question: JudgeQuestion[T]) -> tuple[T, str, bool]:
        """`(value, text, structured)`; the first question of a purpose goes alone."""
        purpose = question.purpose
        if question.schema is not None and purpose not in self._text_purposes and purpose not in self._probed:
            async with opening.probe_locks.setdefault(purpose, asyncio.Lock()):
                if purpose not in self._probed:
                    try:
                        return await self._ask_in_mode(opening, question)
                    finally:
                        self._probed.add(purpose)
        return await self._ask_in_mode(opening, question)

    async def _ask_in_mode(self, opening: _Opening, question: JudgeQuestion[T]) -> tuple[T, str, bool]:
        purpose = question.purpose
        if question.schema is not None and purpose not in self._text_purposes:
            try:
                return (*await self._exchange(opening, question, structured=True), True)
            except _Rejected as exc:
                if purpose not in self._text_purposes:
                    self._text_purposes.add(purpose)
                    opening.stats.text_fallbacks.append(purpose)
                    log.warning(
                        "judge %s refused structured output for %s (%s); asking in plain text from now on",
                        self.name,
                        purpose,
                        exc,
                    )
        return (*await self._exchange(opening, question, structured=False), False)

    async def _exchange(self, opening: _Opening, question: JudgeQuestion[T], *, structured: bool) -> tuple[T, str]:
        """`(value, redacted text)` of one question, asking again on 429, 408, 5xx,
        timeouts, connection errors and unreadable answers, up to `max_retries` times in
        all. Raises _Rejected (structured output refused) or _Failure."""
        attempt = 0
        while True:
            delay: float | None = None
            try:
                async with opening.in_flight():
                    if opening.refused:
                        raise _Failure(opening.refused)
                    opening.stats.requests += 1
                    async with asyncio.timeout(self.settings.timeout_s):
                        body = self._wire.body(self._request(question, structured))
                        response = await wire.post_capped(
                            opening.http, self.url, json=body, limit=self.settings.max_answer_bytes
                        )
            except wire.AnswerTooLarge as exc:
                raise _Failure(str(exc)) from None  # asked again, it would run away again
            except (httpx.TimeoutException, TimeoutError):
                problem = f"no answer within {self.settings.timeout_s:g} s"
            except httpx.TransportError as exc:
                problem = self.redactor.text(f"connection failed ({type(exc).__name__}: {exc})")
            else:
                status = response.status_code
                if status < 300:
                    tokens_in, tokens_out = wire.token_usage(response)
                    opening.stats.tokens_in += tokens_in
                    opening.stats.tokens_out += tokens_out
                    try:
                        text = self.redactor.text(wire.response_text(self._wire, response))
                        return question.parse(text), text
                    except wire.UnreadableAnswer as exc:
                        problem = exc.message + (f": {self._short(exc.quote)}" if exc.quote else "")
                    except ValueError as exc:
                        problem = f"unusable answer: {self.redactor.text(str(exc))}"
                    delay = 0.0  # asking again needs no wait
                else:
                    detail = self._short(wire.error_detail(response))
                    if wire.worth_retrying(status):
                        problem = f"HTTP {status}: {detail}"
                        delay = wire.retry_after(response.headers.get("retry-after"))
                    elif (
                        self._temperature
                        and question.temperature is not None
                        and wire.refuses_temperature(status, detail)
                    ):
                        self._temperature = False
                        continue
                    elif status in (401, 403):
                        # A refused key fails every other question the same way: stop asking.
                        opening.refused = (
                            f"HTTP {status}: {detail} (the judge refused the credentials; no further calls)"
                        )
                        raise _Failure(f"HTTP {status}: {detail}")
                    elif structured and wire.refuses_structured_output(status, detail):
                        raise _Rejected(f"HTTP {status}: {detail}")
                    else:
                        raise _Failure(f"HTTP {status}: {detail}")
            if attempt >= self.settings.max_retries:
                tries = "1 attempt" if attempt == 0 else f"{attempt + 1} attempts"
                raise _Failure(f"{problem} (gave up after {tries})")
            wait = delay if delay is not None else self._backoff(attempt)
            log.info("judge %s: %s; retrying in %.1f s", self.name, problem, wait)
            attempt += 1
            opening.stats.retries += 1
            await asyncio.sleep(wait)

    def _request(self, question: JudgeQuestion[Any], structured: bool) -> wire.ChatRequest:
        return wire.ChatRequest(
            self.settings.model,
            question.messages,
            schema=question.schema if structured else None,
            schema_name=question.purpose,
            temperature=question.temperature if self._temperature else None,
        )

    def _backoff(self, attempt: int) -> float:
        return min(BACKOFF_CAP_S, self.backoff_base_s * 2**attempt) * random.uniform(0.5, 1.0)

    def _short(self, text: str) -> str:
        """Redacted before shortened, so a cut can never leave part of the key."""
        return wire.clip(self.redactor.text(text))


async def judge_episodes(
    client: JudgeClient,
    episodes: list[Episode],
    tasks: Mapping[str, Task] | Iterable[Task],
    project: Collection[str] = (),
    panel: Sequence[JudgeClient] = (),
) -> JudgeRunResult:
    """The judge step (engine.judge.run_llm_scorers) with this client, in one opening: its
    stats hold the client's counts and the step's (and those of the `panel` clients, the
    other judge models asked). Never raises for an episode. `project`: the modules of the
    project's own scorers."""
    async with contextlib.AsyncExitStack() as stack:
        stats = await stack.enter_async_context(client.opened())
        others = [await stack.enter_async_context(member.opened()) for member in panel]
        redactor = client.redactor
        for member in panel:
            redactor = redactor.plus(member._key)
        result = await run_llm_scorers(
            episodes,
            tasks,
            client,
            client.settings,
            stats=stats,
            redactor=redactor,
            project=project,
            panel=panel,
            runner=GraderRunner(),
        )
        for other in others:
            for name in ("questions", "calls", "requests", "retries", "cache_hits"):
                setattr(stats, name, getattr(stats, name) + getattr(other, name))
        return result


JUDGE_SLOTS = "judge_slots"
"""Folder under the storage root holding the slots that bound judge calls machine-wide."""


class JudgeResource(ConfigurableResource):
    """The judge for assets: builds a JudgeClient from the eval config's `judge:` block,
    with the answer cache under the storage root and `judge.max_concurrency` calls in
    flight at most across every partition judging from that root (`<root>/judge_slots`)."""

    storage_root: str | None = None
    """Root of the pipeline's storage; the cache is `<root>/judge_cache`. Default:
    `$BAT_PIPELINE_HOME`, else `.bat_pipeline` in the current folder (the definitions
    always set it: the run's root)."""
    use_cache: bool = True
    """False: ask every question again (answers are still not stored)."""

    def cache(self) -> JudgeCache | None:
        if not self.use_cache:
            return None
        return JudgeCache(Path(self.storage_root) if self.storage_root else default_root())

    def client(
        self, settings: JudgeSettings, redactor: Redactor | None = None, config: EvalConfig | None = None
    ) -> JudgeClient:
        """A client for `settings` reading its key from the project's environment
        (engine.environment.config_environ: the agent folder's `.env` overlaid by the shell,
        as under `bat eval`; an AgentV file's `.env` files upward; without `config`: the
        shell alone); raises JudgeConfigError naming where it looked when the key is
        missing. `redactor`: the evaluation's other secrets."""
        root = Path(self.storage_root) if self.storage_root else default_root()
        return JudgeClient(
            settings,
            cache=self.cache(),
            redactor=redactor,
            environ=None if config is None else config_environ(config),
            looked_in=None if config is None else config_key_sources(config),
            slots=SlotPool(root / JUDGE_SLOTS, settings.max_concurrency),
        )
