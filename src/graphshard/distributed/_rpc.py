"""Calls to the graph servers: submit to all, answer co-located ones in-process, gather.

A batch of calls (at most one per server per operation) is submitted to every remote server
first; calls for co-located partitions run directly on a local :class:`GraphServer` while the
remote ones are in flight; then the results are gathered in call order.  A server that dies
is restarted by Ray and its calls are retried.  A call waits as long as its server answers
its heartbeat (:mod:`graphshard.distributed._liveness`): a busy machine or a long request is
never a time-out; a server silent for the router's ``timeout`` seconds (or one that does not
come back from a restart within them) gives the caller a :class:`ServerTimeoutError`, never
a hang.  A call given an explicit ``timeout`` has that hard deadline instead.  A server that
Ray will not restart (its restarts are used up, or it was killed for good) is known dead
from then on: that call and every later one to it fail at once with a
:class:`ServerError` naming the partition, without waiting.

Example:
    >>> ServerTimeoutError("part 1 did not answer", field="part_id").field
    'part_id'
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._util.optional import import_optional
from ..errors import ServerError, ServerTimeoutError
from ..typing import IdArray
from ._liveness import POLL, Heartbeat

__all__ = ["Call", "Pending", "Router", "group_by_owner", "merge_calls", "split_results"]

log = logging.getLogger(__name__)

#: ``(part_id, method name, positional args)``
Call = tuple[int, str, tuple]


def group_by_owner(owner: IdArray, num_parts: int) -> list[IdArray]:
    """Positions of each part's items, in input order within each part (stable).

    Example:
        >>> [g.tolist() for g in group_by_owner(np.array([1, 0, 1, 1]), 2)]
        [[1], [0, 2, 3]]
    """
    small = np.uint8 if num_parts <= 256 else np.uint16 if num_parts <= 65536 else np.int64
    order = np.argsort(owner.astype(small, copy=False), kind="stable")  # radix sort: O(n)
    cuts = np.cumsum(np.bincount(owner, minlength=num_parts))[:-1]
    return np.split(order.astype(np.int64, copy=False), cuts)


@dataclass
class Pending:
    """Calls in flight (from :meth:`Router.submit`).

    Attributes:
        calls: The calls, in order.
        refs: Position -> Ray reference of each remote call.
        done: Position -> result of each call answered in-process.
        deadline: ``time.monotonic()`` after which waiting raises, for calls given an
            explicit timeout; None: wait while the servers answer their heartbeat.
        started: ``time.monotonic()`` when the calls were sent.
    """

    calls: list[Call]
    refs: dict[int, Any]
    done: dict[int, Any]
    deadline: float | None
    started: float


def merge_calls(calls: Sequence[Call]) -> tuple[list[Call], list[tuple[int, int]]]:
    """One call per server: the calls of a server that gets several become one ``multi``.

    Returns the merged calls and, for every input call, ``(merged position, position in the
    multi's results or -1 for a plain call)``; :func:`split_results` undoes the merge.

    Example:
        >>> merged, where = merge_calls([(1, "a", ()), (0, "b", ()), (1, "c", (2,))])
        >>> merged, where
        ([(1, 'multi', ([('a', ()), ('c', (2,))],)), (0, 'b', ())], [(0, 0), (1, -1), (0, 1)])
    """
    by_part: dict[int, list[int]] = {}
    for i, (p, _, _) in enumerate(calls):
        by_part.setdefault(p, []).append(i)
    merged: list[Call] = []
    where: list[tuple[int, int]] = [(0, -1)] * len(calls)
    for p, idx in by_part.items():
        if len(idx) == 1:
            where[idx[0]] = (len(merged), -1)
            merged.append(calls[idx[0]])
            continue
        for j, i in enumerate(idx):
            where[i] = (len(merged), j)
        merged.append((p, "multi", ([(calls[i][1], calls[i][2]) for i in idx],)))
    return merged, where


def split_results(results: Sequence[Any], where: Sequence[tuple[int, int]]) -> list[Any]:
    """Results of the original calls from those of :func:`merge_calls`' merged calls."""
    return [results[m] if j < 0 else results[m][j] for m, j in where]


class Router:
    """Routes calls to remote actors or co-located servers, with retries and a deadline.

    Args:
        actors: One Ray actor handle per partition.
        local: Co-located partitions: ``{part_id: GraphServer}`` answered in-process.
        timeout: Seconds a server may stay silent (no answer and no heartbeat) before a
            call to it fails; a server that keeps answering its heartbeat is waited for.
        retry_delay: First pause before resubmitting to a failed server (doubles).
        names: Ray actor name of each partition's server (for error messages).

    Attributes:
        dead: ``{part_id: cause}`` of the servers known to be gone for good: calls to them
            raise :class:`ServerError` at once.
    """

    def __init__(self, actors: Sequence[Any], local: dict[int, Any], *, timeout: float,
                 retry_delay: float = 0.2, names: Sequence[str] | None = None) -> None:
        self.actors = list(actors)
        self.local = dict(local)
        self.timeout = float(timeout)
        self.retry_delay = float(retry_delay)
        self.names = list(names) if names is not None else None
        self.dead: dict[int, str] = {}
        self._ray = import_optional("ray", "distributed graphs")
        self.heartbeat = Heartbeat(self._ray, self.actors, self.timeout, self.names)

    @property
    def num_parts(self) -> int:
        """Number of partitions (servers)."""
        return len(self.actors)

    def put(self, value: Any) -> Any:
        """A Ray reference to ``value`` when some server is remote (pass it to many calls)."""
        if len(self.local) == len(self.actors):
            return value
        return self._ray.put(value)

    def call(self, calls: Sequence[Call], *, timeout: float | None = None) -> list[Any]:
        """Run ``calls`` concurrently; results in call order (``timeout``: a hard deadline
        for this batch instead of waiting on the servers' heartbeats).

        Raises:
            ServerTimeoutError: a server stopped answering (or missed the deadline).
            ServerError: a server failed for good.
        """
        return self.gather(self.submit(calls, timeout=timeout))

    def submit(self, calls: Sequence[Call], *, timeout: float | None = None) -> Pending:
        """Send ``calls`` to their remote servers and answer the co-located ones in-process
        meanwhile; :meth:`gather` collects the results (the deadline starts now)."""
        ray = self._ray
        for p, method, _ in calls:
            if p in self.dead and p not in self.local:
                raise self._gone(p, method)
        started = time.monotonic()
        deadline = None if timeout is None else started + timeout
        refs: dict[int, Any] = {}
        done: dict[int, Any] = {}
        for i, (p, method, args) in enumerate(calls):
            if p not in self.local:
                refs[i] = getattr(self.actors[p], method).remote(*args)
        for i, (p, method, args) in enumerate(calls):
            if p in self.local:
                done[i] = getattr(self.local[p], method)(*_resolve(ray, args))
        return Pending(list(calls), refs, done, deadline, started)

    def gather(self, pending: Pending) -> list[Any]:
        """Results of :meth:`submit`'s calls in call order (retrying failed servers)."""
        results: list[Any] = [None] * len(pending.calls)
        for i, value in pending.done.items():
            results[i] = value
        for i, ref in pending.refs.items():
            results[i] = self._get(pending.calls[i], ref, pending.deadline)
        return results

    def wait(self, pendings: Sequence[Pending], *, timeout: float) -> list[int]:
        """Block until at least one of ``pendings`` has all its remote answers (a failed
        call counts as answered: :meth:`gather` retries it), or ``timeout`` seconds pass;
        positions of the complete ones (none after a timeout)."""
        ray = self._ray
        refs = [r for p in pendings for r in p.refs.values()]
        end = time.monotonic() + timeout
        ready: set[Any] = set()
        while True:
            complete = [i for i, p in enumerate(pendings)
                        if all(r in ready for r in p.refs.values())]
            remaining = end - time.monotonic()
            if complete or not refs or remaining <= 0:
                return complete
            todo = [r for r in refs if r not in ready]
            got, _ = ray.wait(todo, num_returns=1, timeout=remaining)
            ready.update(got)
            if got:  # collect whatever else is ready by now, without blocking
                ready.update(ray.wait(todo, num_returns=len(todo), timeout=0)[0])

    def _get(self, call: Call, ref: Any, deadline: float | None) -> Any:
        """The result of one remote call, resubmitting it while its server restarts.

        Without a ``deadline`` it waits while the server answers its heartbeat
        (:class:`~graphshard.distributed._liveness.Heartbeat`): only ``timeout`` seconds
        of silence fail it.  Ray says a server is restarting with ``ActorUnavailableError``
        (retried after a pause that doubles) and gone for good with ``ActorDiedError``: the
        call is then resubmitted at once, and a second ``ActorDiedError`` in a row (a dead
        actor fails it without waiting) marks the partition dead for this and every later
        call.
        """
        ray = self._ray
        errors = ray.exceptions
        delay = self.retry_delay
        died = 0  # ActorDiedErrors in a row
        p, method, args = call
        since = time.monotonic()
        poll = min(POLL, self.timeout / 4)  # several looks at the heartbeat per silence
        while True:
            wait = poll
            if deadline is not None:
                wait = min(poll, deadline - time.monotonic())
                if wait <= 0:
                    raise ServerTimeoutError(f"{self._server(p)} did not answer {method!r} "
                                             "within the call's deadline", field="part_id",
                                             value=p)
            try:
                value = ray.get(ref, timeout=wait)
                self.heartbeat.alive(p)
                return value
            except errors.GetTimeoutError:
                if deadline is None:
                    self.heartbeat.check(p, repr(method), since)
                continue
            except errors.ActorDiedError as exc:
                died += 1
                if died >= 2:
                    self.dead[p] = _cause(exc)
                    raise self._gone(p, method) from exc
                ref = getattr(self.actors[p], method).remote(*args)
            except (errors.RayActorError, errors.ActorUnavailableError) as exc:
                died = 0
                back_by = (max(self.heartbeat.last[p], since) + self.timeout
                           if deadline is None else deadline)
                if back_by - time.monotonic() <= delay:
                    raise ServerError(f"{self._server(p)} failed on {method!r} and did not "
                                      f"come back within {self.timeout:g} s: "
                                      f"{type(exc).__name__}", field="part_id",
                                      value=p) from exc
                log.info("partition %d server failed on %s (%s); retrying", p, method,
                         type(exc).__name__)
                time.sleep(delay)
                delay = min(delay * 2, 2.0)
                ref = getattr(self.actors[p], method).remote(*args)

    def _server(self, p: int) -> str:
        """``graph server of partition p`` (and its actor name when known)."""
        name = f" ({self.names[p]})" if self.names is not None else ""
        return f"graph server of partition {p}{name}"

    def _gone(self, p: int, method: str) -> ServerError:
        return ServerError(f"{self._server(p)} is gone for good ({self.dead[p]}): Ray will "
                           f"not restart it, so {method!r} and every later request to it "
                           "fail at once; start the servers again (graphshard serve) and "
                           "open a new DistGraph", field="part_id", value=p)


def _cause(exc: BaseException) -> str:
    """Exception type and the line of Ray's many-line message that says why the actor is
    dead (else its first line)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    why = [ln for ln in lines if ln.startswith("The actor is dead because")]
    text = (why or lines or [""])[0]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _resolve(ray: Any, args: tuple) -> tuple:
    """Arguments with Ray references replaced by their values (for in-process calls)."""
    if not any(isinstance(a, ray.ObjectRef) for a in args):
        return args
    return tuple(ray.get(a) if isinstance(a, ray.ObjectRef) else a for a in args)
