"""A pool of long-lived Ray actors: :class:`~graphshard.runtime.executor.RayActorExecutor`'s
machinery, which runs the ``lp`` partitioner's shard tasks.

One Ray task per shard per sub-round pays, on every call, Ray's task scheduling and, in
every fresh worker process, the imports and the numba cache loads of the kernels
(seconds a process: benchmarks/TUNING.md); the pool pays them once.  Each actor
(:class:`ShardWorker`) warms the kernels up when it starts (the ``warm`` function the
caller hands it, :func:`graphshard.partition.lp.warm_up` for ``lp``), which
overlaps the driver's first streaming pass; then it runs ``fn(*call, **shared)`` for the
driver, exactly as the in-process executor does.

Per map, the driver shares each array once and sends the references; an actor resolves
them (zero-copy, read-only) on its first call of that map and keeps them for the map's
later calls; an array equal to the one of the last map under its name is not shared
again.  Arrays go to Ray's object store, or, once :meth:`ActorPool.share_files` names a
folder that every actor sees (the pipeline's work directory), to ``.npy`` files there
that the actors memory-map: the driver then never maps the pages it shares, so they do
not count in its resident memory (object-store pages the driver writes do, up to the
store's high-water mark).  Calls go to the least busy actor (a second call is
queued on each while more follow, so an actor never waits for the driver between calls;
the last ones go to idle actors only), and results come back in submission order, so
the pool is a drop-in for a thread pool: same functions, same arguments, same results.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import GraphshardError
from ..storage.files import atomic_path
from .malloc import keep_heap, trim_heap

__all__ = ["ActorPool", "FileRef", "ShardWorker"]

logger = logging.getLogger(__name__)

#: Times the pool runs a call again on another actor when its actor died (its process
#: or its node); the shard tasks are pure functions of files and arrays, so running one
#: again is safe.  Ray does not restart the actors: a restarted actor waits for a free CPU,
#: which a cluster that lost a node may never have, and the call waited with it (a hang).
MAX_RETRIES = 2


class ShardWorker:
    """The actor's body: runs task functions with the current map's shared arguments.

    A plain class (testable without Ray); :class:`ActorPool` wraps it with ``ray.remote``.

    Args:
        warm: A function of no arguments to call first, e.g.
            :func:`graphshard.partition.lp.warm_up` (None: none; a failure there is logged,
            never raised: the kernels then load on first use).
        keep_freed: The process keeps the memory it frees for its next tasks
            (:func:`~graphshard.runtime.malloc.keep_heap`): a worker process of its own runs
            task after task of similar sizes, and reusing mapped pages saves faulting
            fresh pages in (benchmarks/TUNING.md).  Its resident memory then stays at its peak.

    Example:
        >>> w = ShardWorker()
        >>> w.run(pow, (2,), 0, {"exp": 3}, [], []), w.run(pow, (3,), 0, {}, [], [])
        (8, 27)
    """

    def __init__(self, *, warm: Callable[[], float] | None = None,
                 keep_freed: bool = False) -> None:
        self._key: int | None = None
        self._shared: dict[str, Any] = {}
        self.warm_seconds = 0.0
        if keep_freed:
            keep_heap()
        if warm is not None:
            try:
                self.warm_seconds = warm()
            except Exception:  # an optimisation only: a real call reports real errors
                logger.warning("lp actor warm-up failed", exc_info=True)

    def ready(self) -> tuple[int, float]:
        """``(process ID, warm-up seconds)``, once the actor has started."""
        return os.getpid(), self.warm_seconds

    def run(self, fn: Callable[..., Any], call: Sequence[Any], key: int,
            values: dict[str, Any], names: list[str], refs: list[Any]) -> Any:
        """``fn(*call, **shared)``; ``shared`` = ``values`` plus ``names`` bound to the
        objects of ``refs``, resolved once per map ``key``."""
        if key != self._key:
            self._shared = {}  # drop the previous map's arrays first (object-store pins)
            resolved = _get(refs) if refs else []
            self._shared = {**values, **dict(zip(names, resolved, strict=True))}
            self._key = key
        return fn(*call, **self._shared)


def _same(a: np.ndarray, b: np.ndarray, block: int = 1 << 16) -> bool:
    """Whether two arrays are equal in dtype, shape and contents, compared block by block
    (the first differing block ends it).

    Example:
        >>> x = np.arange(10); _same(x, x.copy(), 4), _same(x, x[::-1].copy(), 4)
        (True, False)
    """
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    fa, fb = a.reshape(-1), b.reshape(-1)
    for lo in range(0, fa.size, block):
        if not np.array_equal(fa[lo:lo + block], fb[lo:lo + block]):
            return False
    return True


@dataclass(frozen=True)
class FileRef:
    """A shared array saved as an ``.npy`` file (see :meth:`ActorPool.share_files`)."""

    path: str


def _save_shared(path: Path, value: np.ndarray) -> FileRef:
    """Write ``value`` to ``path`` atomically (a reader never sees a partial file; no
    fsync: the work directory does not outlive the run)."""
    with atomic_path(path, durable=False) as tmp, open(tmp, "wb") as handle:
        np.save(handle, np.ascontiguousarray(value), allow_pickle=False)
    return FileRef(str(path))


def _same_as_file(ref: FileRef, value: np.ndarray, block: int = 1 << 20) -> bool:
    """Whether ``ref``'s file holds ``value`` (dtype, shape, contents), read block by block
    with plain reads: the driver compares without mapping the file's pages.

    Example:
        >>> import tempfile
        >>> x = np.arange(10); ref = _save_shared(Path(tempfile.mkdtemp()) / "x.npy", x)
        >>> _same_as_file(ref, x.copy(), 4), _same_as_file(ref, x[::-1].copy(), 4)
        (True, False)
    """
    with open(ref.path, "rb") as handle:
        version = np.lib.format.read_magic(handle)
        read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                       else np.lib.format.read_array_header_2_0)
        shape, fortran, dtype = read_header(handle)
        if shape != value.shape or dtype != value.dtype or fortran:
            return False
        flat = np.ascontiguousarray(value).reshape(-1)
        for lo in range(0, flat.size, block):
            part = np.fromfile(handle, dtype=dtype, count=min(block, flat.size - lo))
            if not np.array_equal(part, flat[lo:lo + block]):
                return False
    return True


def _get(refs: list[Any]) -> list[Any]:
    """The arrays behind ``refs``: memory-mapped read-only for :class:`FileRef`, else from
    Ray's object store (zero-copy, read-only)."""
    out: list[Any] = [None] * len(refs)
    store = [i for i, r in enumerate(refs) if not isinstance(r, FileRef)]
    for i, r in enumerate(refs):
        if isinstance(r, FileRef):
            out[i] = np.load(r.path, mmap_mode="r", allow_pickle=False).view(np.ndarray)
    if store:
        import ray

        for i, value in zip(store, ray.get([refs[i] for i in store]), strict=True):
            out[i] = value
    return out


