"""Where pipeline tasks run: the one executor contract, in this process or on Ray.

Tasks are module-level functions with small arguments (paths, indices, arrays) that read
their input from files or arguments and write their output to files; they return small
summaries.  The same function runs unchanged on every executor, which returns results in
submission order and hands tasks read-only arrays (Ray's object store does; the threads
get read-only views), so a run in one process and on a cluster give the same files, and
numba specialises the kernels identically.

One contract (:class:`Executor`): ``map(fn, calls, *, shared, desc, memory)`` runs
``fn(*call, **shared)`` for every call; ``num_workers`` is how many run at once; ``close()``
(or leaving a ``with`` block) releases the workers.  Three implementations:

- :class:`InProcessExecutor`: ``num_workers`` threads in this process (kernels release the
  GIL); one worker runs the tasks one after the other.
- :class:`RayTaskExecutor`: one Ray task per call, one CPU each, with a memory
  reservation per task (``dispatch``'s steps: a task per chunk or part).
- :class:`RayActorExecutor`: a pool of long-lived Ray actors, one per CPU
  (:mod:`graphshard.runtime.actors`), for the many short tasks of ``lp``;
  :func:`ray_actors` keeps one pool for several runs (tests, notebooks).

:func:`make_executor` picks one.  Ray starts through
:func:`graphshard.runtime.ray.init_ray` (:func:`start_ray`); :func:`ray_session` keeps one Ray
for several steps.

The library defaults to in-process (``use_ray=False``: no Ray needed, nothing started
behind the caller's back); the CLI defaults to ``--engine ray``, because a command is one
run that pays Ray's start once and gets every core's worker processes for ``dispatch``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from .._util.optional import import_optional
from .._util.progress import progress_bar
from .alone import run_alone
from .malloc import keep_heap, trim_heap
from .ray import init_ray

__all__ = ["Executor", "InProcessExecutor", "RayActorExecutor", "RayTaskExecutor",
           "describe", "make_executor", "ray_actors", "ray_session", "run_alone",
           "sharing_files", "start_ray"]

log = logging.getLogger(__name__)

#: what each ``lp`` shard task does, as its progress bar says
TASK_NAMES = {
    "chunk_piece": "reading edge chunks", "build_shard": "building shards",
    "sweep_task": "label propagation", "favourite_task": "two-hop clustering",
    "contract_piece": "contracting clusters", "histogram_task": "weighing edges",
    "thin_task": "thinning", "heavy_entries_task": "gathering the coarsest graph",
    "rebalance_task": "rebalancing", "cut_task": "counting the cut",
}
#: seconds an unnamed map (``desc=None``) runs before its bar appears: most maps of lp's
#: coarse levels take less; a named step's bar appears at once
BAR_DELAY = 0.5

_session_depth = 0  # open ray_session blocks
_session_ray: Any = None  # the Ray a step started inside them: the outermost block stops it


def start_ray(ray: Any, address: str | None = None, num_cpus: int | None = None) -> bool:
    """Join the running Ray, else ``ray.init`` (``address``, or a local Ray with
    ``num_cpus``, default the CPUs Ray detects, listening on 127.0.0.1 only: see
    :func:`graphshard.runtime.ray.init_ray`).  True when the caller started Ray and is to shut it
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


def describe(fn: Callable[..., Any]) -> str:
    """The progress-bar label of an ``lp`` task function.

    Example:
        >>> from graphshard.partition.lp.shards import sweep_task
        >>> describe(sweep_task), describe(pow)
        ('lp: label propagation', 'lp: pow')
    """
    return "lp: " + TASK_NAMES.get(fn.__name__, fn.__name__)


def _calls_count(calls: Iterable[Any]) -> int | None:
    return len(calls) if hasattr(calls, "__len__") else None  # type: ignore[arg-type]


def _log_step(desc: str, tasks: int, clock: float) -> None:
    """One INFO line per named step: what it did, its tasks and seconds."""
    log.info("%s: %d tasks in %.1fs", desc, tasks, time.perf_counter() - clock)


