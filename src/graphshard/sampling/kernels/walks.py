"""Numba kernels for random walks (uniform, weighted, metapath, node2vec) on raw CSR arrays.

A metapath of ``m`` edge types is one concatenated CSR: step ``t`` (1-based) uses rows
``row_base[(t - 1) % m] + node`` of ``indptr``.  Walks advance step-major in chunks of
``_CHUNK`` walks with software prefetches, so the memory reads of independent walks overlap.
Walk ``w`` draws from ``item_state(seed, salt, keys[w])``: draws ``2t`` and ``2t + 1`` pick
step t, draw ``2**40 + t`` decides a restart.  Weighted steps use the per-row alias records
of ``row_alias``.
Dead ends and stopped walks are padded with -1.

Example:
    >>> import numpy as np
    >>> indptr = np.array([0, 1, 2]); nb = np.array([1, 0]); out = np.empty((1, 4), np.int64)
    >>> rec = np.zeros(0, np.int64); nnz = np.zeros(0, np.int64)
    >>> walk(indptr, nb, rec, nnz, False, np.array([0]), np.array([0]), np.array([0]), 0.0,
    ...      4, 0, 0, out)
    >>> out.tolist()
    [[0, 1, 0, 1]]
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ..._util.jit import kernel
from ..._util.prefetch import prefetch
from .rng import draw, item_state, randint, uniform
from .weighted import _TMASK, alias_draw

__all__ = ["node2vec_step", "node2vec_walk", "sort_rows", "walk", "walk_step"]

_CHUNK = 256
_RESTART = 1 << 40  # draw numbers of the restart decisions


@kernel
def _next(indptr, indices, rec, nnz, weighted, r, st, t):
    """Neighbour drawn for step ``t`` from CSR row ``r``, or -1 at a dead end."""
    s0 = indptr[r]
    d = indptr[r + 1] - s0
    if d == 0:
        return -1
    if not weighted:
        return indices[s0 + randint(st, 2 * t, d)]
    if nnz.shape[0] > 0 and nnz[r] == 0:
        return -1
    return indices[s0 + alias_draw(rec, s0, d, st, t)]


@kernel(parallel=True)
def walk(indptr, indices, rec, nnz, weighted, row_base, starts, keys, restart_prob, walk_len,
         seed, salt, out):
    """Fill ``out`` (walks x walk_len, int64) with walks from ``starts``.

    Walks advance step-major over a chunk of ``_CHUNK`` walks, each step in two passes: the
    first reads every walk's row bounds, draws its row position and prefetches that
    neighbour; the second reads the neighbours and prefetches their next row bounds.  So
    each cache miss has a whole pass over the chunk to arrive, and many are in flight at
    once.  A weighted step takes one pass more: the drawn position's alias record decides
    the position, whose neighbour is then prefetched.  The draws are those of
    :func:`_next` (and :func:`walk_step`).
    """
    n = starts.shape[0]
    m = row_base.shape[0]
    has_nnz = weighted and nnz.shape[0] > 0
    nchunks = (n + _CHUNK - 1) // _CHUNK
    for c in prange(nchunks):
        lo = c * _CHUNK
        size = min(n, lo + _CHUNK) - lo
        states = np.empty(size, dtype=np.uint64)
        pos = np.empty(size, dtype=np.int64)
        rowstart = np.empty(size, dtype=np.int64)
        buf = np.empty((walk_len, size), dtype=np.int64)  # column-major: stays in cache
        for i in range(size):
            buf[0, i] = starts[lo + i]
            states[i] = item_state(seed, salt, keys[lo + i])
            prefetch(indptr, row_base[0] + buf[0, i])
        for t in range(1, walk_len):
            base = row_base[(t - 1) % m]
            nbase = row_base[t % m]
            prev = buf[t - 1]
            cur = buf[t]
            for i in range(size):  # pass 1: row bounds -> drawn position, prefetched
                v = prev[i]
                p = -1
                if v >= 0:
                    r = base + v
                    s0 = indptr[r]
                    d = indptr[r + 1] - s0
                    st = states[i]
                    if d > 0 and not (restart_prob > 0
                                      and uniform(st, _RESTART + t) < restart_prob):
                        if not weighted:
                            p = s0 + randint(st, 2 * t, d)
                            prefetch(indices, p)
                        elif not has_nnz or nnz[r] > 0:
                            p = s0 + randint(st, 2 * t, d)
                            rowstart[i] = s0
                            prefetch(rec, p)
                pos[i] = p
            if weighted:  # pass 1b: the alias record -> the position, its neighbour prefetched
                for i in range(size):
                    p = pos[i]
                    if p >= 0:
                        a = rec[p]
                        if np.int64(draw(states[i], 2 * t + 1) >> np.uint64(32)) >= (a & _TMASK):
                            p = rowstart[i] + (a >> 33)
                            pos[i] = p
                        prefetch(indices, p)
            for i in range(size):  # pass 2: the neighbour, prefetch its next row bounds
                p = pos[i]
                v = -1
                if p >= 0:
                    v = indices[p]
                    prefetch(indptr, nbase + v)
                    if has_nnz:
                        prefetch(nnz, nbase + v)
                cur[i] = v
        for i in range(size):
            for t in range(walk_len):
                out[lo + i, t] = buf[t, i]


@kernel(parallel=True)
def walk_step(indptr, indices, rec, nnz, weighted, rows, keys, restart_prob, t, seed, salt,
              out):
    """One step ``t`` of walks whose current node sits in sub-CSR row ``rows[w]`` (-1: the
    walk has stopped); draws as :func:`walk`, so a step-wise remote walk equals a local one."""
    for w in prange(rows.shape[0]):
        if rows[w] < 0:
            out[w] = -1
            continue
        st = item_state(seed, salt, keys[w])
        if restart_prob > 0 and uniform(st, _RESTART + t) < restart_prob:
            out[w] = -1
            continue
        out[w] = _next(indptr, indices, rec, nnz, weighted, rows[w], st, t)


@kernel(parallel=True)
def sort_rows(indptr, indices):
    """A copy of ``indices`` with every row sorted (for membership tests by binary search)."""
    out = indices.copy()
    for r in prange(indptr.shape[0] - 1):
        out[indptr[r]:indptr[r + 1]] = np.sort(indices[indptr[r]:indptr[r + 1]])
    return out


@kernel
def _has_edge(indptr, sorted_indices, a, b):
    lo = indptr[a]
    hi = indptr[a + 1]
    while lo < hi:
        mid = (lo + hi) >> 1
        if sorted_indices[mid] < b:
            lo = mid + 1
        else:
            hi = mid
    return lo < indptr[a + 1] and sorted_indices[lo] == b


@kernel(inline=True)
def _n2v_next(indptr, sorted_indices, r, pindptr, psorted, prow, prev, st, t, p, q, wmax):
    """Step ``t`` of a node2vec walk at CSR row ``r`` (sorted rows), whose previous node
    ``prev`` has its out-neighbours in row ``prow`` of ``(pindptr, psorted)``; -1 at a dead
    end.  The draws depend on (walk state, t) and the sorted rows only, so a local walk and a
    step-wise one on fetched rows pick the same nodes."""
    s0 = indptr[r]
    d = indptr[r + 1] - s0
    if d == 0:
        return -1
    if t == 1:
        return sorted_indices[s0 + randint(st, 4096 * t, d)]
    x = -1
    for a in range(2000):
        x = sorted_indices[s0 + randint(st, 4096 * t + 2 * a, d)]
        if x == prev:
            wx = 1.0 / p
        elif _has_edge(pindptr, psorted, prow, x):
            wx = 1.0
        else:
            wx = 1.0 / q
        if uniform(st, 4096 * t + 2 * a + 1) * wmax < wx:
            break
    return x


@kernel(parallel=True)
def node2vec_walk(indptr, sorted_indices, starts, keys, p, q, walk_len, seed, salt, out):
    """Second-order (node2vec) walks by rejection: propose a uniform neighbour x of the
    current node, accept with weight 1/p (x is the previous node), 1 (x is a neighbour of
    the previous node) or 1/q (otherwise), relative to the largest of the three."""
    wmax = max(1.0 / p, 1.0, 1.0 / q)
    for w in prange(starts.shape[0]):
        st = item_state(seed, salt, keys[w])
        out[w, 0] = starts[w]
        for t in range(1, walk_len):
            cur = out[w, t - 1]
            if cur < 0:
                out[w, t] = -1
                continue
            prev = out[w, t - 2] if t >= 2 else -1
            out[w, t] = _n2v_next(indptr, sorted_indices, cur, indptr, sorted_indices, prev,
                                  prev, st, t, p, q, wmax)


@kernel(parallel=True)
def node2vec_step(indptr, sorted_indices, rows, pindptr, psorted, prows, prevs, keys, p, q, t,
                  seed, salt, out):
    """One step ``t`` of node2vec walks on fetched rows: walk ``w``'s current node is row
    ``rows[w]`` of ``(indptr, sorted_indices)`` (-1: stopped), its previous node
    ``prevs[w]`` is row ``prows[w]`` of ``(pindptr, psorted)`` (used from t = 2); rows
    sorted.  Draws as :func:`node2vec_walk`, so a step-wise remote walk equals a local one."""
    wmax = max(1.0 / p, 1.0, 1.0 / q)
    for w in prange(rows.shape[0]):
        if rows[w] < 0:
            out[w] = -1
            continue
        st = item_state(seed, salt, keys[w])
        out[w] = _n2v_next(indptr, sorted_indices, rows[w], pindptr, psorted, prows[w],
                           prevs[w], st, t, p, q, wmax)
