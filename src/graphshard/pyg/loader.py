"""Run a PyG loader's batches on threads, several in flight, yielding them in order.

PyG's ``NodeLoader`` and ``LinkLoader`` are torch ``DataLoader``s: with ``num_workers=0``
each batch is sampled and its features fetched before the next one starts, and worker
processes would each need their own connection to the graph servers.  graphshard's kernels
release the GIL and a DistGraph's requests wait on the network, so threads overlap batches
well: :class:`PrefetchLoader` hands the loader's own ``collate_fn`` (PyG's sampling and
feature filtering, unchanged) to a thread pool, ``workers`` batches at a time, and yields
the results in the loader's batch order.

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
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from ..errors import ValidationError

__all__ = ["PrefetchLoader"]


class PrefetchLoader:
    """Iterate over a PyG ``NodeLoader`` / ``LinkLoader`` with ``workers`` batches in flight.

    Args:
        loader: A PyG loader built with ``num_workers=0`` (its sampler, transforms and
            feature filtering run unchanged, on this object's threads).
        workers: Batches sampled concurrently (threads).

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
        batches = iter(self.loader.batch_sampler)
        pending: deque[Future[Any]] = deque()
        with ThreadPoolExecutor(self.workers, thread_name_prefix="graphshard-pyg") as pool:
            try:
                for indices in batches:
                    pending.append(pool.submit(self._batch, list(indices)))
                    if len(pending) >= self.workers:
                        yield pending.popleft().result()
                while pending:
                    yield pending.popleft().result()
            finally:
                for fut in pending:  # a consumer that stops early: drop what is queued
                    fut.cancel()

    def __repr__(self) -> str:
        return f"PrefetchLoader({type(self.loader).__name__}, workers={self.workers})"