class Executor:
    """Maps a task function over argument tuples, results in order.

    ``shared`` keyword arguments go to every call (Ray puts them in the object store
    once).  ``desc`` names the step: its progress bar shows at once and it logs one INFO
    line with its tasks and seconds; without it the bar is :func:`describe`'s label and
    shows after :data:`BAR_DELAY` seconds, and nothing is logged (``lp`` runs hundreds of
    short maps).  ``memory`` is the bytes one task may use: Ray tasks reserve it.
    """

    #: tasks that run at once
    num_workers: int = 1

    def map(self, fn: Callable[..., Any], calls: Iterable[Sequence[Any]], *,
            shared: dict[str, Any] | None = None, desc: str | None = None,
            memory: int | None = None) -> list[Any]:
        """Results of ``fn(*call, **shared)`` for every call, in order."""
        raise NotImplementedError

    def share_files(self, folder: str | Path | None) -> None:
        """Hand shared arrays to the workers as files in ``folder`` (a folder every worker
        sees, removed by the caller; ``None``: stop).  Only Ray's actor pool uses it:
        threads share the driver's memory anyway."""

    def close(self) -> None:
        """Release worker resources (and stop a Ray this executor started)."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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
    """Runs tasks in this process, on ``num_workers`` threads (kernels release the GIL);
    with one worker, one after the other on the calling thread.

    Example:
        >>> with InProcessExecutor(2) as ex:
        ...     ex.map(pow, [(2, 3), (3, 2)])
        [8, 9]
    """

    def __init__(self, num_workers: int = 1) -> None:
        self.num_workers = max(1, int(num_workers))
        self._pool = ThreadPoolExecutor(self.num_workers) if self.num_workers > 1 else None

    def map(self, fn: Callable[..., Any], calls: Iterable[Sequence[Any]], *,
            shared: dict[str, Any] | None = None, desc: str | None = None,
            memory: int | None = None) -> list[Any]:
        """Run every call (``memory`` is not enforced in-process)."""
        trim_heap()  # freed arrays of the last map: back to the OS, not kept resident
        clock = time.perf_counter()
        shared = {k: _read_only(v) for k, v in (shared or {}).items()}
        out: list[Any] = []
        with progress_bar(desc=desc or describe(fn), total=_calls_count(calls), unit="task",
                          delay=BAR_DELAY if desc is None else 0.0) as bar:
            if self._pool is None:
                for c in calls:
                    out.append(fn(*map(_read_only, c), **shared))
                    bar.update()
            else:
                pending: list[Any] = []
                for c in calls:  # at most 2 * workers in flight: bounded memory on streams
                    pending.append(self._pool.submit(fn, *map(_read_only, c), **shared))
                    if len(pending) >= 2 * self.num_workers:
                        out.append(pending.pop(0).result())
                        bar.update()
                for p in pending:
                    out.append(p.result())
                    bar.update()
        if desc is not None:
            _log_step(desc, len(out), clock)
        return out

    def close(self) -> None:
        """Stop the threads."""
        if self._pool is not None:
            self._pool.shutdown()


class RayTaskExecutor(Executor):
    """Runs each call as a Ray task, one CPU each, with a memory reservation per task.

    The calls of a map are dealt over the cluster's CPUs node by node (call ``i`` to the
    ``i``-th of :func:`cpu_slots`, as a soft node affinity that moves to another node
    when its own cannot take it now): Ray's default scheduling keeps reusing the
    driver's node while its workers free up, which on a cluster put every step's reads
    and writes on one machine.

    Args:
        address: A Ray cluster to join (``"ray://head:10001"`` or ``"auto"``); None starts
            a local Ray for this run (listening on 127.0.0.1 only) and stops it at
            :meth:`close` (or at the end of an enclosing :func:`ray_session`).
        num_workers: CPUs of the local Ray, i.e. tasks at once (None: the CPUs Ray
            detects; a joined cluster has its own).
    """

    def __init__(self, address: str | None = None, num_workers: int | None = None) -> None:
        self._ray = import_optional("ray", "the out-of-core pipeline on Ray")
        self._started = start_ray(self._ray, address, num_workers)
        self.num_workers = max(1, int(self._ray.cluster_resources().get("CPU", 1)))
        self._remote: Any = None

    def map(self, fn: Callable[..., Any], calls: Iterable[Sequence[Any]], *,
            shared: dict[str, Any] | None = None, desc: str | None = None,
            memory: int | None = None) -> list[Any]:
        """Submit every call, then gather the results in submission order."""
        ray = self._ray
        desc = desc or describe(fn)
        if self._remote is None:
            self._remote = ray.remote(_in_worker)
        options: dict[str, Any] = {"num_cpus": 1, "max_retries": 2, "name": fn.__name__}
        if memory:
            options["memory"] = int(memory)
        slots = cpu_slots(ray.nodes())
        by_node = {node: self._remote.options(**options, scheduling_strategy=_affinity(node))
                   for node in set(slots)}
        clock = time.perf_counter()
        kwargs = {k: ray.put(v) for k, v in (shared or {}).items()}
        refs = [by_node[slots[i % len(slots)]].remote(fn, *call, **kwargs)
                if slots else self._remote.options(**options).remote(fn, *call, **kwargs)
                for i, call in enumerate(calls)]
        pending = list(refs)
        with progress_bar(desc=desc, total=len(refs), unit="task") as bar:
            while pending:
                _, pending = ray.wait(pending, num_returns=1)
                bar.update()
        out = ray.get(refs)
        _log_step(desc, len(refs), clock)
        # where the tasks ran, and what they moved through the file layer (URIs): one
        # INFO line (graphshard -v shows it)
        where = Counter((node, ip) for _, node, ip, _ in out)
        moved: dict[tuple[str, str], list[int]] = {}
        for _, node, ip, (read, written) in out:
            acc = moved.setdefault((node, ip), [0, 0])
            acc[0] += read
            acc[1] += written
        log.info("%s: tasks ran on %s", desc, ", ".join(
            f"node {node[:12]} ({ip}) x{n}" + (
                f" [file layer: read {moved[(node, ip)][0]} B, wrote {moved[(node, ip)][1]} B]"
                if any(moved[(node, ip)]) else "")
            for (node, ip), n in sorted(where.items())))
        return [r for r, _, _, _ in out]

    def close(self) -> None:
        """Stop the local Ray if this executor started it."""
        if self._started:
            self._ray.shutdown()
            self._started = False


def cpu_slots(nodes: Sequence[dict[str, Any]]) -> list[str]:
    """One entry per whole CPU of the alive nodes of ``nodes`` (``ray.nodes()``), their node
    IDs interleaved: every node's first CPU, then every second CPU, ...

    Example:
        >>> cpu_slots([{"NodeID": "a", "Alive": True, "Resources": {"CPU": 2.0}},
        ...            {"NodeID": "b", "Alive": True, "Resources": {"CPU": 1.0}},
        ...            {"NodeID": "c", "Alive": False, "Resources": {"CPU": 4.0}},
        ...            {"NodeID": "d", "Alive": True, "Resources": {}}])
        ['a', 'b', 'a']
    """
    cpus = {n["NodeID"]: int(n.get("Resources", {}).get("CPU", 0)) for n in nodes
            if n.get("Alive")}
    order = sorted(cpus)
    return [node for i in range(max(cpus.values(), default=0)) for node in order
            if cpus[node] > i]


def _affinity(node_id: str) -> Any:
    """Run on ``node_id``, or on another node when that one cannot take the task now
    (busy, full or gone) rather than wait for it."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return NodeAffinitySchedulingStrategy(node_id, soft=True, _spill_on_unavailable=True)


