"""Numba kernel of the thinning of a dense coarse level (:mod:`graphshard.partition.lp.thin`):
which entries of one shard are kept, with their weights.
"""

from __future__ import annotations

import numpy as np

from ...._util.jit import kernel
from ...._util.keyed import keyed_hash

__all__ = ["thin_entries"]

_TWO64 = 18446744073709551616.0


@kernel
def thin_entries(indptr, indices, weights, lo, tau, seed):  # pragma: no cover - compiled
    """Entries of one shard kept by :func:`thin_level` (weights of the light ones raised to
    ``tau``), as a new ``(indptr, indices, weights)``."""
    num_rows = indptr.shape[0] - 1
    out_ptr = np.zeros(num_rows + 1, dtype=np.int64)
    out_idx = np.empty(indices.shape[0], dtype=indices.dtype)
    out_w = np.empty(weights.shape[0], dtype=weights.dtype)
    m = 0
    for r in range(num_rows):
        u = lo + r
        for j in range(indptr[r], indptr[r + 1]):
            v = indices[j]
            w = weights[j]
            if w < tau:
                share = np.uint64(min(w / tau * _TWO64, _TWO64 - 4096.0))
                if keyed_hash(seed, min(u, v), max(u, v)) >= share:
                    continue
                w = tau
            out_idx[m] = v
            out_w[m] = w
            m += 1
        out_ptr[r + 1] = m
    return out_ptr, out_idx[:m].copy(), out_w[:m].copy()
