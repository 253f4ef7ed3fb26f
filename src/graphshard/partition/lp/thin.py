"""Thin a dense coarse level of the ``lp`` hierarchy to its expected weights.

A power-law graph keeps most of its entries when its nodes merge: its coarse levels get
dense (hundreds of neighbours a node at 1% of the nodes) and each costs about as much as
the finest.  Label propagation on such a level only needs every node's connection to each
label in expectation, so :func:`thin_level` keeps every entry of weight at least ``tau``
and each lighter one with probability ``weight / tau``, at weight ``tau`` (unbiased sums;
both directions of an edge share the keyed decision, so the level stays symmetric).  The
shards are rewritten in place, with their node ranges unchanged.
"""

from __future__ import annotations

import logging

import numpy as np

from ...runtime.executor import Executor
from ...storage import fsys
from ...storage.scratch import save_npy
from ...typing import IdArray
from .kernels.thin import thin_entries
from .shards import (
    SHARD_FILES,
    ShardedGraph,
    histogram_task,
    load_shard,
    local_prefix,
    publish,
)

__all__ = ["thin_level", "thin_task", "thin_weight"]

logger = logging.getLogger(__name__)

def thin_task(prefix: str, lo: int, *, tau: int, seed: int, out: str | None = None
              ) -> IdArray:
    """Thin one shard (:func:`thin_entries`) in place, writing over its files' pages, or
    into folder ``out`` (a remote work folder's files are never rewritten: other
    processes may hold copies); returns its new degrees."""
    indptr, indices, weights = (np.asarray(a) for a in load_shard(prefix))
    tau = min(tau, int(np.iinfo(weights.dtype).max))  # a weight the shard's type holds
    ptr, idx, w = thin_entries(indptr, indices, weights, np.int64(lo),
                               weights.dtype.type(tau), np.uint64(seed))
    del indptr, indices, weights
    target = prefix if out is None else f"{out}/{prefix.rsplit('/', 1)[-1]}"
    local = local_prefix(target)
    for name, arr in zip(SHARD_FILES, (ptr, idx, w), strict=True):
        save_npy(f"{local}_{name}.npy", arr)
    publish(target, SHARD_FILES)
    return np.diff(ptr)


def thin_weight(hist: IdArray, target: int) -> int:
    """Smallest ``tau`` at which about ``target`` entries are expected to stay, from the
    entries per ``floor(log2(weight))`` bucket (a bucket's entries taken at 1.5x its
    lower bound); 1 when all fit.

    Example:
        >>> thin_weight(np.array([1000, 0, 0]), 250), thin_weight(np.array([1000, 10]), 2000)
        (4, 1)
    """
    low = np.ldexp(1.0, np.arange(len(hist)))
    rep = np.where(np.arange(len(hist)) == 0, 1.0, 1.5 * low)

    def kept(tau: float) -> float:
        return float(np.sum(np.where(rep >= tau, hist, hist * rep / tau)))

    if kept(1.0) <= target:
        return 1
    lo, hi = 1, 2  # kept(lo) > target >= kept(hi)
    while kept(hi) > target and hi < 2**62:
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if kept(mid) <= target else (mid, hi)
    return hi


def thin_level(level: ShardedGraph, ex: Executor, max_degree: float, seed: int
               ) -> ShardedGraph:
    """``level`` thinned to about ``max_degree`` entries a node on average (unchanged when
    it has fewer)."""
    target = int(max_degree * level.num_nodes)
    if level.num_entries <= target:
        return level
    shards = [level.shard(b) for b in range(level.num_shards)]
    hist = np.sum(ex.map(histogram_task, shards), axis=0)
    tau = thin_weight(hist, target)
    if tau <= 1:
        return level
    out = f"{level.directory}t" if fsys.is_remote(level.directory) else None
    degrees = np.concatenate(ex.map(thin_task, shards,
                                    shared={"tau": tau, "seed": seed, "out": out}))
    thinned = ShardedGraph(out or level.directory, level.bounds, level.node_weights,
                           degrees.astype(level.degrees.dtype))
    logger.info("lp: thinned %d entries to %d (weights below %d kept by chance)",
                level.num_entries, thinned.num_entries, tau)
    return thinned