def _in_worker(fn: Callable[..., Any], *args: Any, **kwargs: Any
               ) -> tuple[Any, str, str, tuple[int, int]]:
    """``fn(*args, **kwargs)`` in a Ray worker process, which keeps the memory it frees
    for its next tasks (:func:`~graphshard.runtime.malloc.keep_heap`; see
    benchmarks/TUNING.md, "keep_heap in Ray workers"), with the Ray node ID and IP it ran
    on and the bytes it read and wrote through remote URIs
    (:func:`graphshard.storage.fsys.traffic`)."""
    import ray

    from ..storage.fsys import traffic

    keep_heap()
    before = traffic()
    out = fn(*args, **kwargs)
    after = traffic()
    return (out, ray.get_runtime_context().get_node_id(), ray.util.get_node_ip_address(),
            (after.read - before.read, after.written - before.written))


class RayActorExecutor(Executor):
    """Runs tasks on a pool of long-lived Ray actors, one per CPU of the cluster.

    Joins the running Ray instance, else ``ray.init(address)`` (stopped again at
    :meth:`close`, or at the end of an enclosing :func:`ray_session`).  The actors start
    at once and run ``warm`` (e.g. :func:`graphshard.partition.lp.warm_up`, which loads
    the numba kernels) while the driver streams its first pass; each holds
    ``min(1, CPUs / num_workers)`` CPUs until :meth:`close`, so on a cluster they spread
    over the nodes like tasks would, and the shard files must be reachable from every node
    (a shared local ``work_dir``, or a URI one: :mod:`graphshard.partition.lp.shards`).
    Shared arrays go to the object store once per map (not at all when unchanged since
    the last map); calls are fed to the actors lazily, at most two
    queued per actor, so a stream of edge chunks never sits in the object store at once.

    Args:
        num_workers: Actors (default: all CPUs of the cluster).
        address: Ray cluster to join when Ray is not running yet (None: a local Ray,
            listening on 127.0.0.1 only).
        warm: Called in each actor as it starts (None: nothing).
    """

    def __init__(self, num_workers: int | None = None, address: str | None = None, *,
                 warm: Callable[[], float] | None = None) -> None:
        from .actors import ActorPool

        self._ray = import_optional("ray", "lp_assign(use_ray=True)")
        self._started = start_ray(self._ray, address)
        cpus = max(1.0, float(self._ray.cluster_resources().get("CPU", 1)))
        self.num_workers = max(1, int(num_workers or cpus))
        self._pool: Any = ActorPool(self._ray, self.num_workers,
                                    num_cpus=min(1.0, cpus / self.num_workers), warm=warm)

    def map(self, fn: Callable[..., Any], calls: Iterable[Sequence[Any]], *,
            shared: dict[str, Any] | None = None, desc: str | None = None,
            memory: int | None = None) -> list[Any]:
        """Run every call on the actors (``memory`` is not reserved: the actors hold
        their CPUs for the whole run)."""
        if self._pool is None:
            raise RuntimeError("RayActorExecutor.map after close()")
        clock = time.perf_counter()
        with progress_bar(desc=desc or describe(fn), total=_calls_count(calls), unit="task",
                          delay=BAR_DELAY if desc is None else 0.0) as bar:
            out = self._pool.map(fn, calls, shared, on_result=bar.update)
        if desc is not None:
            _log_step(desc, len(out), clock)
        return out

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
        self.num_workers = inner.num_workers

    def map(self, fn: Callable[..., Any], calls: Iterable[Sequence[Any]], *,
            shared: dict[str, Any] | None = None, desc: str | None = None,
            memory: int | None = None) -> list[Any]:
        return self._inner.map(fn, calls, shared=shared, desc=desc, memory=memory)

    def share_files(self, folder: str | Path | None) -> None:
        self._inner.share_files(folder)


