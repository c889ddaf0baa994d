"""The watchdog of one agent's process group: `python -I -S group_watchdog.py PGID GRACE_S`,
its stdin the read end of a pipe whose only writer is the process that started the agent.

PR_SET_PDEATHSIG reaches only the agent's first process (`uv run`, a shell): its children
live on when the pipeline is SIGKILLed. This process, in a session of its own, waits for
end-of-file on stdin — the pipeline is gone, however it died — and then stops the whole
group: SIGTERM, and SIGKILL after GRACE_S. It exits by itself once the group is gone (the
pipeline stopped the agent). Standard library only, run without site-packages: it starts
in milliseconds and imports nothing of the pipeline."""

from __future__ import annotations

import os
import select
import signal
import sys
import time

POLL_S = 0.5
"""How often the group is checked while the pipeline lives."""


def group_exists(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def watch(pgid: int, grace_s: float, stdin: int = 0) -> bool:
    """Block until the pipe closes or the group is gone; stop the group if it is still
    there then. Whether it had to."""
    while group_exists(pgid):
        ready, _, _ = select.select([stdin], [], [], POLL_S)
        if ready and not os.read(stdin, 4096):
            break
    else:
        return False
    if not group_exists(pgid):
        return False
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + grace_s
    while group_exists(pgid) and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return True


if __name__ == "__main__":
    # Whatever the pipeline's dispositions were (an ignored SIGTERM is inherited).
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    watch(int(sys.argv[1]), float(sys.argv[2]))
