"""The conversations of one partition (SPEC §4): its record opened (fresh, or the run it
resumes), the agent started for the model, k attempts per task held over A2A, each
episode stored and recorded as it ends, the agent stopped. An AgentV `provider: a2a`
target is such a partition (its agent folder or URL, engine.target_inputs); other AgentV
targets produce their episodes through resources.targets."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bat_pipeline.engine.contracts import Episode, EvalConfig, Task
from bat_pipeline.engine.contracts.agentv import AgentvTarget
from bat_pipeline.engine.conversation import (
    Attempt,
    needs_fresh_conversation_ids,
    plan_attempts,
    scenarios_needing_user,
)
from bat_pipeline.engine.environment import config_environ
from bat_pipeline.engine.errors import InputError
from bat_pipeline.engine.redaction import Redactor
from bat_pipeline.engine.results import result_lines
from bat_pipeline.engine.target_inputs import agent_partition, starts_agent
from bat_pipeline.engine.trajectories.partition import conversations_missing_spans
from bat_pipeline.remote_root import StoreError, push_changed
from bat_pipeline.resources.agent_process import (
    HEAD_STARTS,
    OTLP_SPANS_VAR,
    AgentLauncher,
    AgentStartError,
    RunningAgent,
)
from bat_pipeline.resources.cli_conversations import run_cli_conversations
from bat_pipeline.resources.judge import JudgeConfigError
from bat_pipeline.resources.otlp_receiver import OtlpReceiver
from bat_pipeline.resources.provenance import run_provenance
from bat_pipeline.resources.simulated_user import SimulatedUserClient
from bat_pipeline.resources.targets import TargetHealthError, collect_target_episodes
from bat_pipeline.storage import (
    AGENT_SPANS,
    PartitionRef,
    check_result_folders,
    load_episodes,
    new_partition,
    record_timings,
    resumed_partition,
    resumed_spans,
    save_ref,
    store_episodes,
    write_lines,
)

Log = Callable[[str], Any]


@dataclass
class CollectedEpisodes:
    """What holding one partition's conversations did."""

    ref: PartitionRef
    """The partition's record: its episodes and span files."""
    episodes: list[Episode]
    """Every episode of the partition, the kept ones of a resumed run included."""
    made: int
    """Conversations held by this run."""
    kept: int
    """Episodes kept from the run resumed."""

    def figures(self) -> dict[str, Any]:
        """For the step's metadata: run id, model, episodes, conversations made, episodes
        kept, completed and eval-error episodes, the partition's folder."""
        return {
            "run_id": self.ref.run_id,
            "model": self.ref.model_name,
            "episodes": len(self.episodes),
            "conversations_made": self.made,
            "kept_from_previous_run": self.kept,
            "completed": sum(1 for e in self.episodes if e.final_status == "completed"),
            "eval_errors": sum(1 for e in self.episodes if e.eval_error),
            "storage": self.ref.dir,
        }


class _Clock:
    """Laps of wall time: each `lap(phase)` is the time since the previous one."""

    def __init__(self, start: float) -> None:
        self.last = start
        self.phases: dict[str, float] = {}

    def lap(self, phase: str) -> None:
        now = time.time()
        self.phases[phase] = max(0.0, now - self.last)
        self.last = now


@dataclass
class _Progress:
    """Counts the episodes stored and says so, one line each."""

    total: int
    model_name: str
    log: Log
    counts: dict[str, int] = field(default_factory=lambda: {"n": 0, "completed": 0, "errors": 0})

    def stored(self, episode: Episode) -> None:
        self.counts["n"] += 1
        self.counts["completed"] += episode.final_status == "completed"
        self.counts["errors"] += bool(episode.eval_error)
        self.log(
            f"{self.counts['n']}/{self.total} episodes done ({self.counts['completed']} completed, "
            f"{self.counts['errors']} eval errors) for {self.model_name}"
        )


