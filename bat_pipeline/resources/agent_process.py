"""Starting and stopping the agent under test for one partition (SPEC §1).

The user's `config.yaml` is never written: the agent reads a temporary copy through
`CONFIG_PATH`, with its own free port and this partition's span file, so several
partitions (and several evaluations of the same agent) run side by side.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import httpx
import yaml

from bat_pipeline.engine.agent_folder import CONFIG_FILE, detect_layout
from bat_pipeline.engine.config.agent_yaml import check_telemetry_privacy, evaluation_config_copy, read_agent_config
from bat_pipeline.engine.contracts import EvalConfig, ModelSpec
from bat_pipeline.engine.environment import agent_environment
from bat_pipeline.engine.errors import InputError
from bat_pipeline.engine.privacy_floor import check_privacy_floors
from bat_pipeline.engine.redaction import Redactor
from bat_pipeline.resources.agent_files import scrub_agent_files
from bat_pipeline.resources.otlp_receiver import OtlpReceiver
from bat_pipeline.resources.ports import LOOPBACK, free_port, release
from bat_pipeline.resources.process_group import (
    GroupWatchdog,
    leads_live_group,
    prepare_child,
    wait_or_kill_group,
    watch_group,
)
from bat_pipeline.resources.tls import tls_context
from bat_pipeline.storage import AGENT_LOG, AGENT_SPANS, SPANS_DIR

LOG_TAIL_LINES = 30
OTLP_SPANS_VAR = "BAT_PIPELINE_OTLP_SPANS"
"""The span file of the receiver `bat-pipeline run --otlp-port` keeps open for the run:
read for agents at `agent.url` (their collector exports there)."""
PORT_VAR = "BAT_AGENT_PORT"
"""The agent's port, in its environment."""


class AgentStartError(RuntimeError):
    """The agent exited or never answered its agent card; carries its last log lines."""

    def __init__(self, message: str, log_file: Path | None = None):
        super().__init__(message)
        self.log_file = log_file
        """The agent's whole log, when there is one."""


@dataclass
class RunningAgent:
    url: str
    """Base URL the A2A client talks to."""
    spans_files: list[Path]
    """Span files this agent writes: the partition's own file first (none for an agent at
    `agent.url`), then `agent.spans`, absolute."""
    log_file: Path | None
    process: subprocess.Popen | None = None
    port: int | None = None
    command: list[str] = field(default_factory=list)
    log_offset: int = 0
    """Size of the log before this process started: what it wrote comes after."""
    tmpdir: Path | None = None
    """Holds the temporary config copy; removed when the agent stops."""
    cwd: Path | None = None
    adopted: bool = False
    """Started by another process (`bat-pipeline run`, ahead of the step; see
    `head_start`): this one cannot wait for it, so it watches its process group instead."""
    receiver: OtlpReceiver | None = None
    """The OTLP receiver writing the agent's spans to its span file (`receives_otlp`)."""
    watchdog: GroupWatchdog | None = None
    """Stops the agent's whole group if the process that started it dies (even by SIGKILL)."""

    def alive(self) -> bool:
        if self.process is None:
            return True
        if self.adopted:
            return leads_live_group(self.process.pid)
        return self.process.poll() is None

    def exit_code(self) -> int | None:
        """How the process ended, once it has; None when that cannot be known."""
        if self.process is None:
            return None
        if not self.adopted:
            return self.process.poll()
        # Another process's child, not reaped yet: the kernel keeps its wait status in the
        # last field of /proc/<pid>/stat.
        try:
            status = int(Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()[-1])
        except (OSError, IndexError, ValueError):
            return None
        return os.waitstatus_to_exitcode(status)


HEAD_STARTS: dict[str, RunningAgent] = {}
"""Agents `bat-pipeline run` launched before importing Dagster, by partition key. Each
partition's process is a fork of it and adopts its own agent (`AgentLauncher.running`), so
the agent starts while Dagster does; `bat-pipeline run` reaps them when the partitions end."""


