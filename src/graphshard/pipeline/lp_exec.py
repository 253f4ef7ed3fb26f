"""Run the label-propagation pipeline's shard tasks in-process (threads) or as Ray tasks.

Both executors call the same module-level pure functions with the same arguments and
return results in submission order, so the pipeline's result does not depend on which one
runs it or on how many workers it has.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from .._optional import import_optional

__all__ = ["Executor", "InProcessExecutor", "RayExecutor", "make_executor"]


class Executor:
    """Maps a task function over argument tuples; ``shared`` keyword arguments go to every
    call (Ray puts them in the object store once)."""

    workers: int = 1

    def map(self, fn: Callable[..., Any], calls: Iterable[Sequence[Any]],
            shared: dict[str, Any] | None = None) -> list[Any]:
        """Results of ``fn(*call, **shared)`` for every call, in order."""
        raise NotImplementedError

    def close(self) -> None:
        """Release worker resources."""


class InProcessExecutor(Executor):
    """Runs tasks in this process, on ``workers`` threads (kernels release the GIL).

    Example:
        >>> InProcessExecutor(2).map(pow, [(2, 3), (3, 2)])
        [8, 9]
    """

    def __init__(self, workers: int = 1) -> None:
        self.workers = max(1, int(workers))
        self._pool = ThreadPoolExecutor(self.workers) if self.workers > 1 else None

    def map(self, fn: Callable[..., Any], calls: Iterable[Sequence[Any]],
            shared: dict[str, Any] | None = None) -> list[Any]:
        shared = shared or {}
        if self._pool is None:
            return [fn(*c, **shared) for c in calls]
        out: list[Any] = []
        pending: list[Any] = []
        for c in calls:  # at most 2 * workers calls in flight: bounded memory on streams
            pending.append(self._pool.submit(fn, *c, **shared))
            if len(pending) >= 2 * self.workers:
                out.append(pending.pop(0).result())
        out.extend(p.result() for p in pending)
        return out

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()


class RayExecutor(Executor):
    """Runs tasks as Ray tasks on the running Ray instance (``ray.init()`` if none).

    Calls are submitted lazily with at most ``4 * workers`` in flight, so a stream of
    edge chunks never sits in the object store all at once.
    """

    def __init__(self, workers: int | None = None, address: str | None = None) -> None:
        self._ray = import_optional("ray", "lp_assign(use_ray=True)")
        self._started = False
        if not self._ray.is_initialized():
            self._ray.init(address=address, include_dashboard=False, log_to_driver=False)
            self._started = True
        cpus = int(self._ray.cluster_resources().get("CPU", 1))
        self.workers = max(1, int(workers or cpus))
        self._remote: dict[Callable[..., Any], Any] = {}

    def map(self, fn: Callable[..., Any], calls: Iterable[Sequence[Any]],
            shared: dict[str, Any] | None = None) -> list[Any]:
        ray = self._ray
        if fn not in self._remote:
            self._remote[fn] = ray.remote(fn)
        remote = self._remote[fn]
        refs = {k: ray.put(v) if isinstance(v, np.ndarray) else v
                for k, v in (shared or {}).items()}  # arrays go to the object store once
        out: list[Any] = []
        pending: list[Any] = []
        for c in calls:
            pending.append(remote.remote(*c, **refs))
            if len(pending) >= 4 * self.workers:
                out.append(ray.get(pending.pop(0)))
        out.extend(ray.get(pending))
        return out

    def close(self) -> None:
        """Stop Ray if this executor started it."""
        if self._started:
            self._ray.shutdown()
            self._started = False


def make_executor(workers: int | None, use_ray: bool, address: str | None = None
                  ) -> Executor:
    """The Ray executor with ``use_ray`` or ``address`` (joining that cluster), else
    in-process threads (``workers``, default all cores)."""
    if use_ray or address:
        return RayExecutor(workers, address)
    return InProcessExecutor(workers or os.cpu_count() or 1)
