"""Ports handed to the processes a run starts: one another process holds (another run whose
agent has not bound its port yet) is not handed out again until that process lets it go."""

from __future__ import annotations

import subprocess
import sys

from bat_pipeline.resources import ports

HOLDER = """
import sys
from bat_pipeline.resources.ports import free_port
print(free_port(), flush=True)
sys.stdin.readline()
"""


def drawing_first(monkeypatch, port: int) -> None:
    """The kernel's next draw is `port`, then whatever it gives."""
    first = iter([port])
    real = ports._draw
    monkeypatch.setattr(ports, "_draw", lambda host: next(first, None) or real(host))


def test_a_port_another_process_holds_is_not_handed_out_until_it_ends(monkeypatch):
    holder = subprocess.Popen([sys.executable, "-c", HOLDER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        held = int(holder.stdout.readline())
        drawing_first(monkeypatch, held)
        other = ports.free_port()
        assert other != held
        ports.release(other)
    finally:
        holder.communicate("\n", timeout=10)
    assert holder.returncode == 0
    drawing_first(monkeypatch, held)
    assert ports.free_port() == held
    ports.release(held)


def test_a_released_port_can_be_handed_out_again(monkeypatch):
    port = ports.free_port()
    drawing_first(monkeypatch, port)
    again = ports.free_port()  # held by this process: drawn again, not handed out
    assert again != port
    ports.release(port)
    ports.release(again)
    drawing_first(monkeypatch, port)
    assert ports.free_port() == port
    ports.release(port)