def release_watchdogs() -> None:
    """In a fork of `bat-pipeline run`: close its copies of the head-started agents'
    watchdog pipes, so that the agents' groups are stopped as soon as `bat-pipeline run`
    itself is gone (a partition process that outlived it would hold them open)."""
    for agent in HEAD_STARTS.values():
        if agent.watchdog is not None:
            agent.watchdog.release()


def log_tail(log_file: Path | None, lines: int = LOG_TAIL_LINES, since: int = 0) -> str:
    """The last lines of the log, written after byte offset `since`."""
    if not log_file or not log_file.exists():
        return "(no log)"
    with open(log_file, "rb") as handle:
        handle.seek(since)
        text = handle.read().decode("utf-8", errors="replace").splitlines()
    return "\n".join(text[-lines:]) or "(empty log)"


def substitute(command: list[str], values: dict[str, str]) -> list[str]:
    """Each `{NAME}` of `values` replaced in every word of `command`; unknown braces stay."""
    out = []
    for part in command:
        for key, value in values.items():
            part = part.replace("{" + key + "}", value)
        out.append(part)
    return out


def build_command(config: EvalConfig) -> tuple[list[str], Path, Path | None]:
    """(command, cwd, config.yaml or None) for the agent folder of `config`.

    A standalone BAT agent runs `uv run .` in its folder; a blueprint agent
    `uv run . <agent>` in the blueprint root; anything else needs `agent.command`."""
    layout = detect_layout(config.agent_dir)
    target = config.agent
    if target.command:
        cwd = config.resolve(target.cwd) if target.cwd else config.agent_dir
        return list(target.command), cwd, layout.config_file
    command = layout.start_command()
    if command:
        return command, layout.root, layout.config_file
    raise InputError(
        str(config.source),
        "this folder is neither a standalone BAT agent "
        "(config.yaml, agent.json, pyproject.toml) nor a blueprint agent; say how to "
        "start it with `agent.command`, or where it runs with `agent.url`",
        entry="agent",
        field="command",
    )


def receives_otlp(config: EvalConfig) -> bool:
    """Whether the partition runs an OTLP receiver for its agent: `agent.spans: otlp`, or
    an `agent.command` agent given no other way to hand over spans (no `agent.spans`, no
    `{spans}` in its command, no config.yaml whose telemetry names the file)."""
    target = config.agent
    if target.url:
        return False
    if target.otlp:
        return True
    if not target.command or target.spans:
        return False
    return detect_layout(config.agent_dir).config_file is None and not any("{spans}" in w for w in target.command)


