"""Process groups as the pipeline starts, watches and stops them (resources.process_group), on
real processes: a group lives while any member does, whatever its leader; zombies count for
nothing; a group that ignores SIGTERM is killed once the grace period is over; what the
pipeline starts gets SIGTERM's default effect even when the pipeline ignores it."""

from __future__ import annotations

import os
import signal
import subprocess
import time

from bat_pipeline.resources.process_group import (
    group_alive,
    group_members,
    leads_live_group,
    prepare_child,
    stop_process_group,
    wait_or_kill_group,
)
from bat_pipeline_tests.support.polling import wait_for


def test_a_group_lives_while_a_member_does_though_its_leader_is_a_zombie():
    # The leader starts a member and exits; unreaped, it stays a zombie.
    leader = subprocess.Popen(
        ["sh", "-c", "sleep 30 & echo $!"], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        member = int(leader.stdout.readline())
        wait_for(lambda: not leads_live_group(leader.pid), 10, what="the leader to exit")
        assert leads_live_group(member) is False  # in the leader's group, not leading one
        assert group_members(leader.pid) == [member]
        assert group_alive(leader.pid)

        os.kill(member, signal.SIGKILL)
        wait_for(lambda: not group_alive(leader.pid), 10, what="the member to die")
        assert group_members(leader.pid) == []
    finally:
        with_group_killed(leader)
    assert group_members(leader.pid) == [] and not group_alive(leader.pid)


def test_a_running_leader_is_alive_and_a_group_deaf_to_sigterm_is_killed_after_the_grace():
    deaf = subprocess.Popen(["sh", "-c", "trap '' TERM; sleep 30 & wait"], start_new_session=True)
    try:
        wait_for(lambda: len(group_members(deaf.pid)) == 2, 10, what="the shell and its sleep")
        assert leads_live_group(deaf.pid) and group_alive(deaf.pid)
        os.killpg(deaf.pid, signal.SIGTERM)
        started = time.monotonic()
        assert wait_or_kill_group(deaf.pid, 0.5) is False  # still there after the grace: killed
        assert 0.5 <= time.monotonic() - started < 5
        wait_for(lambda: not group_alive(deaf.pid), 10, what="the killed group to go")
    finally:
        with_group_killed(deaf)


def test_a_group_that_ends_on_sigterm_is_stopped_without_sigkill():
    polite = subprocess.Popen(["sleep", "30"], start_new_session=True)
    stop_process_group(polite, grace_s=10)
    assert polite.returncode == -signal.SIGTERM
    assert group_members(polite.pid) == [] and not group_alive(polite.pid)


def test_what_the_pipeline_starts_stops_on_sigterm_though_the_pipeline_ignores_it():
    """While Dagster runs steps, SIGTERM has SIGINT's disposition: SIG_IGN in a pipeline
    started in the background by a non-interactive shell, and exec keeps an ignored signal."""
    ignored = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        started = subprocess.Popen(["sleep", "30"], start_new_session=True, preexec_fn=prepare_child)
        plain = subprocess.Popen(["sleep", "30"], start_new_session=True)
    finally:
        for sig, handler in ignored.items():
            signal.signal(sig, handler)
    try:
        assert _ignored(plain.pid) & {signal.SIGTERM, signal.SIGINT}  # what it would be without
        assert not _ignored(started.pid) & {signal.SIGTERM, signal.SIGINT}
        stop_process_group(started, grace_s=10)
        assert started.returncode == -signal.SIGTERM
    finally:
        with_group_killed(plain)
        with_group_killed(started)


def _ignored(pid: int) -> set[int]:
    """The signals process `pid` ignores (SigIgn in /proc/<pid>/status)."""
    status = dict(line.split(":\t", 1) for line in open(f"/proc/{pid}/status").read().splitlines() if ":\t" in line)
    mask = int(status["SigIgn"], 16)
    return {sig for sig in range(1, 65) if mask & (1 << (sig - 1))}


def with_group_killed(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait(timeout=10)
