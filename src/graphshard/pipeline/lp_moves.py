"""Driver-side steps of the ``lp`` pipeline on one level: rebalancing and the cut.

Shard tasks propose each part's best moves out (:func:`~graphshard.pipeline.lp_shards.
rebalance_task`); the driver commits the best-gain ones that remove the excess
(:func:`~graphshard.partition.balance.rebalance_loop`).  Everything here works on
per-node arrays; edges stay in the shard tasks.  Label-propagation rounds are in
:mod:`graphshard.pipeline.lp_refine`.
"""

from __future__ import annotations

import logging

import numpy as np

from ..partition.balance import rebalance_loop
from ..typing import IdArray
from .lp_exec import Executor
from .lp_shards import ShardedGraph, cut_task, rebalance_task

__all__ = ["level_cut", "rebalance"]

logger = logging.getLogger(__name__)


def rebalance(level: ShardedGraph, ex: Executor, parts: IdArray, num_parts: int,
              max_w: IdArray, *, seed: int, max_iter: int = 20, warn: bool = True
              ) -> IdArray:
    """Move nodes out of parts heavier than ``max_w`` in any column, best gain first,
    into parts with room.  Returns the new parts (unchanged when already balanced)."""
    shards = [level.shard(b) for b in range(level.num_shards)]
    node_w = level.node_weights
    def candidates(labels: IdArray, part_w: IdArray, it: int) -> tuple[IdArray, ...]:
        res = ex.map(rebalance_task, shards, shared={
            "labels": labels, "node_w": node_w, "part_w": part_w, "max_w": max_w,
            "seed": seed + it})
        return tuple(np.concatenate([x[i] for x in res]) for i in range(4))

    return rebalance_loop(parts, node_w, num_parts, max_w, candidates, max_iter=max_iter,
                          warn=warn)


def level_cut(level: ShardedGraph, ex: Executor, parts: IdArray) -> int:
    """Weighted cut of ``parts`` on ``level`` (each undirected edge counted once)."""
    shards = [level.shard(b) for b in range(level.num_shards)]
    return sum(ex.map(cut_task, shards, shared={"labels": parts})) // 2
