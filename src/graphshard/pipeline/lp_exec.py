"""Run the label-propagation pipeline's shard tasks in-process (threads) or on Ray actors.

Both executors call the same module-level pure functions with the same arguments and
return results in submission order, so the pipeline's result does not depend on which one
runs it or on how many workers it has.  Both hand the tasks read-only arrays (Ray's
object store does; the threads get read-only views), so a task that wrote into a shared
array would fail the same way in both, and numba specialises the kernels identically.

On Ray, tasks run on a pool of long-lived actors, one per CPU
(:mod:`graphshard.pipeline.lp_actors`); :func:`ray_actors` keeps one pool for several
runs (tests, notebooks).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from .._util.malloc import trim_heap
from .._util.optional import import_optional
from .._util.progress import progress_bar
from ..partition.alone import run_alone, start_alone_process
from .engine import start_ray

__all__ = ["Executor", "InProcessExecutor", "RayExecutor", "describe", "make_executor",
           "ray_actors", "run_alone", "sharing_files"]

logger = logging.getLogger(__name__)

#: what each shard task does, as its progress bar says
TASK_NAMES = {
    "chunk_piece": "reading edge chunks", "build_shard": "building shards",
    "sweep_task": "label propagation", "favourite_task": "two-hop clustering",
    "contract_piece": "contracting clusters", "histogram_task": "weighing edges",
    "thin_task": "thinning", "heavy_entries_task": "gathering the coarsest graph",
    "rebalance_task": "rebalancing", "cut_task": "counting the cut",
}
#: seconds a map runs before its bar appears (most maps of coarse levels take less)
BAR_DELAY = 0.5


def describe(fn: Callable[..., Any]) -> str:
    """The progress-bar label of a task function.

    Example:
        >>> from graphshard.pipeline.lp_shards import sweep_task
        >>> describe(sweep_task), describe(pow)
        ('lp: label propagation', 'lp: pow')
    """
    return "lp: " + TASK_NAMES.get(fn.__name__, fn.__name__)


def _calls_count(calls: Iterable[Any]) -> int | None:
    return len(calls) if hasattr(calls, "__len__") else None  # type: ignore[arg-type]


class Executor:
    """Maps a task function over argument tuples; ``shared`` keyword arguments go to every
    call (Ray puts them in the object store once)."""

    workers: int = 1

    def map(self, fn: Callable[..., Any], calls: Iterable[Sequence[Any]],
            shared: dict[str, Any] | None = None) -> list[Any]:
        """Results of ``fn(*call, **shared)`` for every call, in order."""
        raise NotImplementedError

    def share_files(self, folder: str | Path | None) -> None:
        """Hand shared arrays to the workers as files in ``folder`` (a folder every worker
        sees, removed by the caller; ``None``: stop).  Only Ray's pool uses it: threads
        share the driver's memory anyway."""

    def close(self) -> None:
        """Release worker resources."""


def _read_only(value: Any) -> Any:
    """A read-only view of an array (what a Ray task receives), anything else as is.

    Example:
        >>> a = np.zeros(2); _read_only(a).flags.writeable, a.flags.writeable
        (False, True)
    """
    if isinstance(value, np.ndarray) and value.flags.writeable:
        value = value.view()
        value.flags.writeable = False
    return value


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
        trim_heap()  # freed arrays of the last map: back to the OS, not kept resident
        shared = {k: _read_only(v) for k, v in (shared or {}).items()}
        out: list[Any] = []
        with progress_bar(desc=describe(fn), total=_calls_count(calls), unit="task",
                          delay=BAR_DELAY) as bar:
            if self._pool is None:
                for c in calls:
                    out.append(fn(*map(_read_only, c), **shared))
                    bar.update()
                return out
            pending: list[Any] = []
            for c in calls:  # at most 2 * workers calls in flight: bounded memory on streams
                pending.append(self._pool.submit(fn, *map(_read_only, c), **shared))
                if len(pending) >= 2 * self.workers:
                    out.append(pending.pop(0).result())
                    bar.update()
            for p in pending:
                out.append(p.result())
                bar.update()
        return out

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()


