"""BlockLoader: sampled mini-batches with features, several batches in flight.

A trainer's loader wants throughput: while it merges the answers of one batch, the servers
should already be working on the next ones.  :class:`BlockLoader` keeps ``prefetch`` batches
in flight, each a :func:`~graphshard.distributed.sampling.blocks_steps` generator.  Whenever some
batches are ready for their next round, their calls are sent together, one call per server
(several batches' requests ride in one ``multi`` call, so the per-call cost of Ray is
shared); the loader then waits for whichever round answers first, hands the answers back and
yields finished batches in order.  No thread is involved: the servers work in the background
while the caller trains on the batch just yielded.

Example:
    >>> import graphshard as gs
    >>> dg = gs.distributed.DistGraph("parts/shop.json")  # doctest: +SKIP
    >>> loader = BlockLoader(dg, seed_batches, [10, 25], features="feat", seed=0)
    ... # doctest: +SKIP
    >>> for batch in loader:  # doctest: +SKIP
    ...     train(batch.blocks, batch.features["_N"])
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import ValidationError
from ._rpc import Call, Pending, merge_calls, split_results
from .sampling import DistBatch, blocks_steps

if TYPE_CHECKING:
    from .graph import DistGraph

__all__ = ["BlockLoader", "pipeline"]

_T = TypeVar("_T")


@dataclass(eq=False)
class _Batch:
    index: int
    steps: Generator[list[Call], list[Any], Any]
    calls: list[Call] | None = None  # next round's calls, not yet sent


@dataclass(eq=False)
class _Round:
    pending: Pending
    where: list[tuple[int, int]]
    members: list[tuple[_Batch, int, int]] = field(default_factory=list)  # batch, start, end


class BlockLoader:
    """Iterate over sampled batches (blocks + input features), ``prefetch`` in flight.

    Args:
        g: The DistGraph.
        seed_batches: The output nodes of each batch (arrays, or ``{ntype: IDs}``).
        fanouts: As in :func:`graphshard.sampling.sample_blocks` (input layer first).
        features: Node feature to fetch for the input nodes, or None.
        prefetch: Batches in flight (1: one batch at a time).
        group: Batches whose calls are sent together, one call per server (default
            ``prefetch // 2``: two groups take turns, one served while the other is
            merged here).
        seed: Random seed of batch 0; batch ``i`` uses ``seed + i``, so every batch equals
            ``sample_blocks(g, seed_batches[i], fanouts, seed=seed + i)``.
        replace: Sample with replacement.
        prob: Name of an edge feature to sample proportionally to.
        exclude_edges: Edge IDs never to sample.
        backend: Kernel backend name.

    Raises:
        ValidationError: ``prefetch < 1`` (bad seeds or fanouts raise when their batch
            starts).
    """

    def __init__(self, g: DistGraph, seed_batches: Iterable[Any], fanouts: Any, *,
                 features: str | None = None, prefetch: int = 4, seed: int = 0,
                 group: int | None = None, replace: bool = False, prob: str | None = None,
                 exclude_edges: Any = None, backend: str = "cpu") -> None:
        for key, v in (("prefetch", prefetch), ("group", 1 if group is None else group)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValidationError(f"{key} must be an int >= 1, got {v!r}", field=key,
                                      value=v)
        self.group = max(1, prefetch // 2) if group is None else group
        self.g, self.seed_batches, self.fanouts = g, seed_batches, fanouts
        self.prefetch, self.seed = prefetch, int(seed)
        self._opts = {"features": features, "replace": replace, "prob": prob,
                      "exclude_edges": exclude_edges, "backend": backend}

    def __iter__(self) -> Iterator[DistBatch]:
        steps = (blocks_steps(self.g, seeds, self.fanouts, seed=self.seed + i, **self._opts)
                 for i, seeds in enumerate(self.seed_batches))
        yield from pipeline(self.g, steps, prefetch=self.prefetch, group=self.group)

    def __repr__(self) -> str:
        return f"BlockLoader(prefetch={self.prefetch}, features={self._opts['features']!r})"


def pipeline(g: DistGraph, steps: Iterable[Generator[list[Call], list[Any], _T]], *,
             prefetch: int, group: int) -> Iterator[_T]:
    """Drive step generators (:func:`~graphshard.distributed.sampling.blocks_steps`,
    :func:`~graphshard.distributed.sampling.subgraph_steps`) with ``prefetch`` in flight, the calls
    of up to ``group`` ready ones sent together as one call per server; their results, in
    order.  A generator is started only when a slot is free (so its errors come then)."""
    return _Pipeline(g.router, prefetch, group).run(steps)


class _Pipeline:
    """The loop of :func:`pipeline` (BlockLoader's): batches in flight, rounds sent."""

    def __init__(self, router: Any, prefetch: int, group: int) -> None:
        self.router, self.prefetch, self.group = router, prefetch, group

    def run(self, steps: Iterable[Generator[list[Call], list[Any], _T]]) -> Iterator[_T]:
        router = self.router
        todo = iter(enumerate(steps))
        flying: list[_Batch] = []
        rounds: list[_Round] = []
        done: dict[int, Any] = {}
        next_out = 0
        exhausted = False
        while True:
            while not exhausted and len(flying) < self.prefetch:
                item = next(todo, None)
                if item is None:
                    exhausted = True
                    break
                b = _Batch(*item)
                self._advance(b, None, flying, done)
            ready = [b for b in flying if b.calls is not None]
            for j in range(0, len(ready), self.group):
                rounds.append(self._send(router, ready[j:j + self.group]))
            while next_out in done:
                yield done.pop(next_out)
                next_out += 1
            if not rounds:
                if exhausted and not flying:
                    return
                continue
            complete = router.wait([r.pending for r in rounds], timeout=router.timeout)
            finished = [rounds[k] for k in complete or [0]]  # none: gather raises (time-out)
            rounds[:] = [r for r in rounds if all(r is not f for f in finished)]
            for rnd in finished:
                self._receive(router, rnd, flying, done, rounds)

    @staticmethod
    def _send(router: Any, ready: list[_Batch]) -> _Round:
        calls: list[Call] = []
        members = []
        for b in ready:
            mine = b.calls or []
            members.append((b, len(calls), len(calls) + len(mine)))
            calls += mine
            b.calls = None
        merged, where = merge_calls(calls)
        return _Round(router.submit(merged), where, members)

    def _receive(self, router: Any, rnd: _Round, flying: list[_Batch],
                 done: dict[int, Any], rounds: list[_Round]) -> None:
        """Advance the batches of a finished round; send their next calls in groups of
        ``group`` batches as soon as a group is ready (the servers start on it while the
        rest are merged here)."""
        results = split_results(router.gather(rnd.pending), rnd.where)
        ready: list[_Batch] = []
        for b, lo, hi in rnd.members:
            self._advance(b, results[lo:hi], flying, done)
            if b.calls is not None:
                ready.append(b)
            if len(ready) >= self.group:
                rounds.append(self._send(router, ready))
                ready = []

    @staticmethod
    def _advance(b: _Batch, results: list[Any] | None, flying: list[_Batch],
                 done: dict[int, Any]) -> None:
        """Hand ``results`` to the batch's generator; keep its next calls or its result."""
        try:
            b.calls = next(b.steps) if results is None else b.steps.send(results)
        except StopIteration as stop:
            done[b.index] = stop.value
            if b in flying:
                flying.remove(b)
            return
        if b not in flying:
            flying.append(b)
