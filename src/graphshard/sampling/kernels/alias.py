"""Per-row alias tables (Walker/Vose) for weighted sampling: one 8-byte record per edge.

:func:`row_alias` builds them, :func:`alias_draw` draws from them (with replacement, as
random walks do), :func:`row_inv_weights` turns them back into ``1 / w`` per edge for the
exponential keys of sampling without replacement (:mod:`.weighted`).

Example:
    >>> import numpy as np
    >>> indptr = np.array([0, 3]); nb = np.array([5, 6, 7]); w = np.array([1.0, 0.0, 3.0])
    >>> rec, nnz = row_alias(indptr, w, np.empty(0, np.int64), np.empty(3, np.int64))
    >>> nnz.tolist(), np.round(1 / row_inv_weights(indptr, rec), 3).tolist()  # sum: 3
    ([2], [0.75, 0.0, 2.25])
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ..._util.jit import kernel
from .rng import draw, randint

__all__ = ["alias_draw", "row_alias", "row_inv_weights"]

_ONE = 1 << 32  # acceptance thresholds are fixed-point fractions of 2**32
_TMASK = (1 << 33) - 1


#: rows per task of the table builders: each task allocates scratch for its longest row
#: only (not one array per edge: at 20M edges those were 160 MB each, benchmarks/TUNING.md)
_CHUNK = 1024


@kernel(inline=True)
def _weight(weights, eids, gather, p):
    """The weight of CSR position ``p`` as float64: ``weights[eids[p]]`` or ``weights[p]``."""
    return np.float64(weights[eids[p]]) if gather else np.float64(weights[p])


@kernel(inline=True)
def _longest(indptr, lo, hi):
    d = 0
    for r in range(lo, hi):
        d = max(d, indptr[r + 1] - indptr[r])
    return d


@kernel
def _row_alias(s0, d, weights, eids, gather, prob, lst, rec):
    """The alias records of one row (positions ``s0 .. s0 + d``) into ``rec``, with ``prob``
    and ``lst`` as scratch of at least ``d`` entries; returns the row's positive weights."""
    total = 0.0
    c = 0
    big = -1
    for j in range(d):
        w = _weight(weights, eids, gather, s0 + j)
        total += w
        rec[s0 + j] = j << 33
        if w > 0:
            c += 1
            big = j
    if c == 0:
        return c
    small = 0  # the small list grows up from 0, the large list down from d - 1
    large = d - 1
    for j in range(d):
        q = _weight(weights, eids, gather, s0 + j) * d / total
        prob[j] = q
        if q < 1.0:
            lst[small] = j
            small += 1
        else:
            lst[large] = j
            large -= 1
    ns = small
    nl = d - 1 - large
    while ns > 0 and nl > 0:
        ns -= 1
        sj = lst[ns]
        lj = lst[d - nl]
        rec[s0 + sj] = lj << 33
        prob[lj] -= 1.0 - prob[sj]
        if prob[lj] < 1.0:
            nl -= 1
            lst[ns] = lj
            ns += 1
    for t in range(nl):  # leftovers are 1 up to rounding
        prob[lst[d - 1 - t]] = 1.0
    for t in range(ns):
        j = lst[t]
        if _weight(weights, eids, gather, s0 + j) > 0:
            prob[j] = 1.0
        else:  # a zero weight must stay unreachable
            prob[j] = 0.0
            rec[s0 + j] = big << 33
    for j in range(d):
        thr = min(np.int64(prob[j] * _ONE), _ONE)
        rec[s0 + j] = rec[s0 + j] | thr
    return c


@kernel(parallel=True)
def row_alias(indptr, weights, eids, rec):
    """Per-row alias tables (Walker/Vose) of the edge weights as one record per edge: a
    weighted draw reads one record, then the neighbour and edge ID of the position drawn.

    The weight of CSR position ``p`` is ``weights[eids[p]]`` (``weights`` in edge-ID order,
    any float dtype, >= 0: a graph's own column, not gathered into a copy) or, with an
    empty ``eids``, ``weights[p]`` (CSR order).

    Returns ``(rec, nnz)``: ``rec`` is ``(E,)`` int64 with ``rec[p] = alias << 33 |
    threshold`` (row position j is kept when 32 random bits are below ``threshold``, a
    fraction of 2**32, else replaced by row position ``alias``): 8 bytes per edge (the
    neighbour is not copied in: it was 8 more, benchmarks/TUNING.md); ``nnz`` counts
    positive weights per row, and is empty when every weight is positive (then the kernels
    take the degree and skip a lookup).  ``rec`` is the ``(E,)`` int64 output, allocated
    by the caller (NumPy gives big arrays huge pages, which the random reads of sampling
    need: benchmarks/TUNING.md); the work lists are per task of ``_CHUNK`` rows, as long
    as its longest row.
    """
    nrows = indptr.shape[0] - 1
    nnz = np.zeros(nrows, dtype=np.int64)
    gather = eids.shape[0] > 0
    for ch in prange((nrows + _CHUNK - 1) // _CHUNK):
        lo = ch * _CHUNK
        hi = min(nrows, lo + _CHUNK)
        d = _longest(indptr, lo, hi)
        prob = np.empty(d, dtype=np.float64)
        lst = np.empty(d, dtype=np.int64)
        for r in range(lo, hi):
            nnz[r] = _row_alias(indptr[r], indptr[r + 1] - indptr[r], weights, eids, gather,
                                prob, lst, rec)
    for r in range(nrows):
        if nnz[r] != indptr[r + 1] - indptr[r]:
            return rec, nnz
    return rec, nnz[:0].copy()


@kernel
def alias_draw(rec, s0, d, st, step):
    """Row position drawn from the alias records of the row starting at ``s0`` (2 draws)."""
    j = randint(st, 2 * step, d)
    v = rec[s0 + j]
    if np.int64(draw(st, 2 * step + 1) >> np.uint64(32)) < (v & _TMASK):
        return j
    return v >> 33


@kernel
def _row_weights(rec, s0, d, w):
    """Weights of a row up to a common factor (they sum to ``d``), recovered from its alias
    records into ``w[:d]``."""
    for j in range(d):
        w[j] = 0.0
    for j in range(d):
        v = rec[s0 + j]
        p = (v & _TMASK) / _ONE
        w[j] += p
        w[v >> 33] += 1.0 - p


@kernel(parallel=True)
def row_inv_weights(indptr, rec):
    """``1 / w`` per edge (float32, CSR order; ``inf`` for a zero weight), with ``w`` the
    weights the alias records of :func:`row_alias` encode (scaled to sum to the degree per
    row), so exponential keys and alias draws sample the same weights (up to float32's
    rounding of ``1 / w``, 2**-24 of it: 4 bytes an edge, and 8 key lanes per AVX2 vector
    in :mod:`.keys_dense`)."""
    nrows = indptr.shape[0] - 1
    out = np.empty(rec.shape[0], dtype=np.float32)
    for ch in prange((nrows + _CHUNK - 1) // _CHUNK):
        lo = ch * _CHUNK
        hi = min(nrows, lo + _CHUNK)
        w = np.empty(_longest(indptr, lo, hi), dtype=np.float64)
        for r in range(lo, hi):
            s0 = indptr[r]
            d = indptr[r + 1] - s0
            _row_weights(rec, s0, d, w)
            for j in range(d):
                x = w[j]
                out[s0 + j] = np.float32(1.0 / x) if x > 0.0 else np.float32(np.inf)
    return out
