"""Grouping edges by row (the counting sort behind a graph's CSR), as one numba pass.

Example:
    >>> import numpy as np
    >>> indptr = np.array([0, 1, 3]); indices = np.empty(3, np.int32); eids = np.empty(3, np.int32)
    >>> group_by_row(np.array([1, 0, 1]), np.array([5, 6, 7]), indptr, indices, eids)
    >>> indices.tolist(), eids.tolist()
    ([6, 5, 7], [1, 0, 2])
"""

from __future__ import annotations

from .jit import kernel

__all__ = ["group_by_row"]


@kernel
def group_by_row(rows, cols, indptr, indices, eids):
    """Fill ``indices[p] = cols[e]`` and ``eids[p] = e`` with the edges ``e`` of row ``r``
    at ``indptr[r] .. indptr[r + 1]`` in edge order (a stable counting sort: the result of
    ``argsort(rows, kind="stable")``, without its int64 order array and gather copy).
    ``indptr`` must hold the row counts' prefix sums; ``indices`` and ``eids`` may be of any
    integer type that holds the values."""
    pos = indptr[:-1].copy()
    for e in range(rows.shape[0]):
        r = rows[e]
        p = pos[r]
        pos[r] = p + 1
        indices[p] = cols[e]
        eids[p] = e
