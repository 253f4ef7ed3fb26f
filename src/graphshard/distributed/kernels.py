"""Row copies of the client-side feature assembly, one pass each (numba).

``out[pos] = src[rows]`` in NumPy makes a temporary of the gathered rows and copies it
again; the kernel copies each row once, straight to its place (benchmarks/TUNING.md).
:func:`put_rows` checks shapes and falls back to NumPy
for anything but matching 2-D arrays.

Example:
    >>> out = np.zeros((3, 2), np.float32)
    >>> put_rows(out, np.array([2, 0]), np.arange(6, dtype=np.float32).reshape(3, 2),
    ...          np.array([1, 2]))
    >>> out.tolist()
    [[4.0, 5.0], [0.0, 0.0], [2.0, 3.0]]
"""

from __future__ import annotations

import numpy as np

from .._util.jit import kernel
from ..typing import IdArray

__all__ = ["put_rows"]


@kernel
def _copy_rows(out, out_pos, src, src_rows):  # pragma: no cover - compiled
    """``out[out_pos[i]] = src[src_rows[i]]`` for every i, row by row."""
    d = out.shape[1]
    for i in range(out_pos.shape[0]):
        o = out_pos[i]
        s = src_rows[i]
        for j in range(d):
            out[o, j] = src[s, j]


@kernel
def _scatter_rows(out, out_pos, src):  # pragma: no cover - compiled
    """``out[out_pos[i]] = src[i]`` for every i, row by row."""
    d = out.shape[1]
    for i in range(out_pos.shape[0]):
        o = out_pos[i]
        for j in range(d):
            out[o, j] = src[i, j]


def put_rows(out: np.ndarray, pos: IdArray, src: np.ndarray, rows: IdArray | None = None
             ) -> None:
    """``out[pos] = src if rows is None else src[rows]`` in one pass (positions and rows
    must be in range: the caller built them)."""
    src = np.asarray(src)
    pos = np.ascontiguousarray(pos, dtype=np.int64)
    fast = (out.ndim == 2 and src.ndim == 2 and out.dtype == src.dtype
            and out.shape[1] == src.shape[1] and out.flags.c_contiguous)
    if rows is None:
        if fast and len(pos) == len(src):
            _scatter_rows(out, pos, src)
        else:
            out[pos] = src
        return
    if fast:
        _copy_rows(out, pos, src, np.ascontiguousarray(rows, dtype=np.int64))
    else:
        out[pos] = src[rows]
