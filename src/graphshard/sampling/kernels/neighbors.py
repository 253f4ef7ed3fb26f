"""Numba kernels for one-hop neighbour sampling on raw CSR arrays.

All kernels take ``(indptr, indices, eids)`` of one edge type and direction (int64, C-contiguous;
memory-mapped arrays work), the CSR ``rows`` to sample and the node ``keys`` that seed the
draws (the node IDs).  Rows and keys differ when a store hands over a sub-CSR of the seeds'
neighbourhoods only; the draws, keyed by node ID, are then the same as on the whole CSR.
Output is ragged, in two passes: the caller counts (``sample_counts``), takes the cumulative
sum and the fill kernel writes each seed's slice.  Within a seed, a row taken whole is in CSR
position order (edge-ID order for a Graph); sampled edges are in draw order (not sorted:
sorting is a large share of the kernel's time; benchmarks/TUNING.md).

Uniform without replacement uses Floyd's algorithm (exactly ``k`` draws) or, past 64 picks, a
partial Fisher-Yates shuffle.  Rows go in chunks whose positions are drawn first, with
software prefetches of the lines to gather, and gathered second, so the cache misses of a
chunk overlap.  Weighted sampling is in :mod:`.weighted`.

Example:
    >>> import numpy as np
    >>> indptr = np.array([0, 3]); nb = np.array([5, 6, 7]); eids = np.array([0, 1, 2])
    >>> rows = np.array([0]); counts = sample_counts(indptr, rows, 2, False)
    >>> offsets = np.array([0, counts[0]]); src = np.empty(2, np.int64); e = src.copy()
    >>> fill_uniform(indptr, nb, eids, rows, rows, offsets, 2, False, 0, 0, src, e)
    >>> len(set(src.tolist())), sorted(e.tolist()) == sorted(set(e.tolist()))
    (2, True)
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ..._util.jit import kernel
from ..._util.prefetch import prefetch
from .rng import item_state, randint

__all__ = ["fill_uniform", "sample_counts"]

_FLOYD_MAX = 64  # up to this many picks: Floyd's algorithm with a linear membership scan
_ROWS = 64  # rows per chunk: positions of a chunk are drawn (and prefetched), then gathered
_AHEAD = 16  # counting loops prefetch the row this many seeds ahead


@kernel
def sample_counts(indptr, rows, k, replace):
    """Edges each row yields: all for ``k < 0``, ``k`` with replacement, else min(k, deg)."""
    n = rows.shape[0]
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        if i + _AHEAD < n:
            prefetch(indptr, rows[i + _AHEAD])
        out[i] = row_yield(indptr[rows[i] + 1] - indptr[rows[i]], k, replace)
    return out


@kernel
def row_yield(d, k, replace):
    """Edges a row of ``d`` candidates yields for fanout ``k``."""
    if k < 0:
        return d
    if replace:
        return k if d > 0 else 0
    return min(k, d)


@kernel(inline=True)
def whole_row(indices, eids, start, o, c, out_eid):
    """The first ``c`` edges of the row at ``start`` (all of them, or all those positive
    weights allow), their CSR positions into ``out_eid[o:o+c]`` and their lines prefetched
    for the gather."""
    for j in range(c):
        out_eid[o + j] = start + j
    for j in range(0, c, 8):
        prefetch(indices, start + j)
        prefetch(eids, start + j)


@kernel
def _floyd(pos, o, c, d, st):
    """Floyd's algorithm: a uniform ``c``-subset of ``range(d)`` in exactly ``c`` draws, into
    ``pos[o:o+c]`` in draw order.  The membership test is a branch-free scan of the picks so
    far (vectorised; cheaper than a sorted insert for the small ``c`` it serves)."""
    for t in range(c):
        jj = d - c + t
        x = randint(st, t, jj + 1)
        hit = False
        for j in range(o, o + t):
            hit |= pos[j] == x
        pos[o + t] = jj if hit else x


@kernel
def _partial_shuffle(pos, o, c, d, st):
    """The first ``c`` entries of a partial Fisher-Yates shuffle of ``range(d)`` (many picks)."""
    perm = np.arange(d)
    for t in range(c):
        x = t + randint(st, t, d - t)
        tmp = perm[t]
        perm[t] = perm[x]
        perm[x] = tmp
    pos[o:o + c] = perm[:c]


@kernel
def _gather_chunk(indices, eids, lo, hi, out_src, out_eid):
    """``out_eid[lo:hi]`` holds CSR positions: replace them by edge IDs, neighbours to
    ``out_src`` (the lines were prefetched while the positions were drawn)."""
    for j in range(lo, hi):
        p = out_eid[j]
        out_src[j] = indices[p]
        out_eid[j] = eids[p]


@kernel(parallel=True)
def fill_uniform(indptr, indices, eids, rows, keys, offsets, k, replace, seed, salt,
                 out_src, out_eid):
    """Uniform sampling: fill ``out_src``/``out_eid[offsets[i]:offsets[i+1]]`` for row i.

    Rows go in chunks of ``_ROWS``: the first pass draws every row's positions into
    ``out_eid`` and prefetches their lines, the second gathers neighbours and edge IDs, so
    the cache misses of a whole chunk overlap.
    """
    n = rows.shape[0]
    for ch in prange((n + _ROWS - 1) // _ROWS):
        lo = ch * _ROWS
        hi = min(n, lo + _ROWS)
        for i in range(lo, hi):
            prefetch(indptr, rows[i])
        for i in range(lo, hi):
            start = indptr[rows[i]]
            d = indptr[rows[i] + 1] - start
            o = offsets[i]
            c = offsets[i + 1] - o
            if c == 0:
                continue
            if k < 0 or (not replace and c >= d):
                whole_row(indices, eids, start, o, c, out_eid)
                continue
            st = item_state(seed, salt, keys[i])
            if replace:
                for j in range(c):
                    out_eid[o + j] = randint(st, j, d)
            elif c <= _FLOYD_MAX:
                _floyd(out_eid, o, c, d, st)
            else:
                _partial_shuffle(out_eid, o, c, d, st)
            for j in range(o, o + c):
                out_eid[j] += start
                prefetch(indices, out_eid[j])
                prefetch(eids, out_eid[j])
        _gather_chunk(indices, eids, offsets[lo], offsets[hi], out_src, out_eid)
