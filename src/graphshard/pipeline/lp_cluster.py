"""Clustering steps of the label-propagation coarsening that work on per-node arrays:
grouping the nodes that label propagation left alone."""

from __future__ import annotations

import numpy as np

from ..typing import IdArray
from .lp_shards import ShardedGraph, favourite_task

__all__ = ["group_isolated", "two_hop"]


def group_isolated(labels: IdArray, level: ShardedGraph, max_w: int) -> IdArray:
    """Put nodes without edges into clusters of about ``max_w`` weight (free filler)."""
    iso = np.flatnonzero(level.degrees == 0)
    if iso.size:
        w = level.node_weights[iso, 0]
        group = (np.cumsum(w) - w) // max(1, max_w)
        labels = labels.copy()
        labels[iso] = iso[np.searchsorted(group, group)]
    return labels


def two_hop(labels: IdArray, level: ShardedGraph, ex, max_cluster: IdArray) -> IdArray:
    """Group the nodes left alone by clustering (their favourite cluster was full) by that
    favourite, in runs within ``max_cluster``: leaves of the same hub merge, and so do
    their parallel edges to it (two-hop clustering, as KaMinPar does on social graphs)."""
    size = np.bincount(labels, minlength=level.num_nodes)
    alone = np.flatnonzero((size[labels] == 1) & (level.degrees > 0))
    if alone.size < 2:
        return labels
    wanted = np.zeros(level.num_nodes, dtype=np.bool_)
    wanted[alone] = True
    fav = np.concatenate(ex.map(favourite_task, [level.shard(b) for b in
                                                 range(level.num_shards)],
                                shared={"labels": labels, "wanted": wanted}))[alone]
    del wanted
    keep = fav >= 0
    alone, fav = alone[keep], fav[keep]
    order = np.lexsort((alone, fav))
    alone, fav = alone[order], fav[order]
    w = level.node_weights[alone]
    first = np.r_[True, fav[1:] != fav[:-1]]
    run = np.cumsum(first) - 1
    load = np.zeros(len(alone))
    for c in range(w.shape[1]):
        cs = np.cumsum(w[:, c])
        base = (cs - w[:, c])[first][run]
        load = np.maximum(load, (cs - w[:, c] - base) / max(1, int(max_cluster[c])))
    key = run * np.int64(1 << 32) + np.floor(load).astype(np.int64)
    head = np.r_[True, key[1:] != key[:-1]]
    leader = alone[np.flatnonzero(head)][np.cumsum(head) - 1]
    out = labels.copy()
    out[alone] = labels[leader]  # a singleton's label is its own
    return out
