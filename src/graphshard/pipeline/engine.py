"""Where pipeline tasks run: in this process, or as Ray tasks on a local or remote cluster.

Tasks are module-level functions with small arguments (paths, indices) that read their
input from files and write their output to files; they return small summaries.  The same
function runs unchanged in either executor, so a run on one laptop and on a cluster gives
the same files.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from .._util.malloc import keep_heap
from .._util.optional import import_optional
from .._util.progress import progress
from .._util.ray import init_ray

__all__ = ["Executor", "LocalExecutor", "RayExecutor", "make_executor", "ray_session",
           "start_ray"]

log = logging.getLogger(__name__)

_session_depth = 0  # open ray_session blocks
_session_ray: Any = None  # the Ray a step started inside them: the outermost block stops it


def start_ray(ray: Any, address: str | None = None, num_cpus: int | None = None) -> bool:
    """Join the running Ray, else ``ray.init`` (``address``, or a local Ray with
    ``num_cpus``, default the CPUs Ray detects, listening on 127.0.0.1 only: see
    :func:`graphshard._util.ray.init_ray`).  True when the caller started Ray and is to shut it
    down; inside :func:`ray_session` the session owns it and this is False.

    Example:
        >>> class Running:  # stands in for the ray module when Ray is up already
        ...     def is_initialized(self): return True
        >>> start_ray(Running())
        False
    """
    global _session_ray
    if ray.is_initialized():
        return False
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
    if address is None and num_cpus:
        kwargs["num_cpus"] = num_cpus
    init_ray(ray, address, **kwargs)
    if _session_depth:
        _session_ray = ray
        return False
    return True


@contextlib.contextmanager
def ray_session() -> Iterator[None]:
    """A Ray that a pipeline step starts inside the block stays up for the next steps and
    stops when the block ends: ``assign`` then ``dispatch`` pay for one start.

    Example:
        >>> with ray_session():
        ...     pass  # e.g. assign(..., use_ray=True); dispatch(..., use_ray=True)
    """
    global _session_depth, _session_ray
    _session_depth += 1
    try:
        yield
    finally:
        _session_depth -= 1
        if not _session_depth and _session_ray is not None:
            ray, _session_ray = _session_ray, None
            ray.shutdown()


class Executor(Protocol):
    """Runs ``fn(*args)`` for every args tuple and returns the results in order."""

    def map(self, fn: Callable[..., Any], items: Sequence[tuple], *, desc: str,
            memory: int | None = None) -> list[Any]: ...

    def shutdown(self) -> None: ...


class LocalExecutor:
    """Runs tasks one after the other in this process (tests, small graphs, debugging)."""

    def map(self, fn: Callable[..., Any], items: Sequence[tuple], *, desc: str,
            memory: int | None = None) -> list[Any]:
        """Run every task in order."""
        clock = time.perf_counter()
        out = [fn(*args) for args in progress(items, desc=desc, total=len(items),
                                              unit="task")]
        _log_step(desc, len(items), clock)
        return out

    def shutdown(self) -> None:
        """Nothing to stop."""


class RayExecutor:
    """Runs tasks as Ray tasks, one CPU each, with a memory reservation per task.

    Args:
        address: A Ray cluster to join (``"ray://head:10001"`` or ``"auto"``); None starts
            a local Ray for this run (listening on 127.0.0.1 only) and stops it at
            :meth:`shutdown` (or at the end of an enclosing :func:`ray_session`).
        num_cpus: CPUs of the local Ray (None: the CPUs Ray detects).
    """

    def __init__(self, address: str | None = None, num_cpus: int | None = None) -> None:
        self._ray = import_optional("ray", "the out-of-core pipeline on Ray")
        self._started = start_ray(self._ray, address, num_cpus)
        self._remote: Any = None

    def map(self, fn: Callable[..., Any], items: Sequence[tuple], *, desc: str,
            memory: int | None = None) -> list[Any]:
        """Submit every task, then gather the results in submission order."""
        ray = self._ray
        if self._remote is None:
            self._remote = ray.remote(_in_worker)
        options: dict[str, Any] = {"num_cpus": 1, "max_retries": 2, "name": fn.__name__}
        if memory:
            options["memory"] = int(memory)
        remote = self._remote.options(**options)
        clock = time.perf_counter()
        refs = [remote.remote(fn, *args) for args in items]
        pending = list(refs)
        for _ in progress(range(len(refs)), desc=desc, total=len(refs), unit="task"):
            _, pending = ray.wait(pending, num_returns=1)
        out = ray.get(refs)
        _log_step(desc, len(items), clock)
        return out

    def shutdown(self) -> None:
        """Stop the local Ray if this executor started it."""
        if self._started:
            self._ray.shutdown()
            self._started = False


def _log_step(desc: str, tasks: int, clock: float) -> None:
    """One INFO line per step: what it did, its tasks and seconds."""
    log.info("%s: %d tasks in %.1fs", desc, tasks, time.perf_counter() - clock)


def _in_worker(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` in a Ray worker process, which keeps the memory it frees for its next
    tasks (:func:`~graphshard._util.malloc.keep_heap`): dispatch of a 100M-edge R-MAT ran
    0.8-0.9x as long without faulting fresh pages in for every array."""
    keep_heap()
    return fn(*args)


def make_executor(*, use_ray: bool, address: str | None = None,
                  num_cpus: int | None = None) -> Executor:
    """A :class:`RayExecutor` when ``use_ray`` or ``address`` is set, else local.

    Example:
        >>> make_executor(use_ray=False).map(pow, [(2, 3), (3, 2)], desc="demo")
        [8, 9]
    """
    if use_ray or address:
        return RayExecutor(address, num_cpus)
    return LocalExecutor()
