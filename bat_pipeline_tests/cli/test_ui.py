"""`bat-pipeline ui` as a user starts it, with nothing in the environment but DAGSTER_HOME and
the storage root: refusals before anything starts (a broken eval.yaml, a busy port, nothing
to show), the agent it picks when none is named (the newest run's), and the UI on the
bundled example, whose code location loads, stopped whole by SIGTERM within 10 s."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from bat_pipeline.cli import _ui_agent
from bat_pipeline.engine.errors import InputError
from bat_pipeline.locations import BUNDLED_AGENT_DIR
from bat_pipeline.resources.ports import free_port
from bat_pipeline.resources.warehouse import Warehouse
from bat_pipeline_tests.support import local_http
from bat_pipeline_tests.support.example_agent import copy_example_agent
from bat_pipeline_tests.support.polling import wait_for
from bat_pipeline_tests.support.processes import processes

BAT_PIPELINE = str(Path(sys.executable).parent / "bat-pipeline")
STOP_LIMIT_S = 10.0
LOCATIONS = """{ workspaceOrError { __typename ... on Workspace { locationEntries {
    name loadStatus locationOrLoadError { __typename ... on PythonError { message } } } } } }"""


def _env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "dagster_home"
    home.mkdir(exist_ok=True)
    # The storage root in the test's folder: never the bundled example's own.
    return {"DAGSTER_HOME": str(home), "BAT_PIPELINE_HOME": str(tmp_path / "home")}


def _cli(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [BAT_PIPELINE, *args],
        cwd=tmp_path,
        env=_env(tmp_path),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def test_a_broken_eval_yaml_is_refused_as_run_refuses_it(tmp_path):
    agent = copy_example_agent(tmp_path / "weather_agent")
    eval_file = agent / "eval" / "eval.yaml"
    eval_file.write_text(eval_file.read_text().replace("provider: openai", "provider: opneai", 1))
    port = free_port()
    ui = _cli(["ui", str(agent), "--port", str(port)], tmp_path)
    run = _cli(["run", str(agent)], tmp_path)
    assert (ui.returncode, run.returncode) == (2, 2), ui.stderr + ui.stdout
    assert ui.stderr == run.stderr and ui.stderr.startswith(f"error: {eval_file}"), ui.stderr
    assert "opneai" in ui.stderr and "Traceback" not in ui.stderr
    assert ui.stdout == "" and not _listening(port)


def test_a_busy_port_is_refused_with_a_clear_message(tmp_path):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        ui = _cli(["ui", str(BUNDLED_AGENT_DIR), "--port", str(port)], tmp_path)
    assert ui.returncode == 2, ui.stderr + ui.stdout
    assert ui.stderr == (
        f"error: 127.0.0.1:{port}: the port is in use (another `bat-pipeline ui` or "
        f"`dagster dev`?): stop it, or choose another port with --port\n"
    )
    assert "Dagster UI" not in ui.stdout


def test_with_no_agent_named_ui_shows_the_newest_runs_agent_or_says_there_is_nothing(tmp_path, monkeypatch):
    from bat_pipeline_tests.resources.test_warehouse import TASKS, episodes_passing, ref

    empty = tmp_path / "empty"
    empty.mkdir()
    refused = _cli(["ui", "--port", str(free_port())], empty)
    assert refused.returncode == 2, refused.stderr
    assert "nothing to show: no agent folder here and no results yet" in refused.stderr
    assert "bat-pipeline demo" in refused.stderr and refused.stdout == ""
    assert not (empty / ".bat_pipeline").exists()  # nothing left behind in the folder

    # Two agents in the history: the newer run's agent is shown, and the terminal says so.
    older, newer = (copy_example_agent(tmp_path / name) for name in ("older_agent", "newer_agent"))
    wh = Warehouse(tmp_path / "home" / "warehouse.duckdb")
    for run_id, agent in (("20260101T000000Z-a", older), ("20260102T000000Z-b", newer)):
        wh.write_partition(
            ref(tmp_path, run_id, "m").model_copy(update={"agent_dir": agent}), episodes_passing(1), TASKS
        )
    monkeypatch.setenv("BAT_PIPELINE_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(empty)
    assert _ui_agent(None) == newer
    # In an agent folder, that folder; a name given, that agent.
    monkeypatch.chdir(older)
    assert _ui_agent(None) == older.resolve() and _ui_agent(str(newer)) == newer.resolve()
    monkeypatch.chdir(empty)
    monkeypatch.setenv("BAT_PIPELINE_HOME", str(empty / "nowhere"))
    with pytest.raises(InputError, match="nothing to show"):
        _ui_agent(None)


def _processes() -> dict[int, tuple[int, int]]:
    """pid → (parent pid, process group) of every live, non-zombie process."""
    return {p.pid: (p.ppid, p.pgid) for p in processes()}


def _family(root: int) -> tuple[set[int], set[int]]:
    """The processes descending from `root` (itself included) and their process groups."""
    processes = _processes()
    family, grew = {root}, True
    while grew:
        children = {pid for pid, (ppid, _) in processes.items() if ppid in family} - family
        family |= children
        grew = bool(children)
    return family, {processes[pid][1] for pid in family if pid in processes}


def _code_location_loaded(url: str, ui: subprocess.Popen, timeout_s: float = 240) -> list[dict]:
    def loaded() -> list[dict] | None:
        assert ui.poll() is None, f"the UI exited with {ui.returncode}"
        try:
            answer = local_http.post(url + "/graphql", json={"query": LOCATIONS}, timeout=10).json()
            entries = answer["data"]["workspaceOrError"]["locationEntries"]
        except (httpx.TransportError, KeyError, TypeError, ValueError):
            return None
        return entries if entries and all(e["loadStatus"] == "LOADED" for e in entries) else None

    return wait_for(loaded, timeout_s, interval_s=0.2, what=f"a loaded code location on {url}")


@pytest.mark.slow(seconds=15)
def test_the_ui_serves_the_bundled_example_and_sigterm_stops_its_whole_group(tmp_path):
    port = free_port()
    log = tmp_path / "ui.log"
    # Started where a dagster.yaml lies that is not its home's (as in the repository's root).
    (tmp_path / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    with open(log, "wb") as out:
        ui = subprocess.Popen(
            [BAT_PIPELINE, "ui", str(BUNDLED_AGENT_DIR), "--port", str(port)],
            cwd=tmp_path,
            env=_env(tmp_path),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        entries = _code_location_loaded(f"http://127.0.0.1:{port}", ui)
        family, groups = _family(ui.pid)
    except BaseException:
        os.killpg(ui.pid, signal.SIGKILL)
        raise
    assert [e["locationOrLoadError"]["__typename"] for e in entries] == ["RepositoryLocation"], entries
    assert len(family) >= 4 and len(groups) >= 2, (family, groups)  # dagster dev runs in a group of its own

    stopped_at = time.monotonic()
    ui.send_signal(signal.SIGTERM)
    alive = family
    while alive and time.monotonic() - stopped_at < STOP_LIMIT_S:
        time.sleep(0.1)
        alive = {pid for pid, (_, group) in _processes().items() if pid in family or group in groups}
    leftover = {pid: _cmdline(pid) for pid in alive}
    for group in groups:  # leave nothing running, whatever the assertion says
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGKILL)
    assert not leftover, f"alive {STOP_LIMIT_S} s after SIGTERM: {leftover}\n{log.read_text()[-3000:]}"
    assert ui.wait(5) == 128 + signal.SIGTERM
    # Started without Dagster's warnings (`dg dev` supersedes, a dagster.yaml not its home's).
    started = log.read_text(encoding="utf-8", errors="replace")
    assert "Serving dagster-webserver" in started, started[-3000:]
    assert "SupersessionWarning" not in started and "Found a dagster instance configuration" not in started


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:200]
    except OSError:
        return "(gone)"
