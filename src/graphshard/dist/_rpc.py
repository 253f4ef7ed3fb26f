"""Calls to the graph servers: submit to all, answer co-located ones in-process, gather.

A batch of calls (at most one per server per operation) is submitted to every remote server
first; calls for co-located partitions run directly on a local :class:`GraphServer` while the
remote ones are in flight; then the results are gathered in call order.  A server that dies
is restarted by Ray; its calls are retried until a deadline, after which the caller gets a
:class:`ServerTimeoutError` (never a hang).

Example:
    >>> ServerTimeoutError("part 1 did not answer", field="part_id").field
    'part_id'
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._optional import import_optional
from ..errors import ServerError, ServerTimeoutError
from ..typing import IdArray

__all__ = ["Call", "Router", "group_by_owner"]

log = logging.getLogger(__name__)

#: ``(part_id, method name, positional args)``
Call = tuple[int, str, tuple]


def group_by_owner(owner: IdArray, num_parts: int) -> list[IdArray]:
    """Positions of each part's items, in input order within each part (stable).

    Example:
        >>> [g.tolist() for g in group_by_owner(np.array([1, 0, 1, 1]), 2)]
        [[1], [0, 2, 3]]
    """
    order = np.argsort(owner, kind="stable")
    cuts = np.cumsum(np.bincount(owner, minlength=num_parts))[:-1]
    return np.split(order.astype(np.int64, copy=False), cuts)


class Router:
    """Routes calls to remote actors or co-located servers, with retries and a deadline.

    Args:
        actors: One Ray actor handle per partition.
        local: Co-located partitions: ``{part_id: GraphServer}`` answered in-process.
        timeout: Seconds a batch may take, retries included.
        retry_delay: First pause before resubmitting to a failed server (doubles).
    """

    def __init__(self, actors: Sequence[Any], local: dict[int, Any], *, timeout: float,
                 retry_delay: float = 0.2) -> None:
        self.actors = list(actors)
        self.local = dict(local)
        self.timeout = float(timeout)
        self.retry_delay = float(retry_delay)
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
        deadline instead of the router's).

        Raises:
            ServerTimeoutError: a server did not answer before the deadline.
            ServerError: a server failed for good (or kept failing until the deadline).
        """
        ray = self._ray
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        pending: dict[int, Any] = {}
        results: list[Any] = [None] * len(calls)
        for i, (p, method, args) in enumerate(calls):
            if p not in self.local:
                pending[i] = getattr(self.actors[p], method).remote(*args)
        for i, (p, method, args) in enumerate(calls):
            if p in self.local:
                results[i] = getattr(self.local[p], method)(*_resolve(ray, args))
        for i, ref in pending.items():
            results[i] = self._get(calls[i], ref, deadline)
        return results

    def _get(self, call: Call, ref: Any, deadline: float) -> Any:
        ray = self._ray
        exc_types = (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError)
        delay = self.retry_delay
        p, method, args = call
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ServerTimeoutError(f"graph server of partition {p} did not answer "
                                         f"{method!r} within {self.timeout:g} s",
                                         field="part_id", value=p)
            try:
                return ray.get(ref, timeout=remaining)
            except ray.exceptions.GetTimeoutError as exc:
                raise ServerTimeoutError(f"graph server of partition {p} did not answer "
                                         f"{method!r} within {self.timeout:g} s",
                                         field="part_id", value=p) from exc
            except exc_types as exc:
                if deadline - time.monotonic() <= delay:
                    raise ServerError(f"graph server of partition {p} failed on {method!r} "
                                      f"and did not come back within {self.timeout:g} s: "
                                      f"{type(exc).__name__}", field="part_id",
                                      value=p) from exc
                log.info("partition %d server failed on %s (%s); retrying", p, method,
                         type(exc).__name__)
                time.sleep(delay)
                delay = min(delay * 2, 2.0)
                ref = getattr(self.actors[p], method).remote(*args)


def _resolve(ray: Any, args: tuple) -> tuple:
    """Arguments with Ray references replaced by their values (for in-process calls)."""
    if not any(isinstance(a, ray.ObjectRef) for a in args):
        return args
    return tuple(ray.get(a) if isinstance(a, ray.ObjectRef) else a for a in args)
