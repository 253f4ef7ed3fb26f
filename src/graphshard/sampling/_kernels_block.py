"""Numba kernel that compacts node IDs to local IDs (the reindex of DGL's to_block / PGL).

Example:
    >>> import numpy as np
    >>> nodes, local = relabel(np.array([7, 3]), np.array([3, 9, 7, 9, 5]))
    >>> nodes.tolist(), local.tolist()
    ([7, 3, 9, 5], [1, 2, 0, 2, 3])
"""

from __future__ import annotations

import numpy as np

from .._jit import kernel

__all__ = ["relabel"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@kernel
def relabel(dst_nodes, src_ids):
    """Unique nodes (``dst_nodes`` first, then new sources in order of first appearance) and
    the local ID of every entry of ``src_ids``: one pass over an open-addressing table whose
    slots hold (key, local ID), so that a probe reads one cache line.  Serial: a parallel
    version over hash partitions measured slower (every thread rescans every item)."""
    n_items = dst_nodes.shape[0] + src_ids.shape[0]
    bits = 4
    while (1 << bits) < n_items + n_items // 2 + 2:  # load factor <= 2/3
        bits += 1
    cap = 1 << bits
    mask = cap - 1
    shift = np.uint64(64 - bits)
    slots = np.full((cap, 2), -1, dtype=np.int64)
    nodes = np.empty(n_items, dtype=np.int64)
    nu = 0
    local = np.empty(src_ids.shape[0], dtype=np.int64)
    for i in range(n_items):
        v = dst_nodes[i] if i < dst_nodes.shape[0] else src_ids[i - dst_nodes.shape[0]]
        h = np.int64((np.uint64(v) * _GOLDEN) >> shift)
        while slots[h, 0] != -1 and slots[h, 0] != v:
            h = (h + 1) & mask
        if slots[h, 0] == -1:
            slots[h, 0] = v
            slots[h, 1] = nu
            nodes[nu] = v
            nu += 1
        if i >= dst_nodes.shape[0]:
            local[i - dst_nodes.shape[0]] = slots[h, 1]
    return nodes[:nu].copy(), local
