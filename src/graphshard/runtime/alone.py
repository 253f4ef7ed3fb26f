"""Run a call where no other thread of this process draws from libc's ``rand()``.

METIS (cmeel's GKlib) draws its random numbers from libc's process-wide ``rand()`` after
``srand(seed)``; Ray's threads call ``rand()`` too, so with Ray running in this process the
same graph and seed give different parts from call to call.  :func:`run_alone` then runs
the call in a helper Python process without Ray (arguments and result go through a pipe,
pickled: it is our own child, no file is involved); without Ray it calls directly.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import json
import os
import pickle
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["run_alone", "start_alone_process"]

_HELPER = ("import sys, json; sys.path[:] = json.loads(sys.argv[1]); "
           "from graphshard.runtime.alone import _alone_loop; "
           "_alone_loop(json.loads(sys.argv[2]))")


class _AloneProcess:
    """A helper Python process that runs pickled calls sent over its stdin, one at a time.

    A plain ``python -c`` child (not multiprocessing's spawn, which would import the
    caller's ``__main__`` again and fails in scripts without a ``__main__`` guard).
    """

    def __init__(self, preload: tuple[str, ...] = ()) -> None:
        self._lock = threading.Lock()
        self.pid = os.getpid()  # a forked child must not share the pipes
        self._proc = subprocess.Popen(
            [sys.executable, "-c", _HELPER, json.dumps([p for p in sys.path if p]),
             json.dumps(list(preload))],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def call(self, fn: Callable[..., Any], args: tuple, kwargs: dict[str, Any]) -> Any:
        """Send one call and read its reply, each as one length-prefixed message.

        Any failure on the way (a dead helper, a broken pipe, an interruption, a reply
        that does not unpickle) kills the helper, so no later call can read a stale reply.
        """
        with self._lock:
            try:
                if self._proc.poll() is not None:
                    raise RuntimeError(f"run_alone's helper process ended with code "
                                       f"{self._proc.returncode}")
                _send(self._proc.stdin, pickle.dumps((fn, args, kwargs), protocol=5))
                ok, value = pickle.loads(_receive(self._proc.stdout))
            except BaseException:
                self.kill()
                raise
        if not ok:
            raise value
        return value

    def kill(self) -> None:
        """Stop the helper now (the next :func:`run_alone` starts another)."""
        self._proc.kill()
        self._proc.wait()
        if _alone and _alone[0] is self:
            _alone.clear()

    def close(self) -> None:
        with contextlib.suppress(OSError):  # already killed: nothing to flush
            self._proc.stdin.close()  # type: ignore[union-attr]  # the helper ends on EOF
        self._proc.wait()


def _send(stream: Any, payload: bytes) -> None:
    stream.write(len(payload).to_bytes(8, "little"))
    stream.write(payload)
    stream.flush()


def _receive(stream: Any) -> bytes:
    size = int.from_bytes(_read_exact(stream, 8), "little")
    return _read_exact(stream, size)


def _read_exact(stream: Any, size: int) -> bytes:
    data = stream.read(size)
    if data is None or len(data) != size:
        raise RuntimeError("run_alone's helper process closed its pipe mid-message")
    return data


def _alone_loop(preload: list[str]) -> None:  # pragma: no cover - runs in the helper
    """The helper's loop: import ``preload`` (the modules the calls will need, before the
    first call arrives), then read a call, run it, write ``(ok, result or exception)``."""
    for module in preload:
        importlib.import_module(module)

    # nothing else may write to the result pipe: not Python's prints, and not C code
    # either (METIS printf()s to fd 1 on some inputs), so fd 1 becomes stderr
    sys.stdout.flush()
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    inp = sys.stdin.buffer
    while True:
        try:
            fn, args, kwargs = pickle.loads(_receive(inp))
        except RuntimeError:  # the caller closed the pipe
            return
        try:
            reply = pickle.dumps((True, fn(*args, **kwargs)), protocol=5)
        except Exception as exc:  # the caller re-raises it
            try:
                reply = pickle.dumps((False, exc), protocol=5)
            except Exception:  # an exception that does not pickle: its text
                reply = pickle.dumps((False, RuntimeError(f"{type(exc).__name__}: {exc}")))
        _send(out, reply)


_alone: list[_AloneProcess] = []


def _ray_running() -> bool:
    ray = sys.modules.get("ray")
    return ray is not None and ray.is_initialized()


def start_alone_process(preload: tuple[str, ...] = ()) -> None:
    """Start the helper process of :func:`run_alone` in the background (once per
    process: a forked child starts its own), importing the modules named in ``preload``
    while the caller goes on."""
    if _alone and _alone[0].pid != os.getpid():
        _alone.clear()
    if not _alone:
        _alone.append(_AloneProcess(preload))
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
