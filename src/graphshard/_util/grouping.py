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

__all__ = ["count_mapped_rows", "group_by_mapped_row", "group_by_row"]


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


@kernel
def count_mapped_rows(rows, row_map, counts):
    """``counts[row_map[rows[e]]] += 1`` for every ``e``; returns the first ``e`` whose
    mapped row is outside ``counts`` (then nothing past it is counted), or -1.

    The rows of :func:`group_by_mapped_row`, counted without a mapped copy of ``rows``."""
    n = counts.shape[0]
    for e in range(rows.shape[0]):
        r = row_map[rows[e]]
        if r < 0 or r >= n:
            return e
        counts[r] += 1
    return -1


@kernel
def group_by_mapped_row(rows, cols, row_map, col_map, indptr, indices, eids):
    """:func:`group_by_row` of rows ``row_map[rows]`` and columns ``col_map[cols]``, with
    no mapped copies of either (a part's edges in local IDs, read from its memory-mapped
    file, and maps from local IDs).  The rows must have passed :func:`count_mapped_rows`,
    whose counts' prefix sums are ``indptr``.

    Example:
        >>> import numpy as np
        >>> row_map, col_map = np.array([0, 1, -1]), np.array([10, 11, 20])
        >>> rows, cols = np.array([1, 0, 1]), np.array([2, 1, 0])
        >>> counts = np.zeros(2, np.int64)
        >>> count_mapped_rows(rows, row_map, counts), counts.tolist()
        (-1, [1, 2])
        >>> indptr = np.array([0, 1, 3]); out = np.empty(3, np.int64), np.empty(3, np.int64)
        >>> group_by_mapped_row(rows, cols, row_map, col_map, indptr, *out)
        >>> out[0].tolist(), out[1].tolist()
        ([11, 20, 10], [1, 0, 2])
    """
    pos = indptr[:-1].copy()
    for e in range(rows.shape[0]):
        r = row_map[rows[e]]
        p = pos[r]
        pos[r] = p + 1
        indices[p] = col_map[cols[e]]
        eids[p] = e
