"""Numba kernel that compacts node IDs to local IDs (the reindex of DGL's to_block / PGL).

Example:
    >>> import numpy as np
    >>> nodes, local = relabel(np.array([7, 3]), np.array([3, 9, 7, 9, 5]))
    >>> nodes.tolist(), local.tolist()
    ([7, 3, 9, 5], [1, 2, 0, 2, 3])
"""

from __future__ import annotations

import numpy as np

from ..._util.jit import kernel
from ..._util.keyed import GOLDEN as _GOLDEN

__all__ = ["relabel"]


@kernel
def relabel(dst_nodes, src_ids):
    """Unique nodes (``dst_nodes`` first, then new sources in order of first appearance) and
    the local ID of every entry of ``src_ids``: one pass over an open-addressing table of
    int32 local IDs (4 bytes a slot, so the table stays in cache; a probe compares the node
    stored at that local ID).  Serial: a parallel version over hash partitions was slower
    (every thread rescans every item; benchmarks/TUNING.md)."""
    nd = dst_nodes.shape[0]
    n_items = nd + src_ids.shape[0]
    bits = 4
    while (1 << bits) < n_items + n_items // 2 + 2:  # load factor <= 2/3
        bits += 1
    mask = (1 << bits) - 1
    shift = np.uint64(64 - bits)
    slots = np.full(1 << bits, -1, dtype=np.int32)
    nodes = np.empty(n_items, dtype=np.int64)
    nu = 0
    local = np.empty(src_ids.shape[0], dtype=np.int64)
    for i in range(n_items):
        v = dst_nodes[i] if i < nd else src_ids[i - nd]
        h = np.int64((np.uint64(v) * _GOLDEN) >> shift)
        while True:
            s = slots[h]
            if s < 0:  # a new node
                slots[h] = nu
                nodes[nu] = v
                s = nu
                nu += 1
                break
            if nodes[s] == v:
                break
            h = (h + 1) & mask
        if i >= nd:
            local[i - nd] = s
    return nodes[:nu].copy(), local
