"""Run a call where no other thread of this process draws from libc's ``rand()``.

METIS (cmeel's GKlib) draws its random numbers from libc's process-wide ``rand()`` after
``srand(seed)``; Ray's threads call ``rand()`` too, so with Ray running in this process the
same graph and seed give different parts from call to call.  :func:`run_alone` then runs
the call in a helper Python process without Ray (arguments and result go through a pipe,
pickled: it is our own child, no file is involved); without Ray it calls directly.
"""

from __future__ import annotations

import atexit
import json
import pickle
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["run_alone", "start_alone_process"]

_HELPER = ("import sys, json; sys.path[:] = json.loads(sys.argv[1]); "
           "from graphshard._alone import _alone_loop; _alone_loop()")


class _AloneProcess:
    """A helper Python process that runs pickled calls sent over its stdin, one at a time.

    A plain ``python -c`` child (not multiprocessing's spawn, which would import the
    caller's ``__main__`` again and fails in scripts without a ``__main__`` guard).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc = subprocess.Popen(
            [sys.executable, "-c", _HELPER, json.dumps([p for p in sys.path if p])],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def call(self, fn: Callable[..., Any], args: tuple, kwargs: dict[str, Any]) -> Any:
        with self._lock:
            if self._proc.poll() is not None:
                raise RuntimeError(f"run_alone's helper process ended with code "
                                   f"{self._proc.returncode}")
            pickle.dump((fn, args, kwargs), self._proc.stdin, protocol=5)
            self._proc.stdin.flush()  # type: ignore[union-attr]
            ok, value = pickle.load(self._proc.stdout)  # type: ignore[arg-type]
        if not ok:
            raise value
        return value

    def close(self) -> None:
        self._proc.stdin.close()  # type: ignore[union-attr]  # the helper ends on EOF
        self._proc.wait()


def _alone_loop() -> None:  # pragma: no cover - runs in the helper process
    """The helper's loop: read a call, run it, write ``(ok, result or exception)``."""
    import graphshard.partition.methods  # noqa: F401  (imported before the first call)

    inp, out = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing else may write to the result pipe
    while True:
        try:
            fn, args, kwargs = pickle.load(inp)
        except EOFError:
            return
        try:
            reply = (True, fn(*args, **kwargs))
        except Exception as exc:  # the caller re-raises it
            reply = (False, exc)
        pickle.dump(reply, out, protocol=5)
        out.flush()


_alone: list[_AloneProcess] = []


def _ray_running() -> bool:
    ray = sys.modules.get("ray")
    return ray is not None and ray.is_initialized()


def start_alone_process() -> None:
    """Start the helper process of :func:`run_alone` in the background (once)."""
    if not _alone:
        _alone.append(_AloneProcess())
        atexit.register(_alone[0].close)


def run_alone(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` where no other thread can draw from libc's ``rand()``.

    METIS (cmeel's GKlib) draws its random numbers from libc's process-wide ``rand()``
    after ``srand(seed)``; Ray's threads call ``rand()`` too, so with Ray running in this
    process the same graph and seed give different parts from call to call.  Then the
    call runs in a helper process (no Ray there; ``fn``, arguments and result go through
    a pipe, pickled), else directly.

    Example:
        >>> run_alone(pow, 2, 5)
        32
    """
    if not _ray_running():
        return fn(*args, **kwargs)
    start_alone_process()
    return _alone[0].call(fn, args, kwargs)
