"""Numba kernels for the plain lookups of the store protocol: degrees of rows of a CSR and
feature rows by ID.  They exist as kernels so that a backend can run them where its graph
lives (the cuda backend: on the device arrays it already holds).

Example:
    >>> import numpy as np
    >>> deg = np.empty(2, np.int64)
    >>> row_degrees(np.array([0, 2, 5]), np.array([1, 0]), deg)
    >>> deg.tolist()
    [3, 2]
    >>> out = np.empty((2, 2)); gather_rows(np.arange(6.0).reshape(3, 2), np.array([2, 0]), out)
    >>> out.tolist()
    [[4.0, 5.0], [0.0, 1.0]]
"""

from __future__ import annotations

from numba import prange

from ..._util.jit import kernel

__all__ = ["gather_rows", "row_degrees"]


@kernel
def row_degrees(indptr, rows, out):
    """``out[i] = indptr[rows[i] + 1] - indptr[rows[i]]`` (int64)."""
    for i in range(rows.shape[0]):
        out[i] = indptr[rows[i] + 1] - indptr[rows[i]]


@kernel(parallel=True)
def gather_rows(table, ids, out):
    """``out[i] = table[ids[i]]`` for a 2-D ``table`` (rows by ID; any dtype)."""
    for i in prange(ids.shape[0]):
        out[i] = table[ids[i]]