class AgentLauncher:
    """Starts one agent process for one model, and always stops its whole process group."""

    def __init__(
        self,
        config: EvalConfig,
        model: ModelSpec,
        workdir: Path,
        *,
        environ: dict[str, str] | None = None,
        log=None,
        spans_name: str = AGENT_SPANS,
        redactor: Redactor | None = None,
    ):
        """`redactor`: secrets removed from the span files and the log in `workdir` each
        time an agent process has stopped (scrub_agent_files)."""
        self.config = config
        self.model = model
        self.workdir = Path(workdir)
        self.environ = dict(os.environ if environ is None else environ)
        self.log = log or (lambda msg: None)
        self.spans_name = spans_name
        self.redactor = redactor

    def preflight(self) -> list[str]:
        """Refuse before anything starts: unreadable config, redacting privacy (in
        config.yaml, or a floor set in a BAT agent's code), no `uv`. Returns warnings (a
        privacy floor that cannot be read before the agent runs)."""
        if self.config.agent.url:
            return []
        command, _, config_file = build_command(self.config)
        if config_file is not None:
            check_telemetry_privacy(read_agent_config(config_file, self.environ), config_file)
        layout = detect_layout(self.config.agent_dir)
        warnings = check_privacy_floors(layout.agent_dir, layout.root) if layout.kind != "custom" else []
        if command and command[0] == "uv" and shutil.which("uv", path=self.environ.get("PATH")) is None:
            raise InputError(
                str(self.config.agent_dir),
                "the agent is started with `uv run`, but `uv` "
                "is not on PATH: install it (pip install uv) or set `agent.command`",
                entry="agent",
                field="command",
            )
        return warnings

    def head_start(self) -> RunningAgent | None:
        """Launch the agent without waiting for it (None for an agent at `agent.url`), for
        a process forked later to adopt with `running(ahead=...)`."""
        if self.config.agent.url or receives_otlp(self.config):
            # An agent exporting OTLP needs its receiver in the partition's own process.
            return None
        spans_dir = self.workdir / SPANS_DIR
        spans_dir.mkdir(parents=True, exist_ok=True)
        return self._start(free_port(), spans_dir)

    @contextlib.contextmanager
    def running(self, ahead: RunningAgent | None = None) -> Iterator[RunningAgent]:
        """The agent, ready; stopped (TERM, then KILL) when the block ends, whatever happens.
        `ahead`: an agent another process launched for this one (`head_start`), adopted as
        the first attempt."""
        for warning in self.preflight():
            self.log(f"warning: {warning}")
        spans_dir = self.workdir / SPANS_DIR
        spans_dir.mkdir(parents=True, exist_ok=True)
        if self.config.agent.url:
            files = [self.config.resolve(p) for p in self.config.agent.span_files]
            if self.environ.get(OTLP_SPANS_VAR):
                files.append(Path(self.environ[OTLP_SPANS_VAR]))
            yield RunningAgent(url=self.config.agent.url.rstrip("/"), spans_files=files, log_file=None)
            return
        receiver = None
        if receives_otlp(self.config):
            receiver = OtlpReceiver(spans_dir / self.spans_name, log=self.log).start()
            self.log(f"OTLP receiver for {self.model.name} at {receiver.endpoint}, writing {receiver.spans_file}")
        try:
            yield from self._attempts(ahead, spans_dir, receiver)
        finally:
            # After the agent stopped: what its exporter flushed at exit has arrived.
            if receiver is not None:
                receiver.stop()
                self.log(receiver.summary())

    def _attempts(
        self, ahead: RunningAgent | None, spans_dir: Path, receiver: OtlpReceiver | None
    ) -> Iterator[RunningAgent]:
        attempts = 3
        for attempt in range(attempts):
            if ahead is not None:
                agent, ahead = replace(ahead, adopted=True), None
                port = agent.port
                self.log(
                    f"agent for {self.model.name}, started ahead by bat-pipeline run: "
                    f"{' '.join(agent.command)} (cwd {agent.cwd}, port {port})"
                )
            else:
                port = free_port()
                agent = self._start(port, spans_dir, receiver)
            try:
                self._wait_ready(agent)
            except AgentStartError as exc:
                self._stop(agent)
                address_taken = "address already in use" in log_tail(agent.log_file, since=agent.log_offset).lower()
                if address_taken and attempt + 1 < attempts:
                    self.log(f"port {port} was taken before the agent bound it; trying another")
                    continue
                if address_taken:
                    raise AgentStartError(
                        f"{exc}\nthe agent found its port taken {attempts} times, each time given another "
                        f"free port: if its command or config fixes a port, make it listen on the port given "
                        f"as `{{port}}` in agent.command (also in $BAT_AGENT_PORT and in endpoint.port of "
                        f"the config at $CONFIG_PATH)"
                    ) from None
                raise exc
            except BaseException:
                self._stop(agent)
                raise
            try:
                yield agent
            finally:
                self._stop(agent)
            return

    def _start(self, port: int, spans_dir: Path, receiver: OtlpReceiver | None = None) -> RunningAgent:
        command, cwd, config_file = build_command(self.config)
        spans_file = spans_dir / self.spans_name
        log_file = self.workdir / AGENT_LOG
        env = agent_environment(self.config, self.model, base_env=self.environ)
        env.setdefault("PYTHONUNBUFFERED", "1")
        if receiver is not None:
            # The eval file's own values win (agent.env, the model's env); the shell's do not.
            chosen = {**self.config.agent.env, **self.model.env}
            env.update({k: v for k, v in receiver.environment().items() if k not in chosen})
        # In the partition's folder, not /tmp: a killed pipeline leaves it where the next
        # run of the partition clears it. It holds ${VAR} references, never their values.
        tmpdir = Path(tempfile.mkdtemp(prefix=".agent-config-", dir=self.workdir))
        config_copy = tmpdir / CONFIG_FILE
        if config_file is not None:
            # Read without expanding ${VAR}: the copy must not hold secrets the original
            # only referenced; the agent expands them itself.
            original = read_agent_config(config_file)
            copy = evaluation_config_copy(
                original,
                port=port,
                host=LOOPBACK,
                spans_file=spans_file,
                otlp_endpoint=receiver.endpoint if receiver is not None else None,
            )
            config_copy.write_text(yaml.safe_dump(copy, sort_keys=False), encoding="utf-8")
            env["CONFIG_PATH"] = str(config_copy)
        env[PORT_VAR] = str(port)
        command = substitute(
            command, {"python": sys.executable, "port": str(port), "config": str(config_copy), "spans": str(spans_file)}
        )
        log_handle = open(log_file, "ab")
        log_offset = log_handle.tell()
        self.log(f"starting agent for {self.model.name}: {' '.join(command)} (cwd {cwd}, port {port})")
        try:
            process = subprocess.Popen(
                command,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log_handle,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=prepare_child,
            )
        except FileNotFoundError as exc:
            shutil.rmtree(tmpdir, ignore_errors=True)
            raise AgentStartError(f"cannot start the agent: {exc}") from exc
        finally:
            log_handle.close()
        files = [spans_file, *(self.config.resolve(p) for p in self.config.agent.span_files)]
        return RunningAgent(
            watchdog=watch_group(process.pid),
            url=f"http://{LOOPBACK}:{port}",
            spans_files=files,
            log_file=log_file,
            process=process,
            port=port,
            command=command,
            log_offset=log_offset,
            tmpdir=tmpdir,
            cwd=cwd,
            receiver=receiver,
        )

    def _wait_ready(self, agent: RunningAgent) -> None:
        # A TCP connect is not enough: uvicorn accepts before the app is ready. The agent
        # card answering 200 with JSON is.
        deadline = time.monotonic() + self.config.evaluation.agent_startup_timeout_s
        url = agent.url + self.config.agent.ready_path
        with httpx.Client(timeout=2.0, verify=tls_context()) as client:
            while True:
                if not agent.alive():
                    code = agent.exit_code()
                    raise AgentStartError(
                        f"the agent exited{'' if code is None else f' with code {code}'} before it was ready "
                        f"({' '.join(agent.command)}); log: {agent.log_file}\n"
                        f"last lines:\n{log_tail(agent.log_file, since=agent.log_offset)}"
                    )
                try:
                    response = client.get(url)
                    if response.status_code == 200 and response.json():
                        return
                except (httpx.HTTPError, ValueError):
                    pass
                if time.monotonic() > deadline:
                    raise AgentStartError(
                        f"the agent did not answer {url} within "
                        f"{self.config.evaluation.agent_startup_timeout_s:g}s; log: {agent.log_file}\n"
                        f"last lines:\n{log_tail(agent.log_file, since=agent.log_offset)}"
                    )
                time.sleep(0.1)

    def _stop(self, agent: RunningAgent) -> None:
        """TERM to the whole group (spans get flushed), KILL after the shutdown timeout."""
        process = agent.process
        if process is not None:
            pgid = process.pid
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGTERM)
            if agent.adopted:
                # Not this process's child: its parent reaps it; the group tells when it is gone.
                if not wait_or_kill_group(pgid, self.config.evaluation.agent_shutdown_timeout_s):
                    self.log("the agent did not stop after SIGTERM; sent SIGKILL")
            else:
                try:
                    process.wait(timeout=self.config.evaluation.agent_shutdown_timeout_s)
                except subprocess.TimeoutExpired:
                    self.log("the agent did not stop after SIGTERM; sending SIGKILL")
                # Children (e.g. the python under `uv run`) may outlive the leader.
                wait_or_kill_group(pgid, self.config.evaluation.agent_shutdown_timeout_s)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=5)
            if self.redactor:
                scrub_agent_files(self.workdir, self.redactor)
        if agent.watchdog is not None and not agent.adopted:
            agent.watchdog.reap()  # the group is gone: the watchdog ends with nothing to do
        if agent.tmpdir:
            shutil.rmtree(agent.tmpdir, ignore_errors=True)
        release(agent.port)
