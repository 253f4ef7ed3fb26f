"""The clustering of one coarsening step: size-constrained label propagation
(:func:`coarsen`), then grouping the nodes that it left alone (:func:`two_hop`,
:func:`group_isolated`); and how big the clusters of a level may grow
(:func:`cluster_cap`, aimed by :func:`entry_elasticity` and :func:`node_target`)."""

from __future__ import annotations

import math

import numpy as np

from ...errors import ValidationError
from ...runtime.executor import Executor
from ...typing import IdArray
from ..balance import counting_order
from .kernels.clustering import alone_nodes, merge_by_favourite
from .params import LpParams
from .refinement import label_rounds
from .shards import ShardedGraph, favourite_task

__all__ = ["cluster_cap", "coarsen", "entry_elasticity", "group_isolated", "label_dtype",
           "node_target", "two_hop"]


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


def coarsen(level: ShardedGraph, ex: Executor, params: LpParams, *, max_cluster: IdArray,
             rounds: int, depth: int) -> tuple[IdArray, int]:
    """Cluster ``level`` (``max_cluster``: a cluster's weight limit per constraint);
    returns (fine node -> coarse ID, number of clusters)."""
    labels, _, _ = label_rounds(level, ex, np.arange(level.num_nodes,
                                                     dtype=label_dtype(level.num_nodes)),
                                level.node_weights.copy(), max_cluster,
                                seed=params.seed, step0=depth * 1000, rounds=rounds,
                                strict=False, min_moved=params.cluster_min_moved,
                                norm=params.cluster_norm, max_row=params.cluster_max_row)
    labels = two_hop(labels, level, ex, max_cluster)
    labels = group_isolated(labels, level, int(max_cluster[0]))
    used = np.zeros(len(labels) + 1, dtype=labels.dtype)  # labels are node IDs
    used[1:][labels] = 1
    np.cumsum(used, out=used)  # IDs of the used labels, in label order: O(n), no sort
    return used[labels], int(used[-1])


def label_dtype(num_labels: int) -> type:
    """The smallest signed integer type that holds ``num_labels`` labels: the driver's
    per-node arrays shrink, and a sweep's random reads of its neighbours' parts (int8 for
    up to 127 parts) hit the caches more often.

    Example:
        >>> [label_dtype(n).__name__ for n in (16, 1000, 10**6)]
        ['int8', 'int16', 'int32']
    """
    for t in (np.int8, np.int16, np.int32):
        if num_labels <= np.iinfo(t).max:
            return t
    return np.int64


def cluster_cap(total_w: int, num_nodes: int, target: float, max_cluster: int,
                 shrink: float) -> int:
    """Cluster weight limit of one level: at most ``max_cluster`` (balance), and growing the
    average node weight by at most ``shrink`` per level (gradual coarsening keeps the
    structure that refinement on the way back up needs), but enough to reach ``target``.

    Example:
        >>> cluster_cap(10**6, 10**6, 8000, 7500, 4), cluster_cap(10**6, 10**5, 8000, 7500, 4)
        (4, 40)
    """
    avg = total_w / max(1, num_nodes)
    want = max(2 * avg, min(shrink * avg, 2 * total_w / max(1.0, target)))
    return int(max(2, min(max_cluster, math.ceil(want))))


def entry_elasticity(levels: list[ShardedGraph], contracted: int | None = None,
                      floor: float = LpParams.min_elasticity) -> float:
    """How the entries shrank with the nodes on the last contraction: ``log(entry ratio) /
    log(node ratio)``, clipped to ``[floor, 1]`` (1 before the first).  Meshes
    keep about 1; power-law graphs, whose hubs keep most entries, near 0.
    ``contracted``: the last level's entries before thinning (default: as stored).

    Example:
        >>> from pathlib import Path
        >>> lv = [ShardedGraph(Path("."), np.array([0, n]), np.ones(n, np.int64),
        ...                    np.full(n, d, np.int64)) for n, d in ((1000, 10), (250, 36))]
        >>> entry_elasticity(lv[:1]), entry_elasticity(lv)
        (1.0, 0.25)
    """
    if len(levels) < 2:
        return 1.0
    g, f = levels[-1], levels[-2]
    shrink_n = g.num_nodes / max(1, f.num_nodes)
    shrink_e = max(g.num_entries if contracted is None else contracted, 1) / \
        max(1, f.num_entries)
    if not 0 < shrink_n < 1:
        return 1.0
    return min(1.0, max(floor, math.log(shrink_e) / math.log(shrink_n)))


def node_target(g: ShardedGraph, coarse_entries: int, elasticity: float) -> float:
    """Nodes at which level ``g``'s coarsening should fit ``coarse_entries``, if the entries
    go on shrinking with the nodes as they did (``elasticity``, see :func:`entry_elasticity`).

    Example:
        >>> from pathlib import Path
        >>> g = ShardedGraph(Path("."), np.array([0, 250]), np.ones(250, np.int64),
        ...                  np.full(250, 36, np.int64))
        >>> round(node_target(g, 5000, 1.0)), round(node_target(g, 5000, 0.25))
        (139, 24)
    """
    ratio = min(1.0, coarse_entries / max(1, g.num_entries))
    return g.num_nodes * ratio ** (1.0 / elasticity)
