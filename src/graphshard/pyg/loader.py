"""Run a PyG loader's batches several at a time, yielding them in order.

PyG's ``NodeLoader`` and ``LinkLoader`` are torch ``DataLoader``s: with ``num_workers=0``
each batch is sampled and its features fetched before the next one starts, and worker
processes would each need their own connection to the graph servers.  :class:`PrefetchLoader`
keeps ``workers`` batches in flight instead, two ways:

- A ``NodeLoader`` with graphshard's :class:`~graphshard.pyg.NeighborSampler` and
  :class:`~graphshard.pyg.FeatureStore` over one DistGraph runs as
  :class:`~graphshard.distributed.BlockLoader` does, one loop for all batches: each is a generator
  of server calls (:meth:`NeighborSampler.node_steps`: the hops, with the features of the nodes
  found so far fetched in the same calls), and the calls of several batches ready for their next
  round go to each server as one.  PyG's own ``filter_fn`` then builds each batch
  (``Data`` / ``HeteroData``, transforms) on one helper thread while the next rounds are
  sent, its feature reads answered from the rows already fetched
  (:meth:`FeatureStore.serving`).  The batches equal the loader's own.
- Anything else (a local Graph, a ``LinkLoader``, another sampler) hands the loader's own
  ``collate_fn`` (PyG's sampling and feature filtering, unchanged) to a thread pool:
  graphshard's kernels release the GIL and a DistGraph's requests wait on the network.

Example:
    >>> import torch, graphshard as gs
    >>> from torch_geometric.loader import NodeLoader
    >>> from graphshard.pyg import NeighborSampler, remote_backend
    >>> g = gs.datasets.sbm(100, 400, num_blocks=2, num_features=4, seed=0)
    >>> loader = NodeLoader(remote_backend(g, node_attrs={"x": "feat"}),
    ...                     node_sampler=NeighborSampler(g, [5, 5], seed=0),
    ...                     input_nodes=torch.arange(100), batch_size=40)
    >>> [b.batch_size for b in PrefetchLoader(loader, workers=2)]
    [40, 40, 20]
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from ..errors import ValidationError

__all__ = ["PrefetchLoader"]


class PrefetchLoader:
    """Iterate over a PyG ``NodeLoader`` / ``LinkLoader`` with ``workers`` batches in flight.

    Args:
        loader: A PyG loader built with ``num_workers=0`` (its sampler, transforms and
            feature filtering run unchanged, on this object's threads).
        workers: Batches in flight (on a DistGraph with graphshard's sampler and feature
            store: generators of server calls, the calls of up to ``workers // 2`` ready
            batches sent together; else threads).

    Raises:
        ValidationError: ``workers < 1``, or a loader that starts worker processes itself.
    """

    def __init__(self, loader: Any, *, workers: int = 8) -> None:
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValidationError(f"workers must be an int >= 1, got {workers!r}",
                                  field="workers", value=workers)
        if getattr(loader, "num_workers", 0):
            raise ValidationError("PrefetchLoader runs the loader's batches on threads: build "
                                  "the loader with num_workers=0", field="num_workers",
                                  value=loader.num_workers)
        self.loader = loader
        self.workers = workers

    def __len__(self) -> int:
        return len(self.loader)

    def _batch(self, indices: list[int]) -> Any:
        loader = self.loader
        out = loader.collate_fn([loader.dataset[i] for i in indices])
        if not getattr(loader, "filter_per_worker", True):  # PyG filters in the main loop
            out = loader.filter_fn(out)
        return out

    def __iter__(self) -> Iterator[Any]:
        parts = self._pipelined()
        return self._threads() if parts is None else self._steps(*parts)

    def _pipelined(self) -> tuple[Any, Any, list[str]] | None:
        """``(sampler, feature store, stored feature names)`` when the loader can run as
        server-call generators (a NodeLoader, our sampler and feature store, one DistGraph)."""
        from torch_geometric.loader import NodeLoader

        from ..distributed.graph import DistGraph
        from .feature_store import FeatureStore
        from .sampler import NeighborSampler

        loader = self.loader
        sampler = getattr(loader, "node_sampler", None)
        data = getattr(loader, "data", None)
        if not (isinstance(loader, NodeLoader) and isinstance(sampler, NeighborSampler)
                and isinstance(sampler.store, DistGraph) and isinstance(data, tuple)
                and len(data) == 2 and isinstance(data[0], FeatureStore)
                and data[0].store is sampler.store):
            return None
        fs = data[0]
        names = sorted({fs._stored_name("node", str(a.attr_name))
                        for a in fs.get_all_tensor_attrs()})
        return sampler, fs, names

    def _steps(self, sampler: Any, fs: Any, names: list[str]) -> Iterator[Any]:
        from ..distributed.loader import pipeline

        loader = self.loader

        def batches() -> Iterator[Any]:
            for indices in loader.batch_sampler:  # what NodeLoader.collate_fn samples
                index = loader.input_data[[loader.dataset[i] for i in indices]]
                yield sampler.node_steps(index, names)

        def build(out: Any, rows: Any) -> Any:
            with fs.serving(out.node, rows):
                return loader.filter_fn(out)

        # PyG's filter_fn (Data building, torch ops) runs on one thread beside this loop,
        # so the next rounds are sent while it works (benchmarks/TUNING.md, PrefetchLoader)
        with ThreadPoolExecutor(1, thread_name_prefix="graphshard-pyg") as pool:
            yield from _in_order(
                (pool.submit(build, out, rows) for out, rows in pipeline(
                    sampler.store, batches(), prefetch=self.workers,
                    group=max(1, self.workers // 2))),
                lambda pending: pending[0].done() or len(pending) > self.workers)

    def _threads(self) -> Iterator[Any]:
        with ThreadPoolExecutor(self.workers, thread_name_prefix="graphshard-pyg") as pool:
            yield from _in_order(
                (pool.submit(self._batch, list(indices)) for indices in self.loader.batch_sampler),
                lambda pending: len(pending) >= self.workers)

    def __repr__(self) -> str:
        return f"PrefetchLoader({type(self.loader).__name__}, workers={self.workers})"


def _in_order(submitted: Iterator[Future[Any]], ready: Callable[[deque[Future[Any]]], bool]
              ) -> Iterator[Any]:
    """Results of ``submitted`` futures in submission order: the oldest is waited for
    whenever ``ready(pending)`` says so, the rest at the end.  A consumer that stops early
    cancels what is still queued."""
    pending: deque[Future[Any]] = deque()
    try:
        for fut in submitted:
            pending.append(fut)
            while pending and ready(pending):
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        for fut in pending:
            fut.cancel()