def collect_episodes(
    config: EvalConfig,
    root: Path,
    model_key: str,
    tasks: list[Task],
    *,
    run_id: str,
    dagster_run_id: str | None,
    resume: bool,
    redactor: Redactor,
    log: Log,
    run_started: float | None = None,
) -> CollectedEpisodes:
    """Hold the partition's conversations and store every episode (redacted) as it ends.

    `resume`: continue the agent's newest run of this model (a fresh run when there is
    none), holding again only the attempts missing or stored with an eval error. The
    agent's span files are recorded before the first conversation, so a run killed from
    then on leaves a record a resume reads the kept episodes' spans from; `extra_spans`
    follow. Refuses (InputError) a results folder that cannot be written, before the agent
    starts; raises AgentStartError (redacted, with the agent's log) when it does not start.
    Records the phases startup (from `run_started`, unix time), agent_start, conversations
    and shutdown in the partition's timings.json, and logs each.
    """
    check_result_folders(root, config)
    model = config.model(model_key)
    # The agent and the model it is started with; for an a2a target, its own folder or URL.
    agent_config, agent_model = agent_partition(config, model_key)
    ref = resumed_partition(root, model_key, config.agent_id, dagster_run_id) if resume else None
    resumed = ref is not None
    kept: list[Episode] = []
    # The agent `bat-pipeline run` started for this partition before Dagster (a first
    # attempt of a fresh run only: a retried step starts its own).
    ahead = None if resume else HEAD_STARTS.pop(model_key, None)
    if ref is None:
        ref = new_partition(root, config, model_key, run_id, dagster_run_id, keep=ahead is not None)
    else:
        kept = [e for e in load_episodes(ref) if not e.eval_error]
        lost: set[str] = set()
        if starts_agent(model) or (config.agentv is None and config.evalbench is None):
            # An agent killed before its span exporter flushed leaves completed episodes
            # without their spans: held again, or their verdicts would say "no spans found".
            lost = conversations_missing_spans(kept, ref.span_paths(), base=ref.dir)
            kept = [e for e in kept if e.conversation_id not in lost]
        log(
            f"resuming run {ref.run_id}: {len(kept)} episodes kept"
            + (f", {len(lost)} held again (their spans were lost with the agent)" if lost else "")
        )
    ref.started_at = ref.started_at or datetime.now(UTC).isoformat()
    ref.provenance = ref.provenance or run_provenance(config, tasks)
    ref.dir.mkdir(parents=True, exist_ok=True)
    save_ref(ref)

    launch = secrets.token_hex(4)
    suffix = f"-r{launch}" if needs_fresh_conversation_ids(agent_config, resumed) else ""
    attempts = plan_attempts(tasks, config.evaluation.k, kept, suffix)
    progress = _Progress(len(attempts), model.name, log)

    def store(episode: Episode) -> None:
        episode = redactor.record(episode)
        store_episodes(ref, [episode], save_record=True)
        progress.stored(episode)

    if not starts_agent(model) and config.agentv is not None:
        assert model.target is not None
        return _collect_from_target(config, model.target, ref, attempts, kept, store, log)

    user = simulated_user(config, tasks, redactor)
    if not starts_agent(model) and config.evalbench is not None:
        target, run = model.target, config.evalbench
        assert target is not None

        def converse() -> None:
            run_cli_conversations(
                target,
                attempts,
                concurrency=config.evaluation.concurrency,
                on_episode=store,
                user=user,
                isolate_home=run.isolate_home,
                harness=run.harness,
                user_max_turns=config.simulated_user.max_turns if config.simulated_user else None,
            )

        return _collect_from_target(config, target, ref, attempts, kept, store, log, produce=converse)
    extra_spans = [agent_config.resolve(p) for p in agent_config.evaluation.extra_spans]
    spans_name = resumed_spans(launch) if resumed else AGENT_SPANS
    launcher = AgentLauncher(agent_config, agent_model, ref.dir, log=log, spans_name=spans_name, redactor=redactor)
    workers = (model.target.workers if model.target else None) or config.evaluation.concurrency
    clock = _Clock(time.time() if run_started is None else run_started)
    clock.lap("startup")
    if attempts:
        try:
            with launcher.running(ahead) as agent:
                clock.lap("agent_start")
                ref.add_span_files([*agent.spans_files, *extra_spans])
                save_ref(ref)
                # Imported here: a2a-sdk is a third of the definitions' own import time, and
                # only this step needs it (`bat-pipeline run` imports it before forking).
                from bat_pipeline.resources.a2a_conversations import run_attempts

                asyncio.run(
                    run_attempts(
                        agent.url,
                        attempts,
                        model.name,
                        concurrency=workers,
                        on_episode=store,
                        turn_timeout_s=agent_config.evaluation.turn_timeout_s,
                        user=user,
                        user_max_turns=config.simulated_user.max_turns if config.simulated_user else None,
                    )
                )
                clock.lap("conversations")
                if agent.receiver is not None or _run_receiver_file(agent) is not None:
                    _wait_for_exported_spans(agent.receiver, ref, agent_config.evaluation.spans_wait_s, log)
        except BaseException as exc:
            # On an object store the agent's log and span files go up with the failure too
            # (after a step that succeeds, the handoff I/O manager uploads them): whoever
            # looks into it reads them there, not on the worker. The step's own error wins.
            with contextlib.suppress(StoreError):
                push_changed(ref.dir)
            if isinstance(exc, AgentStartError):  # not chained: the cause's message is not redacted
                raise AgentStartError(redactor.text(f"{model.name}: {exc}"), log_file=ref.log_file) from None
            raise
        clock.lap("shutdown")
    for phase, seconds in clock.phases.items():
        log(f"phase {phase}: {seconds:.2f}s")
    record_timings(ref.dir, {**dict.fromkeys(("agent_start", "conversations", "shutdown"), 0.0), **clock.phases})
    ref.add_span_files(extra_spans)
    ref.finished_at = datetime.now(UTC).isoformat()
    save_ref(ref)
    return CollectedEpisodes(ref=ref, episodes=load_episodes(ref), made=len(attempts), kept=len(kept))


