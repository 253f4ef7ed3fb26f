"""Calls to the graph servers: submit to all, answer co-located ones in-process, gather.

A batch of calls (at most one per server per operation) is submitted to every remote server
first; calls for co-located partitions run directly on a local :class:`GraphServer` while the
remote ones are in flight; then the results are gathered in call order.

No fixed deadline applies to a server that is alive: a call waits as long as its server
answers its heartbeat (:mod:`graphshard.distributed._liveness`), e.g. while a cold server
compiles kernels on a busy machine.  A server that answers no heartbeat for
``heartbeat_timeout`` seconds (stopped, hung) fails the call with a
:class:`ServerTimeoutError` naming it, never a hang.  A server that dies is restarted by
Ray and its calls are resubmitted, as long as it comes back within ``heartbeat_timeout``.
A server that Ray will not restart (its restarts are used up, or it was killed for good) is
known dead from then on: that call and every later one to it fail at once with a
:class:`ServerError` naming the partition, without waiting.  A caller that wants a fixed
limit as well sets ``timeout``.

Example:
    >>> ServerTimeoutError("part 1 did not answer", field="part_id").field
    'part_id'
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._util.optional import import_optional
from ..errors import ServerError, ServerTimeoutError
from ..typing import IdArray
from ._liveness import HEARTBEAT_ENV, Heartbeats
from ._liveness import heartbeat_timeout as heartbeat_timeout_of

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
        deadline: ``time.monotonic()`` after which waiting raises (``inf``: none).
        started: ``time.monotonic()`` when the calls were sent.
    """

    calls: list[Call]
    refs: dict[int, Any]
    done: dict[int, Any]
    deadline: float
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
    """Routes calls to remote actors or co-located servers, with retries and liveness.

    Args:
        actors: One Ray actor handle per partition.
        local: Co-located partitions: ``{part_id: GraphServer}`` answered in-process.
        timeout: Seconds a batch may take, retries included (None: no fixed limit, only
            ``heartbeat_timeout``).
        heartbeat_timeout: Seconds a server may leave its heartbeat unanswered while a
            call waits on it (None: :func:`~graphshard.distributed._liveness.heartbeat_timeout`).
        retry_delay: First pause before resubmitting to a failed server (doubles).
        names: Ray actor name of each partition's server (for error messages).

    Attributes:
        dead: ``{part_id: cause}`` of the servers known to be gone for good: calls to them
            raise :class:`ServerError` at once.
    """

    def __init__(self, actors: Sequence[Any], local: dict[int, Any], *,
                 timeout: float | None = None, heartbeat_timeout: float | None = None,
                 retry_delay: float = 0.2, names: Sequence[str] | None = None) -> None:
        self.actors = list(actors)
        self.local = dict(local)
        self.timeout = None if timeout is None else float(timeout)
        self.heartbeat_timeout = heartbeat_timeout_of(heartbeat_timeout)
        self.retry_delay = float(retry_delay)
        self.names = list(names) if names is not None else None
        self.dead: dict[int, str] = {}
        self._ray = import_optional("ray", "distributed graphs")

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
        """Run ``calls`` concurrently; results in call order (``timeout``: this batch's own
        fixed limit instead of the router's).

        Raises:
            ServerTimeoutError: a server answered no heartbeat for ``heartbeat_timeout``
                seconds, or the fixed limit passed.
            ServerError: a server failed for good (or did not come back in time).
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
        limit = self.timeout if timeout is None else timeout
        deadline = math.inf if limit is None else started + limit
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
            results[i] = self._get(pending.calls[i], ref, pending.deadline,
                                   pending.deadline - pending.started)
        return results

    def wait(self, pendings: Sequence[Pending], *, timeout: float | None = None) -> list[int]:
        """Block until at least one of ``pendings`` has all its remote answers (a failed
        call counts as answered: :meth:`gather` retries it), or ``timeout`` seconds pass
        (None: no fixed limit); positions of the complete ones (none after a timeout).

        Raises:
            ServerTimeoutError: a server that holds an unanswered call answered no
                heartbeat for ``heartbeat_timeout`` seconds.
        """
        ray = self._ray
        owner = {r: pend.calls[i][0] for pend in pendings for i, r in pend.refs.items()}
        refs = list(owner)
        end = math.inf if timeout is None else time.monotonic() + timeout
        ready: set[Any] = set()
        beats = Heartbeats(ray, self.actors, self.heartbeat_timeout)
        while True:
            complete = [i for i, p in enumerate(pendings)
                        if all(r in ready for r in p.refs.values())]
            remaining = end - time.monotonic()
            if complete or not refs or remaining <= 0:
                return complete
            todo = [r for r in refs if r not in ready]
            got, _ = ray.wait(todo, num_returns=1, timeout=min(remaining, beats.poll))
            ready.update(got)
            if got:  # collect whatever else is ready by now, without blocking
                ready.update(ray.wait(todo, num_returns=len(todo), timeout=0)[0])
                continue
            busy = sorted({owner[r] for r in todo})
            stalled = beats.beat(busy)
            if stalled is not None:
                raise self._silent(stalled, "a batched request")

    def _get(self, call: Call, ref: Any, deadline: float, limit: float) -> Any:
        """The result of one remote call, resubmitting it while its server restarts.

        While the call runs, its server gets a heartbeat every few seconds; no answer for
        ``heartbeat_timeout`` seconds fails the call (a live server is waited for, however
        long the call takes).  Ray says a server is restarting with
        ``ActorUnavailableError`` (retried after a pause that doubles, while the restart
        takes less than ``heartbeat_timeout``) and gone for good with ``ActorDiedError``:
        the call is then resubmitted at once, and a second ``ActorDiedError`` in a row (a
        dead actor fails it without waiting) marks the partition dead for this and every
        later call.
        """
        ray = self._ray
        errors = ray.exceptions
        delay = self.retry_delay
        died = 0  # ActorDiedErrors in a row
        p, method, args = call
        beats: Heartbeats | None = None  # made on the first wait longer than a poll
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._late(p, method, limit)
            try:
                poll = beats.poll if beats is not None else min(2.0, self.heartbeat_timeout / 4)
                return ray.get(ref, timeout=min(remaining, poll))
            except errors.GetTimeoutError:
                if beats is None:
                    beats = Heartbeats(ray, self.actors, self.heartbeat_timeout)
                if beats.beat([p]) is not None:
                    raise self._silent(p, repr(method)) from None
            except errors.ActorDiedError as exc:
                died += 1
                if died >= 2:
                    self.dead[p] = _cause(exc)
                    raise self._gone(p, method) from exc
                ref = getattr(self.actors[p], method).remote(*args)
            except (errors.RayActorError, errors.ActorUnavailableError) as exc:
                died = 0
                if beats is None:
                    beats = Heartbeats(ray, self.actors, self.heartbeat_timeout)
                beats.beat([p])
                gone = beats.silent(p) + delay > self.heartbeat_timeout
                if gone or deadline - time.monotonic() <= delay:
                    why = (f"heartbeat_timeout, {self.heartbeat_timeout:g} s" if gone
                           else f"the timeout option, {limit:g} s")
                    raise ServerError(f"{self._server(p)} failed on {method!r} and did not "
                                      f"come back in time ({why}): "
                                      f"{type(exc).__name__}", field="part_id",
                                      value=p) from exc
                log.info("partition %d server failed on %s (%s); retrying", p, method,
                         type(exc).__name__)
                time.sleep(delay)
                delay = min(delay * 2, 2.0)
                ref = getattr(self.actors[p], method).remote(*args)

    def _late(self, p: int, method: str, limit: float) -> ServerTimeoutError:
        return ServerTimeoutError(f"{self._server(p)} did not answer {method!r} within "
                                  f"{limit:g} s (the timeout option; timeout=None "
                                  "waits as long as the server answers its heartbeat)",
                                  field="part_id", value=p)

    def _silent(self, p: int, what: str) -> ServerTimeoutError:
        return ServerTimeoutError(f"{self._server(p)} answered no heartbeat for "
                                  f"{self.heartbeat_timeout:g} s while running {what}: its "
                                  "process is stopped or hung; the limit is "
                                  f"heartbeat_timeout (or ${HEARTBEAT_ENV})",
                                  field="part_id", value=p)

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