class RayExecutor(Executor):
    """Runs tasks on a pool of long-lived Ray actors, one per CPU of the cluster.

    Joins the running Ray instance, else ``ray.init(address)`` (stopped again at
    :meth:`close`, or at the end of an enclosing
    :func:`~graphshard.pipeline.engine.ray_session`). The actors start at once and warm the
    numba kernels up while the driver streams its first pass; each holds
    ``min(1, CPUs / workers)`` CPUs until :meth:`close`, so on a cluster they spread over
    the nodes like tasks would, and the shard files must be visible to every node (a
    shared ``work_dir``). Shared arrays go to the object store once per map (not at all
    when unchanged since the last map); calls are fed to the actors lazily, at most two
    queued per actor, so a stream of edge chunks never sits in the object store at once.

    Args:
        workers: Actors (default: all CPUs of the cluster).
        address: Ray cluster to join when Ray is not running yet (None: a local Ray,
            listening on 127.0.0.1 only).
        warm: Warm the kernels up in each actor as it starts.
    """

    def __init__(self, workers: int | None = None, address: str | None = None, *,
                 warm: bool = True) -> None:
        from .lp_actors import ActorPool

        self._ray = import_optional("ray", "lp_assign(use_ray=True)")
        self._started = start_ray(self._ray, address)
        cpus = max(1.0, float(self._ray.cluster_resources().get("CPU", 1)))
        self.workers = max(1, int(workers or cpus))
        self._pool: Any = ActorPool(self._ray, self.workers,
                                    num_cpus=min(1.0, cpus / self.workers), warm=warm)
        start_alone_process()  # ready by the time the coarsest graph is partitioned

    def map(self, fn: Callable[..., Any], calls: Iterable[Sequence[Any]],
            shared: dict[str, Any] | None = None) -> list[Any]:
        if self._pool is None:
            raise RuntimeError("RayExecutor.map after close()")
        with progress_bar(desc=describe(fn), total=_calls_count(calls), unit="task",
                          delay=BAR_DELAY) as bar:
            return self._pool.map(fn, calls, shared, on_result=bar.update)

    def share_files(self, folder: str | Path | None) -> None:
        if self._pool is not None:
            self._pool.share_files(folder)

    def close(self) -> None:
        """Kill the actors; stop Ray if this executor started it."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None
        if self._started:
            self._ray.shutdown()
            self._started = False


class _Borrowed(Executor):
    """An executor whose :meth:`close` leaves the lent one running (see :func:`ray_actors`)."""

    def __init__(self, inner: Executor) -> None:
        self._inner = inner
        self.workers = inner.workers

    def map(self, fn: Callable[..., Any], calls: Iterable[Sequence[Any]],
            shared: dict[str, Any] | None = None) -> list[Any]:
        return self._inner.map(fn, calls, shared)

    def share_files(self, folder: str | Path | None) -> None:
        self._inner.share_files(folder)


_kept: list[RayExecutor] = []


@contextlib.contextmanager
def ray_actors(workers: int | None = None, *, warm: bool = True) -> Iterator[RayExecutor]:
    """Keep one actor pool for every Ray run of ``lp_assign`` inside the ``with`` block,
    instead of starting one per run (Ray must be running, or is started as by
    :class:`RayExecutor`).  Runs that ask for a specific ``workers`` count other than
    the pool's still get their own pool.

    Example:
        >>> with ray_actors(2) as ex:  # doctest: +SKIP
        ...     a = lp_assign(meta, 4, use_ray=True)
        ...     b = lp_assign(meta, 8, use_ray=True)   # same actors, already warm
    """
    ex = RayExecutor(workers, warm=warm)
    _kept.append(ex)
    try:
        yield ex
    finally:
        _kept.remove(ex)
        ex.close()


def make_executor(workers: int | None, use_ray: bool, address: str | None = None
                  ) -> Executor:
    """The Ray executor with ``use_ray`` or ``address`` (joining that cluster), else
    in-process threads (``workers``, default all cores).  Inside :func:`ray_actors`, Ray
    runs borrow its pool."""
    if use_ray or address:
        if _kept and workers in (None, _kept[-1].workers):
            return _Borrowed(_kept[-1])
        return RayExecutor(workers, address)
    return InProcessExecutor(workers or os.cpu_count() or 1)


@contextlib.contextmanager
def sharing_files(ex: Executor, folder: Path) -> Iterator[Executor]:
    """Inside the block, ``ex`` hands shared arrays to its workers as files in ``folder``
    (:meth:`Executor.share_files`); after it, through memory again, so a lent pool never
    points at a folder that is gone."""
    ex.share_files(folder)
    try:
        yield ex
    finally:
        ex.share_files(None)
