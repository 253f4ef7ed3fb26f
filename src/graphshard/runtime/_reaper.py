"""Stop a local Ray's processes when the process that started it dies without stopping them.

A Ray that ``ray.init`` starts stops with its driver when the driver exits, even on an
exception.  After ``kill -9`` of the driver its GCS and raylet die with it (Ray ties them to
their parent), but the agents the raylet started (dashboard agent, runtime-env agent) live on,
orphaned.  :func:`watch` starts a small process beside the driver that records the local
Ray's process tree while the driver lives and, once the driver is gone, stops whatever of that
tree still runs.  It exits by itself once that tree is gone (Ray was shut down).

Processes are found by tree, never by name: the roots are the processes ``ray.init`` started
(new descendants of the driver), each known by its PID and start time, so a PID the system
reuses for another process is never stopped.  Needs psutil (which Ray installs).

Example:
    >>> import subprocess, sys, time, psutil
    >>> daemon = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    >>> watcher = watch([daemon.pid])  # this process lives on: the daemon is left alone
    >>> time.sleep(0.5); daemon.poll() is None
    True
    >>> daemon.kill(); _ = daemon.wait(); _ = watcher.wait(timeout=60)  # tree gone: it exits
    >>> watcher.returncode
    0
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterable

__all__ = ["TICK", "watch"]

#: Seconds between two looks at the driver and the tree.
TICK = 0.5


def watch(roots: Iterable[int]) -> subprocess.Popen[bytes] | None:
    """Start the watcher of the process trees under ``roots`` (this process's children or
    deeper), to stop them when this process dies; None when there is nothing to watch.

    The watcher runs in its own session, so a Ctrl-C of the terminal reaches the driver
    (which then stops Ray itself), not the watcher.
    """
    pids = sorted({int(p) for p in roots})
    if not pids:
        return None
    return subprocess.Popen(
        [sys.executable, "-m", __name__, str(os.getpid()), *map(str, pids)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, start_new_session=True)


def _children_of() -> dict[int, list[int]]:
    """Every process's children, from one pass over the process table."""
    import psutil

    kids: dict[int, list[int]] = {}
    for proc in psutil.process_iter(["ppid"]):
        ppid = proc.info.get("ppid")
        if ppid is not None:
            kids.setdefault(ppid, []).append(proc.pid)
    return kids


def _started(pid: int) -> float | None:
    """The start time of process ``pid``, None when it is gone (or a zombie)."""
    import psutil

    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return None
        return proc.create_time()
    except psutil.Error:
        return None


def _grow(tracked: dict[int, float]) -> None:
    """Add the descendants of the tracked processes still alive; drop the dead ones."""
    for pid, born in list(tracked.items()):
        if _started(pid) != born:
            del tracked[pid]
    kids = _children_of()
    todo = list(tracked)
    while todo:
        for child in kids.get(todo.pop(), []):
            if child not in tracked and child != os.getpid():
                child_born = _started(child)
                if child_born is not None:
                    tracked[child] = child_born
                    todo.append(child)


def _stop(tracked: dict[int, float]) -> int:
    """Kill the tracked processes that are still the processes first seen; how many."""
    import psutil

    procs = []
    for pid, born in tracked.items():
        with contextlib.suppress(psutil.Error):
            proc = psutil.Process(pid)
            if proc.create_time() == born:
                proc.kill()
                procs.append(proc)
    psutil.wait_procs(procs, timeout=30)
    return len(procs)


def run(driver: int, roots: list[int]) -> int:
    """The watcher's loop: track the trees under ``roots`` while ``driver`` is this
    process's parent; stop them once it is not; return when they are gone."""
    import time

    tracked = {pid: born for pid in roots if (born := _started(pid)) is not None}
    while tracked:
        if os.getppid() != driver:  # the driver is gone: its Ray is ours to stop
            _grow(tracked)
            _stop(tracked)
            return 0
        _grow(tracked)
        time.sleep(TICK)
    return 0


if __name__ == "__main__":  # pragma: no cover - run as the watcher process
    sys.exit(run(int(sys.argv[1]), [int(a) for a in sys.argv[2:]]))
