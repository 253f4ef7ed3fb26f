"""Waiting on graph servers by their heartbeat instead of a fixed deadline.

A server's ``health`` method answers from a thread of its own
(:mod:`graphshard.distributed._served`), while the server loads, compiles its kernels or
serves a long request.  :class:`Heartbeat` keeps one ``health`` call in flight per
server and remembers when each last answered; a wait goes on as long as the server keeps
answering, and fails only for a server that has been silent for ``silence`` seconds (or
that Ray reports dead), naming it and what it was doing.  On a busy machine a server
that is slow but alive is waited for, however long its work takes.

Example:
    >>> describe_stages({0: "ready", 1: "compiling kernels", 2: "ready"})
    '2 of 3 servers ready; partition 1: compiling kernels'
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

from .._util.progress import progress_bar
from ..errors import ServerError, ServerTimeoutError

__all__ = ["DEFAULT_SILENCE", "Heartbeat", "describe_stages", "wait_ready"]

log = logging.getLogger(__name__)

#: Seconds a server may go without answering its heartbeat before a wait on it fails.  A
#: heartbeat is answered from its own thread in well under a second on an idle machine;
#: this leaves room for a machine loaded many times over.
DEFAULT_SILENCE = 300.0

#: Seconds between looks at the answers and heartbeats while waiting.
POLL = 1.0


def describe_stages(stages: dict[int, str]) -> str:
    """``"k of n servers ready; partition p: stage, ..."`` (the ones not ready, first 3)."""
    ready = sum(1 for s in stages.values() if s == "ready")
    busy = [f"partition {p}: {s}" for p, s in sorted(stages.items()) if s != "ready"][:3]
    return "; ".join([f"{ready} of {len(stages)} servers ready", *busy])


class Heartbeat:
    """Heartbeats of ``actors`` (one Ray actor per partition, with ``health``).

    Args:
        ray: The ``ray`` module.
        actors: Actor handles, by partition.
        silence: Seconds without any answer after which a server counts as stopped.
        names: How each server is named in errors.
    """

    def __init__(self, ray: Any, actors: Sequence[Any], silence: float,
                 names: Sequence[str] | None = None) -> None:
        self.ray, self.actors, self.silence = ray, list(actors), float(silence)
        self.names = list(names) if names is not None else None
        now = time.monotonic()
        self.last = {p: now for p in range(len(self.actors))}
        self.stage = {p: "starting" for p in range(len(self.actors))}
        self._inflight: dict[int, Any] = {}

    def server(self, p: int) -> str:
        """``graph server of partition p (its actor name)``."""
        name = f" ({self.names[p]})" if self.names is not None else ""
        return f"graph server of partition {p}{name}"

    def check(self, p: int, waiting_for: str, since: float) -> None:
        """Look at server ``p``'s heartbeat (sending one when none is in flight); silence
        counts from its last answer or ``since`` (``time.monotonic()`` when the wait began),
        whichever is later.

        Raises:
            ServerError: the server failed to load, or Ray says it is dead.
            ServerTimeoutError: it has not answered for ``silence`` seconds.
        """
        ray = self.ray
        ref = self._inflight.get(p)
        if ref is None:
            self._inflight[p] = self.actors[p].health.remote()
            return
        ready, _ = ray.wait([ref], timeout=0)
        if ready:
            del self._inflight[p]
            try:
                answer = ray.get(ref)
            except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError):
                return  # restarting or dead: the call waited on says which, and is retried
            self.last[p] = time.monotonic()
            self.stage[p] = str(answer.get("stage", "?"))
            if answer.get("error"):
                raise ServerError(f"{self.server(p)} failed to load: {answer['error']}",
                                  field="part_id", value=p)
        silent = time.monotonic() - max(self.last[p], since)
        if silent > self.silence:
            raise ServerTimeoutError(
                f"{self.server(p)} stopped answering: no answer to {waiting_for} and no "
                f"heartbeat for {silent:.0f} s (last seen {self.stage[p]!r}; the limit is "
                f"{self.silence:g} s of silence)", field="part_id", value=p)

    def alive(self, p: int) -> None:
        """Server ``p`` just answered: it is alive now."""
        self.last[p] = time.monotonic()


def wait_ready(ray: Any, actors: Sequence[Any], where: str, *, silence: float,
               names: Sequence[str] | None = None, starting: bool = False
               ) -> list[dict[str, Any]]:
    """Every server's ``info()`` once it has loaded and compiled its kernels, with a
    progress bar (and INFO lines) of how many are ready; no limit while the servers keep
    answering their heartbeat.  ``starting``: the servers were just started (an error
    says one failed to start, else that it is not reachable).

    Raises:
        ServerError: a server failed to load, or died (named, with the cause chained).
        ServerTimeoutError: a server went ``silence`` seconds without answering.
    """
    beat = Heartbeat(ray, actors, silence, names)
    since = time.monotonic()
    refs = {ray_ref: p for p, ray_ref in enumerate(a.info.remote() for a in actors)}
    poll = min(POLL, silence / 4)
    infos: dict[int, dict[str, Any]] = {}
    shown = ""
    with progress_bar(desc="graph servers ready", total=len(actors), unit="server",
                      delay=2.0) as bar:
        while refs:
            done, _ = ray.wait(list(refs), num_returns=len(refs), timeout=poll)
            for ref in done:
                p = refs.pop(ref)
                try:
                    infos[p] = ray.get(ref)
                except ray.exceptions.RayActorError as exc:
                    if starting:
                        raise ServerError(f"{where}: the {beat.server(p)} failed to start: "
                                          f"{_first_line(exc)}", path=where, field="part_id",
                                          value=p) from exc
                    raise ServerError(f"{where}: the {beat.server(p)} is not reachable "
                                      f"({type(exc).__name__}); stop the servers "
                                      "(graphshard.distributed.shutdown) and serve again",
                                      path=where, field="part_id", value=p) from exc
                except ServerError as exc:
                    raise ServerError(f"{where}: {exc}", path=where, field="part_id",
                                      value=p) from exc
                beat.stage[p] = "ready"
                bar.update(1)
            for p in refs.values():
                beat.check(p, "'info' (loading)", since)
            text = describe_stages(beat.stage)
            if text != shown and refs:
                log.info("%s: %s", where, text)
                shown = text
    return [infos[p] for p in range(len(actors))]


def _first_line(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return f"{type(exc).__name__}: {lines[0] if lines else ''}"
