"""An agent command's wrapper that records, when the agent starts, the listening TCP sockets
of every process of the run, then becomes the agent: `python listening_sockets.py OUT
TEST_PID -- COMMAND...`. The run's processes: each process whose environment has the run's
BAT_PIPELINE_HOME, and their ancestors below the test's process TEST_PID (a process forked
from the tests' fork server shows the server's environment in /proc, not its own).
The agent starts inside the episodes step, while every server the run started (a local Dask
cluster's scheduler, workers, nannies and dashboard) is listening."""

from __future__ import annotations

import json
import os
import sys

import psutil


def _same_run(process: psutil.Process, home: str) -> bool:
    try:
        return process.environ().get("BAT_PIPELINE_HOME") == home
    except (psutil.Error, OSError):
        return False


def listening(home: str, test_pid: int) -> list[dict[str, object]]:
    """(pid, command, address, port) of every listening TCP socket of the run's processes."""
    pids = {p.pid: p for p in psutil.process_iter() if _same_run(p, home)}
    for process in list(pids.values()):
        try:
            for parent in process.parents():
                if parent.pid == test_pid:
                    break
                pids[parent.pid] = parent
        except psutil.Error:
            continue
    found = []
    for conn in psutil.net_connections(kind="tcp"):
        if conn.status == psutil.CONN_LISTEN and conn.pid in pids:
            try:
                command = " ".join(pids[conn.pid].cmdline())[:200]
            except psutil.Error:
                command = "?"
            found.append({"pid": conn.pid, "command": command, "address": conn.laddr.ip, "port": conn.laddr.port})
    return found


if __name__ == "__main__":
    out, test_pid, separator, *command = sys.argv[1:]
    assert separator == "--" and command, "usage: listening_sockets.py OUT TEST_PID -- COMMAND..."
    with open(out, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(listening(os.environ["BAT_PIPELINE_HOME"], int(test_pid))) + "\n")
    os.execvp(command[0], command)