def _run_receiver_file(agent: RunningAgent) -> Path | None:
    """The span file of `bat-pipeline run --otlp-port`, when this agent at `agent.url` reads it."""
    value = os.environ.get(OTLP_SPANS_VAR)
    return Path(value) if value and agent.process is None and Path(value) in agent.spans_files else None


def _wait_for_exported_spans(receiver: OtlpReceiver | None, ref: PartitionRef, wait_s: float, log) -> None:
    """Before the agent stops: wait, at most `wait_s`, until every episode's turns have
    their root spans (an exporter batches: the last turn's spans come seconds after its
    answer). What is still missing then may come with the agent's flush at exit. With the
    partition's own receiver each arrival wakes the wait; the run's (`--otlp-port`, another
    process) is looked at ten times a second."""
    episodes = load_episodes(ref)

    def complete() -> bool:
        return not conversations_missing_spans(episodes, ref.span_paths(), base=ref.dir)

    started = time.monotonic()
    if receiver is not None:
        held = receiver.wait_until(complete, wait_s)
    else:
        held = complete()
        while not held and time.monotonic() - started < wait_s:
            time.sleep(0.1)
            held = complete()
    if held:
        log(f"spans over OTLP complete after {time.monotonic() - started:.2f}s")
    else:
        log(f"spans of some conversations had not arrived over OTLP after {wait_s:g}s (evaluation.spans_wait_s)")


def simulated_user(config: EvalConfig, tasks: list[Task], redactor: Redactor) -> SimulatedUserClient | None:
    """The simulated user for the tasks that need one (engine.conversation), its key read
    from the project's `.env` and the shell; None when no task does. Refuses (InputError)
    a plan with turns left and no `simulated_user`, or one without its key."""
    if not scenarios_needing_user(config, tasks):
        return None
    assert config.simulated_user is not None
    try:
        return SimulatedUserClient(config.simulated_user, environ=config_environ(config), redactor=redactor)
    except JudgeConfigError as exc:
        raise InputError(str(config.source), str(exc), entry="simulated_user") from None


def _collect_from_target(
    config: EvalConfig,
    target: AgentvTarget,
    ref: PartitionRef,
    attempts: list[Attempt],
    kept: list[Episode],
    store: Callable[[Episode], None],
    log: Log,
    produce: Callable[[], None] | None = None,
) -> CollectedEpisodes:
    """An AgentV target's partition (or, with `produce`, an EvalBench CLI agent's
    conversations): no agent to start and no spans; the target resource produces the
    episodes. A failed healthcheck is recorded (its episodes stored, the record finished)
    before TargetHealthError fails the step."""
    start = time.perf_counter()

    def finish() -> None:
        record_timings(ref.dir, {"agent_start": 0.0, "conversations": time.perf_counter() - start, "shutdown": 0.0})
        ref.finished_at = datetime.now(UTC).isoformat()
        save_ref(ref)

    try:
        if produce is not None:
            produce()
        else:
            assert config.agentv is not None
            collect_target_episodes(
                target,
                config.agentv,
                attempts,
                ref.dir,
                concurrency=config.evaluation.concurrency,
                on_episode=store,
                log=log,
            )
    except TargetHealthError:
        finish()
        # The later steps do not run: the partition's results say what happened to each test.
        write_lines(ref, {"results.jsonl": result_lines(load_episodes(ref))})
        raise
    finish()
    return CollectedEpisodes(ref=ref, episodes=load_episodes(ref), made=len(attempts), kept=len(kept))
