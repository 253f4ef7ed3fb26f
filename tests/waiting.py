"""Waiting on another process without a fixed deadline (issue 40): a test waits as long as
the process's tree keeps using the CPU, and fails only after a stretch in which it used none
(a hang), naming what it waited for."""

from __future__ import annotations

import time
from collections.abc import Callable

import psutil

#: Seconds without any CPU use in the watched tree that count as a hang.
SILENCE = 120.0


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) used so far by process ``pid`` and its descendants."""
    total = 0.0
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0.0
    for proc in procs:
        try:
            t = proc.cpu_times()
            total += t.user + t.system + t.children_user + t.children_system
        except psutil.Error:
            pass
    return total


def wait_while_busy(pid: int, done: Callable[[], bool], what: str, *,
                    silence: float = SILENCE, poll: float = 0.2) -> None:
    """Return once ``done()``; while not, keep waiting as long as the tree of ``pid`` uses
    CPU, and raise AssertionError naming ``what`` after ``silence`` seconds in which it
    used none."""
    used, quiet_since = tree_cpu_seconds(pid), time.monotonic()
    while not done():
        time.sleep(poll)
        now = tree_cpu_seconds(pid)
        if now > used:
            used, quiet_since = now, time.monotonic()
        elif time.monotonic() - quiet_since > silence:
            raise AssertionError(f"{what}: no CPU used by process {pid} and its children for "
                                 f"{silence:.0f} s")
