"""Numba kernels of the clustering steps on per-node arrays
(:mod:`graphshard.partition.lp.clustering`): finding the nodes that label propagation left
alone, and grouping them by their favourite cluster.  One pass over the nodes or the
alone nodes each, after a counting sort instead of a comparison sort: the NumPy steps they
replace (``bincount``, ``lexsort``, cumulative sums per run) kept the workers waiting on
the driver (benchmarks/TUNING.md).
"""

from __future__ import annotations

import numpy as np

from ...._util.jit import kernel

__all__ = ["alone_nodes", "merge_by_favourite"]


@kernel
def alone_nodes(labels, degrees):  # pragma: no cover - compiled
    """Ascending int64 IDs of the nodes with edges (``degrees > 0``) that are alone in
    their cluster (no other node has their label).  ``labels`` are node IDs in
    ``[0, len(labels))`` (checked by the caller)."""
    n = labels.shape[0]
    members = np.zeros(n, np.uint8)  # 0, 1 or 2 for "more than one"
    for u in range(n):
        if members[labels[u]] < 2:
            members[labels[u]] += 1
    count = 0
    for u in range(n):
        if members[labels[u]] == 1 and degrees[u] > 0:
            count += 1
    out = np.empty(count, np.int64)
    count = 0
    for u in range(n):
        if members[labels[u]] == 1 and degrees[u] > 0:
            out[count] = u
            count += 1
    return out


@kernel
def merge_by_favourite(labels, alone, fav, order, node_w, max_w
                       ):  # pragma: no cover - compiled
    """New labels: the ``alone`` nodes (ascending IDs) grouped by their favourite cluster
    ``fav`` (``order``: their positions sorted stably by ``fav``, as
    :func:`~graphshard.partition.balance.counting_order` gives), in ID order, cut into
    runs whose weight before each member stays under the same multiple of ``max_w`` in
    every column; each run takes the label of its first member.  The others keep theirs."""
    cols = node_w.shape[1]
    out = labels.copy()
    before = np.zeros(cols, np.int64)
    last_fav, last_run, leader = -1, -1, 0
    for j in range(order.shape[0]):
        i = order[j]
        u = alone[i]
        if fav[i] != last_fav:
            last_fav, last_run = fav[i], -1
            before[:] = 0
        run = 0
        for c in range(cols):
            run = max(run, before[c] // max(1, max_w[c]))
        if run != last_run:
            last_run, leader = run, labels[u]
        out[u] = leader
        for c in range(cols):
            before[c] += node_w[u, c]
    return out
