"""Liveness of the graph servers: heartbeats, and waiting for readiness with progress.

No fixed deadline applies to a graph server that is alive and working: on a busy machine its
start-up (loading its part, compiling the kernels it serves) and its requests may take
minutes.  Instead, a server answers :meth:`~graphshard.distributed.GraphServer.status` in a
Ray concurrency group of its own (:data:`HEALTH_GROUP`, one thread), so it answers while it
loads, compiles or runs a long request.  Whoever waits on a server sends it such a heartbeat
every :data:`POLL` seconds while the wait lasts; a server that answers none for
``heartbeat_timeout`` seconds (its process stopped or hung, or never started by Ray) fails the
wait with a :class:`~graphshard.errors.ServerTimeoutError` naming it.  A server whose process
dies fails the wait at once: Ray reports the death.

``heartbeat_timeout`` is an option of :func:`~graphshard.distributed.serve`,
:class:`~graphshard.distributed.DistGraph` and ``graphshard serve``; where none is given,
``$GRAPHSHARD_HEARTBEAT_TIMEOUT`` or :data:`DEFAULT_HEARTBEAT_TIMEOUT` (300 s) applies.

Example:
    >>> heartbeat_timeout(30), heartbeat_timeout(None) == DEFAULT_HEARTBEAT_TIMEOUT
    (30.0, True)
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Iterable, Sequence
from typing import Any

from .._util.progress import progress_bar
from ..errors import ServerError, ServerTimeoutError, ValidationError

__all__ = ["CONCURRENCY_GROUPS", "DEFAULT_HEARTBEAT_TIMEOUT", "HEALTH_GROUP", "HEARTBEAT_ENV",
           "POLL", "Heartbeats", "heartbeat_timeout", "wait_ready"]

log = logging.getLogger(__name__)

#: The Ray concurrency group (one thread) in which a graph server answers its heartbeat.
HEALTH_GROUP = "health"
#: ``ray.remote(concurrency_groups=...)`` of the graph server actor class.
CONCURRENCY_GROUPS = {HEALTH_GROUP: 1}
#: Seconds a server may leave every heartbeat unanswered before a wait on it fails: long
#: enough for a Ray worker process to start on a machine at load 30 on 2 cores (a dead
#: process is reported by Ray at once; this only bounds a stopped or hung one).
DEFAULT_HEARTBEAT_TIMEOUT = 300.0
#: Environment variable that sets the default of ``heartbeat_timeout``.
HEARTBEAT_ENV = "GRAPHSHARD_HEARTBEAT_TIMEOUT"
#: Seconds between heartbeats while a wait lasts (at most; a quarter of the limit if less).
POLL = 2.0
#: Seconds between the progress log lines of a readiness wait.
_LOG_EVERY = 15.0


def heartbeat_timeout(value: float | None = None) -> float:
    """``value``, else ``$GRAPHSHARD_HEARTBEAT_TIMEOUT``, else :data:`DEFAULT_HEARTBEAT_TIMEOUT`.

    Raises:
        ValidationError: not a positive number of seconds.
    """
    where = "heartbeat_timeout"
    if value is None:
        env = os.environ.get(HEARTBEAT_ENV, "").strip()
        if not env:
            return DEFAULT_HEARTBEAT_TIMEOUT
        where = HEARTBEAT_ENV
        try:
            value = float(env)
        except ValueError:
            value = math.nan
    value = float(value)
    if not value > 0:
        raise ValidationError(f"{where} must be a positive number of seconds, got {value!r}",
                              field=where, value=value)
    return value


class Heartbeats:
    """Heartbeats to the servers one wait is waiting on.

    Args:
        ray: The ``ray`` module.
        actors: One actor handle per partition.
        limit: Seconds a watched server may leave every heartbeat unanswered.

    Attributes:
        poll: Seconds between two rounds of :meth:`beat`.
        status: Partition -> the last :meth:`GraphServer.status` it answered.
    """

    def __init__(self, ray: Any, actors: Sequence[Any], limit: float) -> None:
        self._ray = ray
        self.actors = actors
        self.limit = float(limit)
        self.poll = min(POLL, self.limit / 4)
        self.status: dict[int, dict[str, Any]] = {}
        self._seen: dict[int, float] = {}
        self._ping: dict[int, Any] = {}

    def silent(self, p: int) -> float:
        """Seconds since partition ``p`` last gave a sign of life (or was first watched)."""
        return time.monotonic() - self._seen.setdefault(p, time.monotonic())

    def beat(self, parts: Iterable[int]) -> int | None:
        """Note the heartbeats answered since the last call and send one to each of
        ``parts`` that has none in flight; the first of ``parts`` silent for longer than
        the limit, else None."""
        ray = self._ray
        parts = list(parts)
        now = time.monotonic()
        for p in parts:
            self._seen.setdefault(p, now)
        if self._ping:
            answered, _ = ray.wait(list(self._ping.values()), num_returns=len(self._ping),
                                   timeout=0)
            done = set(answered)
            for p, ref in list(self._ping.items()):
                if ref not in done:
                    continue
                del self._ping[p]
                try:
                    self.status[p] = ray.get(ref)
                except Exception:  # restarting or dead: no sign of life (the wait sees why)
                    continue
                self._seen[p] = now
        for p in parts:
            if p not in self._ping:
                self._ping[p] = self.actors[p].status.options(
                    concurrency_group=HEALTH_GROUP).remote()
        return next((p for p in parts if now - self._seen[p] > self.limit), None)

    def phase(self, p: int) -> str:
        """What partition ``p``'s server said it does (``"starting"`` before it answered)."""
        st = self.status.get(p)
        return "starting (Ray has not started its process yet)" if st is None else st["phase"]