class ActorPool:
    """``size`` :class:`ShardWorker` actors on the running Ray instance.

    Args:
        ray: The imported ``ray`` module (initialised).
        size: Number of actors (one per CPU is the usual choice).
        num_cpus: CPUs each actor reserves while the pool lives.
        warm: Called in each actor as it starts, to warm the kernels up (None: none).
        depth: Calls queued per actor while more follow (2: an actor starts its next
            call without waiting for the driver).

    Actors start in the background; the first calls wait for them.  :meth:`close` kills
    them (they also end with the driver).
    """

    _keys = itertools.count(1)

    def __init__(self, ray: Any, size: int, *, num_cpus: float = 1.0,
                 warm: Callable[[], float] | None = None, depth: int = 2) -> None:
        self._ray = ray
        self.depth = max(1, int(depth))
        cls = ray.remote(ShardWorker).options(num_cpus=num_cpus, max_restarts=0,
                                             max_task_retries=0)
        self._t0 = time.perf_counter()
        self.actors = [cls.remote(warm=warm, keep_freed=True)
                       for _ in range(max(1, int(size)))]
        self._ready = [a.ready.remote() for a in self.actors]
        self._last: dict[str, tuple[Any, Any]] = {}
        self._folder: Path | None = None
        self._saved = itertools.count()

    @property
    def size(self) -> int:
        """Number of actors."""
        return len(self.actors)

    def wait_ready(self) -> list[tuple[int, float]]:
        """Block until every actor has started; their ``(pid, warm-up seconds)``."""
        out = self._ray.get(self._ready)
        logger.debug("lp actors ready after %.1fs: %s", time.perf_counter() - self._t0, out)
        return out

    def map(self, fn: Callable[..., Any], calls: Iterable[Sequence[Any]],
            shared: dict[str, Any] | None = None, *,
            on_result: Callable[[], Any] | None = None) -> list[Any]:
        """Results of ``fn(*call, **shared)`` for every call, in submission order;
        ``on_result()`` is called as each arrives (a progress bar).

        ``calls`` is consumed lazily: at most ``depth`` calls are queued per actor and
        ``size`` more are prepared, so a stream of edge chunks never sits in memory all
        at once.
        """
        ray = self._ray
        trim_heap()  # the last map's results and commits are garbage by now
        key = next(self._keys)
        names, refs, values = [], [], {}
        for name, value in (shared or {}).items():
            if isinstance(value, np.ndarray):
                names.append(name)
                refs.append(self._put(name, value))
            else:
                values[name] = value
        todo = iter(enumerate(calls))
        ready: deque[tuple[int, Sequence[Any]]] = deque()
        load = dict.fromkeys(range(len(self.actors)), 0)  # calls in flight per actor
        running: dict[Any, tuple[int, int, Sequence[Any]]] = {}
        results: dict[int, Any] = {}
        tries: dict[int, int] = {}
        exhausted = False
        while True:
            while not exhausted and len(ready) < len(self.actors):  # prepare the next calls
                nxt = next(todo, None)
                if nxt is None:
                    exhausted = True
                else:
                    ready.append(nxt)
            # an idle actor takes the next call; a busy one queues a second call only while
            # more calls follow (no wait on the driver between calls, and no call stuck
            # behind a long one at the end of the map)
            limit = 1 if exhausted else self.depth
            a = min(load, key=load.__getitem__)
            if ready and load[a] < limit:
                i, call = ready.popleft()
                ref = self.actors[a].run.remote(fn, tuple(call), key, values, names, refs)
                running[ref] = (i, a, call)
                load[a] += 1
                continue
            if not running:
                break
            done, _ = ray.wait(list(running), num_returns=1)
            for ref in done:
                i, a, call = running.pop(ref)
                try:
                    results[i] = ray.get(ref)
                except ray.exceptions.RayActorError as exc:  # the actor or its node is gone
                    self._lost(a, load, fn, tries.get(i, 0), exc)
                    tries[i] = tries.get(i, 0) + 1
                    ready.appendleft((i, call))  # to a surviving actor, before new calls
                    continue
                load[a] -= 1
                if on_result is not None:
                    on_result()
        return [results[i] for i in range(len(results))]

    def _lost(self, a: int, load: dict[int, int], fn: Callable[..., Any], tries: int,
              exc: BaseException) -> None:
        """Actor ``a`` died: the pool goes on without it, unless none is left or the call
        has been run :data:`MAX_RETRIES` times again already.

        Raises:
            GraphshardError: no actor left, or the call failed too often.
        """
        if a in load:
            del load[a]
            logger.warning("lp: shard actor %d of %d is gone (%s: its process or node was "
                           "lost); its calls run on the %d others", a, len(self.actors),
                           type(exc).__name__, len(load))
        if not load or tries >= MAX_RETRIES:
            why = "no shard actor is left" if not load else \
                f"its actors died {tries + 1} times"
            raise GraphshardError(f"lp: {getattr(fn, '__name__', fn)} cannot finish: {why} "
                                  f"(the last: {type(exc).__name__}: {exc})") from exc

    def share_files(self, folder: str | Path | None) -> None:
        """Share arrays as ``.npy`` files in ``folder`` from now on (``None``: through the
        object store again).  Every actor must see ``folder``; the pool deletes a file
        once a later map replaces it, and the caller removes ``folder`` at the end."""
        self._forget()
        self._folder = None if folder is None else Path(folder)
        if self._folder is not None:
            self._folder.mkdir(parents=True, exist_ok=True)

    def _put(self, name: str, value: np.ndarray) -> Any:
        """The reference of shared array ``name``: the last map's when the contents are
        the same (a per-node array often is, e.g. the node weights of a level), else a
        new ``ray.put`` or file.  Comparing costs a fraction of a put and stops at the
        first differing block."""
        last = self._last.get(name)
        if last is not None:
            ref, stored = last
            if (_same_as_file(ref, value) if isinstance(ref, FileRef)
                    else _same(stored, value)):
                return ref
            self._drop(name)
        if self._folder is not None:
            ref = _save_shared(self._folder / f"{name}-{next(self._saved)}.npy", value)
            self._last[name] = (ref, None)
        else:
            ref = self._ray.put(value)
            self._last[name] = (ref, self._ray.get(ref))  # zero-copy view of the stored copy
        return ref

    def _drop(self, name: str) -> None:
        ref, _ = self._last.pop(name)
        if isinstance(ref, FileRef):  # every call of its map has returned
            with contextlib.suppress(FileNotFoundError):
                os.remove(ref.path)

    def _forget(self) -> None:
        for name in list(self._last):
            self._drop(name)

    def close(self) -> None:
        """Kill the actors (their CPUs return to Ray) and delete the shared files."""
        self._forget()
        for a in self.actors:
            self._ray.kill(a)
        self.actors = []
