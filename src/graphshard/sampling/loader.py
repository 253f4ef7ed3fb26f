"""A NeighborLoader-like iterator: seed batches -> sampled blocks, prefetched on a thread.

The kernels release the GIL, so the prefetch thread samples the next batches while the
caller trains on the current one.  Batch ``b`` of epoch ``e`` samples with a seed derived
from ``(seed, e, b)``, so a loader replays exactly for the same seed.

Example:
    >>> import graphshard as gs
    >>> g = gs.graph(([1, 2, 3, 0], [0, 0, 1, 2]))
    >>> loader = NeighborLoader(g, [0, 1, 2], [2, 2], batch_size=2, seed=0)
    >>> [b.output_nodes["_N"].tolist() for b in loader]
    [[0, 1], [2]]
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..errors import ValidationError
from ..store import as_store
from .blocks import SampledBlocks, sample_blocks
from .convert import to_torch
from .kernels.rng import item_state
from .validate import layer_fanouts, resolve_seed, seeds_by_type

__all__ = ["MiniBatch", "NeighborLoader"]

MiniBatch = SampledBlocks  # a batch is the blocks sampled around its seeds
_DONE = object()


class NeighborLoader:
    """Iterate over batches of seed nodes, yielding :class:`SampledBlocks` per batch.

    Args:
        g: A Graph or GraphStore.
        seeds: Seed node IDs (array) or ``{ntype: IDs}`` with one node type.
        fanouts: Per-layer fanouts as in :func:`~graphshard.sampling.sample_blocks`.
        batch_size: Seeds per batch.
        shuffle: Shuffle the seeds every epoch (keyed by seed and epoch).
        drop_last: Drop a last batch smaller than ``batch_size``.
        replace: Sample with replacement.
        prob: Edge feature to sample proportionally to.
        seed: Random seed of shuffling and sampling.
        prefetch: Batches sampled ahead on a background thread (0: sample in the caller).
        as_torch: Yield torch tensors instead of NumPy arrays (needs torch).
        backend: Kernel backend name.
    """

    def __init__(self, g: Any, seeds: Any, fanouts: Any, *, batch_size: int = 1024,
                 shuffle: bool = False, drop_last: bool = False, replace: bool = False,
                 prob: str | None = None, seed: int | None = None, prefetch: int = 2,
                 as_torch: bool = False, backend: str = "cpu") -> None:
        self._store = as_store(g)
        by_type = seeds_by_type(self._store, seeds)
        if len(by_type) != 1:
            raise ValidationError(f"NeighborLoader takes seeds of one node type, got "
                                  f"{sorted(by_type)}", field="seeds")
        layer_fanouts(self._store, fanouts)  # validate now, not on the worker thread
        if batch_size < 1 or prefetch < 0:
            raise ValidationError(f"batch_size must be >= 1 and prefetch >= 0, got "
                                  f"{batch_size} and {prefetch}", field="batch_size")
        self._ntype, self._seeds = next(iter(by_type.items()))
        self._fanouts = fanouts
        self._opts: dict[str, Any] = {"replace": replace, "prob": prob, "backend": backend}
        self.batch_size = int(batch_size)
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.prefetch = int(prefetch)
        self.as_torch = as_torch
        self.seed = resolve_seed(seed)
        self.epoch = 0

    def __len__(self) -> int:
        n = len(self._seeds)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def _batches(self, epoch: int) -> list[np.ndarray]:
        ids = self._seeds
        if self.shuffle:
            ids = ids[np.random.default_rng([self.seed, epoch]).permutation(len(ids))]
        return [ids[i * self.batch_size:(i + 1) * self.batch_size] for i in range(len(self))]

    def _sample(self, epoch: int, b: int, ids: np.ndarray) -> SampledBlocks:
        s = int(item_state(self.seed, epoch, b)) & (2**63 - 1)
        out = sample_blocks(self._store, {self._ntype: ids}, self._fanouts, seed=s, **self._opts)
        return to_torch(out) if self.as_torch else out

    def __iter__(self) -> Iterator[SampledBlocks]:
        epoch = self.epoch
        self.epoch += 1
        batches = self._batches(epoch)
        if self.prefetch == 0:
            for b, ids in enumerate(batches):
                yield self._sample(epoch, b, ids)
            return
        q: queue.Queue = queue.Queue(maxsize=self.prefetch)
        stop = threading.Event()

        def work() -> None:
            try:
                for b, ids in enumerate(batches):
                    if stop.is_set():
                        return
                    q.put(self._sample(epoch, b, ids))
                q.put(_DONE)
            except BaseException as exc:  # handed to the consumer, raised there
                q.put(exc)

        thread = threading.Thread(target=work, name="graphshard-sampler", daemon=True)
        thread.start()
        try:
            while True:
                item = q.get()
                if item is _DONE:
                    return
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            stop.set()
            while thread.is_alive():  # unblock a producer waiting on a full queue
                try:
                    q.get_nowait()
                except queue.Empty:
                    thread.join(timeout=0.01)

    def __repr__(self) -> str:
        return (f"NeighborLoader(num_seeds={len(self._seeds)}, batch_size={self.batch_size}, "
                f"fanouts={self._fanouts!r})")
