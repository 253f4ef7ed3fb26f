"""Clustering steps of the label-propagation coarsening that work on per-node arrays:
grouping the nodes that label propagation left alone."""

from __future__ import annotations

import numpy as np

from ...errors import ValidationError
from ...partition.balance import counting_order
from ...typing import IdArray
from .kernels.clustering import alone_nodes, merge_by_favourite
from .shards import ShardedGraph, favourite_task

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
    labels = np.asarray(labels)
    if len(labels) != level.num_nodes:
        raise ValidationError(f"two_hop: {len(labels)} labels for {level.num_nodes} nodes",
                              field="labels")
    if len(labels) and (int(labels.min()) < 0 or int(labels.max()) >= level.num_nodes):
        raise ValidationError(f"two_hop: labels must be node IDs in [0, {level.num_nodes})",
                              field="labels")
    alone = alone_nodes(labels, level.degrees)
    if alone.size < 2:
        return labels
    wanted = np.zeros(level.num_nodes, dtype=np.bool_)
    wanted[alone] = True
    fav = np.concatenate(ex.map(favourite_task, [level.shard(b) for b in
                                                 range(level.num_shards)],
                                shared={"labels": labels, "wanted": wanted}))
    del wanted
    keep = fav >= 0
    alone, fav = alone[keep], fav[keep]
    count = np.zeros(level.num_nodes + 1, np.int32 if len(alone) < 2**31 else np.int64)
    return merge_by_favourite(labels, alone, fav, counting_order(fav, count),
                              level.node_weights, np.asarray(max_cluster, dtype=np.int64))
