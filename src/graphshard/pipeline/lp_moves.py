"""Driver-side steps of label propagation on one level: sweeps, commits, rebalancing.

Shard tasks propose moves from a snapshot of labels (:func:`lp_sweep`); the driver then
commits them with :func:`commit_moves`, which reverts the lowest-gain moves into any label
pushed over its weight limit.  Everything here works on per-node arrays; edges stay in
the shard tasks.
"""

from __future__ import annotations

import logging

import numpy as np

from ..partition.balance import commit_moves, rebalance_loop
from ..typing import IdArray
from .lp_exec import Executor
from .lp_shards import ShardedGraph, cut_task, rebalance_task, sweep_task

__all__ = ["level_cut", "rebalance", "sweeps"]

logger = logging.getLogger(__name__)

#: sub-rounds per round on a level with several shards: rows active in one sub-round see
#: the others' labels of the previous one (fewer simultaneous, conflicting moves).  Each
#: sub-round is one task per shard and one commit; 2 instead of 4 cost 3% of the cut on
#: R-MAT 1M (k=8) and saved 10% of the CPU time and half the sweep tasks
SUBROUNDS = 2


def sweeps(level: ShardedGraph, ex: Executor, labels: IdArray, label_w: IdArray,
           max_w: IdArray, *, seed: int, step0: int, rounds: int, strict: bool,
           min_moved: float = 0.001, norm: float = 0.0) -> tuple[IdArray, IdArray]:
    """``rounds`` label-propagation rounds over all shards (stops early when fewer than
    ``min_moved`` of the nodes move in a round).  Returns new ``(labels, label_w)``."""
    num_sub = SUBROUNDS if level.num_shards > 1 else 1
    shards = [level.shard(b) for b in range(level.num_shards)]
    for r in range(rounds):
        moved = 0
        for sub in range(num_sub):
            res = ex.map(sweep_task, shards, shared={
                "labels": labels, "node_w": level.node_weights, "label_w": label_w,
                "max_w": max_w, "seed": seed, "step": step0 + r, "sub": sub,
                "num_sub": num_sub, "strict": strict, "norm": norm})
            nodes, targets, gains = (np.concatenate([x[i] for x in res]) for i in range(3))
            del res
            labels, label_w = commit_moves(labels, nodes, targets, gains,
                                           level.node_weights, label_w, max_w)
            moved += len(nodes)
        if moved < min_moved * level.num_nodes:
            break
    return labels, label_w


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