_kept: list[RayActorExecutor] = []


@contextlib.contextmanager
def ray_actors(num_workers: int | None = None, *,
               warm: Callable[[], float] | None = None) -> Iterator[RayActorExecutor]:
    """Keep one actor pool for every Ray run of ``lp_assign`` inside the ``with`` block,
    instead of starting one per run (Ray must be running, or is started as by
    :class:`RayActorExecutor`).  Runs that ask for a specific ``num_workers`` other than
    the pool's still get their own pool.

    Example:
        >>> from graphshard.partition.lp import warm_up
        >>> with ray_actors(2, warm=warm_up) as ex:  # doctest: +SKIP
        ...     a = lp_assign(meta, 4, use_ray=True)
        ...     b = lp_assign(meta, 8, use_ray=True)   # same actors, already warm
    """
    ex = RayActorExecutor(num_workers, warm=warm)
    _kept.append(ex)
    try:
        yield ex
    finally:
        _kept.remove(ex)
        ex.close()


def make_executor(*, num_workers: int | None = None, use_ray: bool = False,
                  address: str | None = None, actors: bool = False,
                  warm: Callable[[], float] | None = None) -> Executor:
    """The executor of one pipeline step.

    Args:
        num_workers: Tasks at once (None: all cores in-process; all CPUs on Ray).
        use_ray: Run on Ray (implied by ``address``); else in this process.
        address: Ray cluster to join.
        actors: On Ray, a :class:`RayActorExecutor` (inside :func:`ray_actors`, its pool
            is borrowed when ``num_workers`` is None or equal); else a
            :class:`RayTaskExecutor`.
        warm: The actors' warm-up function (``actors`` only).

    Example:
        >>> with make_executor(num_workers=1) as ex:
        ...     ex.map(pow, [(2, 3), (3, 2)], desc="demo")
        [8, 9]
    """
    if use_ray or address:
        if not actors:
            return RayTaskExecutor(address, num_workers)
        if _kept and num_workers in (None, _kept[-1].num_workers):
            return _Borrowed(_kept[-1])
        return RayActorExecutor(num_workers, address, warm=warm)
    return InProcessExecutor(num_workers or os.cpu_count() or 1)


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
