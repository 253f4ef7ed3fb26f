"""Waiting on another process without a fixed deadline (issue 40): a test waits as long as
the process's tree keeps using the CPU, and fails only after a stretch in which it used none
(a hang), naming what it waited for."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import psutil

#: Seconds without any CPU use in the watched tree that count as a hang.
SILENCE = 120.0


def tree_cpu_seconds(pid: int, *, include_root: bool = True) -> float:
    """CPU seconds (user + system) used so far by process ``pid`` and its descendants
    (only by its descendants with ``include_root=False``)."""
    total = 0.0
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)][0 if include_root else 1:]
    except psutil.Error:
        return 0.0
    for proc in procs:
        try:
            t = proc.cpu_times()
            total += t.user + t.system + (t.children_user + t.children_system
                                          if include_root or proc is not root else 0.0)
        except psutil.Error:
            pass
    return total


def wait_while_busy(pid: int, done: Callable[[], bool], what: str, *,
                    silence: float = SILENCE, poll: float = 0.2,
                    include_root: bool = True) -> None:
    """Return once ``done()``; while not, keep waiting as long as the tree of ``pid`` uses
    CPU, and raise AssertionError naming ``what`` after ``silence`` seconds in which it
    used none."""
    used, quiet_since = tree_cpu_seconds(pid, include_root=include_root), time.monotonic()
    while not done():
        time.sleep(poll)
        now = tree_cpu_seconds(pid, include_root=include_root)
        if now > used:
            used, quiet_since = now, time.monotonic()
        elif time.monotonic() - quiet_since > silence:
            raise AssertionError(f"{what}: no CPU used by process {pid} and its children for "
                                 f"{silence:.0f} s")


def run_while_busy(args: Sequence[str], what: str, *, check: bool = False,
                   silence: float = SILENCE,
                   **popen_kwargs: Any) -> subprocess.CompletedProcess[str]:
    """``subprocess.run(args, capture_output=True, text=True)`` with no fixed deadline:
    waits as long as the child's tree uses CPU; after ``silence`` seconds in which it used
    none, kills it and raises AssertionError naming ``what``.  ``check``: raise
    CalledProcessError on a non-zero exit, as ``subprocess.run`` does.

    >>> import sys
    >>> run_while_busy([sys.executable, "-c", "print(6 * 7)"], "a sum").stdout
    '42\\n'
    """
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            **popen_kwargs)
    outputs: list[str] = []
    reader = threading.Thread(target=lambda: outputs.extend(proc.communicate()), daemon=True)
    reader.start()
    try:
        wait_while_busy(proc.pid, lambda: not reader.is_alive(), what, silence=silence)
    finally:
        if reader.is_alive():  # a hang: nothing is left running behind the test
            proc.kill()
            reader.join()
    done = subprocess.CompletedProcess(args, proc.returncode, outputs[0], outputs[1])
    if check:
        done.check_returncode()
    return done


def wait_for_nodes_while_busy(cluster: Any, what: str = "Ray's test nodes starting", *,
                              silence: float = SILENCE) -> None:
    """``cluster.wait_for_nodes()`` (a ``ray.cluster_utils.Cluster``) with no fixed deadline:
    keeps waiting as long as the processes this process started (the nodes' daemons among
    them) use CPU."""
    def started() -> bool:
        try:
            cluster.wait_for_nodes(timeout=5)
        except TimeoutError:
            return False
        return True

    wait_while_busy(os.getpid(), started, what, silence=silence, include_root=False)