def wait_ready(ray: Any, actors: Sequence[Any], names: Sequence[str], where: str, *,
               limit: float, timeout: float | None = None, starting: bool = True
               ) -> list[dict[str, Any]]:
    """Every server's :meth:`~graphshard.distributed.GraphServer.info`, once each has loaded
    its part and warmed its kernels up, for as long as they take while they answer their
    heartbeats; progress is a bar (on a TTY) and an INFO line every 15 s (``"3 of 4 graph
    servers ready; waiting for partition 2 (compiling kernels, 35 s)"``).

    Args:
        ray: The ``ray`` module.
        actors: One server actor handle per partition.
        names: Their actor names (for messages).
        where: The config path (for messages).
        limit: Seconds a server may leave every heartbeat unanswered.
        timeout: Seconds the whole wait may take (None: no fixed limit).
        starting: The servers were just started (messages say "failed to start"), or
            were running already ("is not reachable").

    Raises:
        ServerError: a server failed to load its part, or its process died (at once).
        ServerTimeoutError: a server answered no heartbeat for ``limit`` seconds, or
            ``timeout`` passed.
    """
    errors = ray.exceptions
    t0 = time.monotonic()
    end = math.inf if timeout is None else t0 + timeout
    beats = Heartbeats(ray, actors, limit)
    refs = {p: a.info.remote() for p, a in enumerate(actors)}
    died: dict[int, int] = {}
    infos: dict[int, dict[str, Any]] = {}
    logged = t0

    def server(p: int) -> str:
        return f"{where}: the graph server of partition {p} ({names[p]})"

    with progress_bar(desc="graph servers ready", total=len(actors), unit="server",
                      delay=2.0) as bar:
        while refs:
            now = time.monotonic()
            if now >= end:
                p = min(refs)
                raise ServerTimeoutError(
                    f"{server(p)} was not ready within {timeout:g} s (the timeout option; "
                    f"it was {beats.phase(p)}); timeout=None waits as long as it answers "
                    "its heartbeat", path=where, field="part_id", value=p)
            ready, _ = ray.wait(list(refs.values()), num_returns=len(refs),
                                timeout=min(beats.poll, end - now))
            done = set(ready)
            for p in [p for p, r in refs.items() if r in done]:
                try:
                    infos[p] = ray.get(refs.pop(p))
                except errors.ActorUnavailableError:  # restarting: ask again (heartbeats bound it)
                    refs[p] = actors[p].info.remote()
                except errors.RayActorError as exc:
                    died[p] = died.get(p, 0) + 1
                    if died[p] >= 2 or not starting:  # a dead actor fails the retry at once
                        what = "died while starting" if starting else "is not reachable"
                        raise ServerError(
                            f"{server(p)} {what} ({type(exc).__name__}); stop the servers "
                            "(graphshard.distributed.shutdown) and serve again", path=where,
                            field="part_id", value=p) from exc
                    refs[p] = actors[p].info.remote()  # Ray may have restarted it
                except Exception as exc:  # the server's own error, e.g. a missing part file
                    raise ServerError(f"{server(p)} failed to start: {exc}", path=where,
                                      field="part_id", value=p) from exc
                else:
                    bar.update(1)
                    log.info("%s: partition %d server ready after %.1f s (pid %s)", where, p,
                             time.monotonic() - t0, infos[p].get("pid"))
            if not refs:
                break
            stalled = beats.beat(refs)
            if stalled is not None:
                raise ServerTimeoutError(
                    f"{server(stalled)} answered no heartbeat for {limit:g} s while "
                    f"{beats.phase(stalled)}: its process is stopped or hung, or Ray could "
                    f"not start it; the limit is heartbeat_timeout (or ${HEARTBEAT_ENV})",
                    path=where, field="part_id", value=stalled)
            if time.monotonic() - logged >= _LOG_EVERY:
                logged = time.monotonic()
                log.info("%s: %s", where, _progress_line(len(actors), refs, beats))
    return [infos[p] for p in range(len(actors))]


def _progress_line(total: int, waiting: Iterable[int], beats: Heartbeats) -> str:
    """``"3 of 4 graph servers ready; waiting for partition 2 (compiling kernels, 35 s)"``."""
    waiting = sorted(waiting)
    parts = []
    for p in waiting:
        st = beats.status.get(p)
        secs = f", {st['seconds']:.0f} s" if st is not None else ""
        parts.append(f"partition {p} ({beats.phase(p)}{secs})")
    return (f"{total - len(waiting)} of {total} graph servers ready; waiting for "
            + ", ".join(parts))
