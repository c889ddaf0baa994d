"""Processes this machine starts for a run (agents, servers, commands), each in a process
group of its own: dying with the process that started them, and stopped group and all."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import time
from pathlib import Path

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    # Linux: the agent gets SIGTERM if the pipeline process dies (even by SIGKILL), so no
    # agent outlives a killed run. Tied to the spawning *thread*: spawn from the step's
    # own thread, which lives as long as the agent is needed.
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes of a process group, read from /proc."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        # After the command name: state, ppid, pgrp, ...
        if fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(stat.parent.name))
    return members


def group_alive(pgid: int) -> bool:
    if not Path("/proc/self/stat").exists():
        try:
            os.killpg(pgid, 0)
            return True
        except (ProcessLookupError, PermissionError):
            return False
    return bool(group_members(pgid))


def wait_or_kill_group(pgid: int, grace_s: float) -> bool:
    """Wait up to `grace_s` for the group to be gone, then SIGKILL what is left; whether it
    went by itself."""
    deadline = time.monotonic() + grace_s
    while group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if group_alive(pgid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
        return False
    return True


def stop_process_group(process: subprocess.Popen, grace_s: float, first_signal: int = signal.SIGTERM) -> None:
    """Stop a process started with `start_new_session=True` and everything in its group:
    `first_signal` to the group, SIGKILL to whatever is left after `grace_s`; the leader is
    reaped. A group already gone is no error."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, first_signal)
    wait_or_kill_group(process.pid, grace_s)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=5)
