"""Score rows sent to the team's own OTLP endpoint as `gen_ai.evaluation.result` events
(engine.evaluation_events), each parented to the root span of the conversation's last
turn found in the partition's span files (`export.otlp_endpoint` in eval.yaml)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import httpx

from bat_pipeline.engine.agent_folder import spans_files
from bat_pipeline.engine.contracts import Episode
from bat_pipeline.engine.derived_scores import score_rows
from bat_pipeline.engine.evaluation_events import GradedTurn, evaluation_request
from bat_pipeline.engine.spans import load_spans
from bat_pipeline.resources.tls import tls_context
from bat_pipeline.storage import PartitionRef

LOGS_PATH = "/v1/logs"
TIMEOUT_S = 30.0


def logs_url(endpoint: str) -> str:
    """The OTLP/HTTP logs URL of a base endpoint (as `OTEL_EXPORTER_OTLP_ENDPOINT`), or the
    endpoint itself when it already names `/v1/logs`."""
    endpoint = endpoint.rstrip("/")
    return endpoint if endpoint.endswith(LOGS_PATH) else endpoint + LOGS_PATH


def graded_turns(ref: PartitionRef, episodes: Sequence[Episode]) -> list[GradedTurn]:
    """Each episode's conversation and the root span of its last turn in the span files."""
    index = load_spans(spans_files(ref.dir, ref.span_paths()))
    out = []
    for episode in episodes:
        roots = index.conversation_roots(episode.conversation_id)
        last = roots[-1] if roots else None
        out.append(
            GradedTurn(
                conversation_id=episode.conversation_id,
                task_id=episode.task_id,
                attempt=episode.attempt_index,
                trace_id=last.trace_id if last else None,
                span_id=last.span_id if last else None,
            )
        )
    return out


def export_scores(endpoint: str, ref: PartitionRef, episodes: Sequence[Episode], log: Callable[[str], None]) -> int:
    """POST every episode's score rows to `endpoint` (protobuf); the number of events sent.
    An endpoint that refuses or cannot be reached is logged, never raised: the evaluation
    stands without it."""
    turns = graded_turns(ref, episodes)
    graded = [(turn, score_rows(episode)) for turn, episode in zip(turns, episodes, strict=True)]
    request = evaluation_request(
        graded, model=ref.model_name, run_id=ref.run_id, service="bat_pipeline", time_ns=time.time_ns()
    )
    sent = sum(len(rows) for _, rows in graded)
    url = logs_url(endpoint)
    try:
        response = httpx.post(
            url,
            content=request.SerializeToString(),
            headers={"Content-Type": "application/x-protobuf"},
            timeout=TIMEOUT_S,
            verify=tls_context(),
        )
    except httpx.HTTPError as exc:
        log(f"warning: scores not exported to {url}: {type(exc).__name__}: {exc}")
        return 0
    if response.status_code != 200:
        log(f"warning: scores not exported to {url}: HTTP {response.status_code} {response.text[:200]}")
        return 0
    unparented = sum(1 for turn in turns if turn.span_id is None)
    log(
        f"exported {sent} scores as {len(turns)} episodes' gen_ai.evaluation.result events to {url}"
        + (f" ({unparented} episodes without spans: their events have no parent)" if unparented else "")
    )
    return sent
