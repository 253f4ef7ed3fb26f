"""Numba kernels for one-hop neighbour sampling on raw CSR arrays.

All kernels take ``(indptr, indices, eids)`` of one edge type and direction (int64, C-contiguous;
memory-mapped arrays work), the CSR ``rows`` to sample and the node ``keys`` that seed the
draws (the node IDs).  Rows and keys differ when a store hands over a sub-CSR of the seeds'
neighbourhoods only; the draws, keyed by node ID, are then the same as on the whole CSR.
Output is ragged, in two passes: the caller counts (``sample_counts``), takes the cumulative
sum and the fill kernel writes each seed's slice.  Within a seed the sampled edges are in CSR
position order (edge-ID order for a Graph).

Uniform without replacement uses Floyd's algorithm (exactly ``k`` draws) or, past 64 picks, a
partial Fisher-Yates shuffle.  Weighted sampling reads per-row alias records (``row_alias``:
O(1) per draw); without replacement it rejects repeats, scans the row when ``k > deg / 2``,
and finishes with exponential keys if the rejections drag on (all exact).

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

from .._jit import kernel
from ._rng import draw, item_state, randint, uniform

__all__ = ["alias_draw", "fill_uniform", "fill_weighted", "row_alias", "sample_counts",
           "weighted_counts"]

_FLOYD_MAX = 64  # up to this many picks: Floyd's algorithm with a linear membership scan


@kernel
def sample_counts(indptr, rows, k, replace):
    """Edges each row yields: all for ``k < 0``, ``k`` with replacement, else min(k, deg)."""
    n = rows.shape[0]
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        d = indptr[rows[i] + 1] - indptr[rows[i]]
        if k < 0:
            out[i] = d
        elif replace:
            out[i] = k if d > 0 else 0
        else:
            out[i] = min(k, d)
    return out


@kernel
def weighted_counts(nnz, rows, k, replace):
    """As :func:`sample_counts` with ``nnz`` (positive-weight edges per row) as the degree."""
    n = rows.shape[0]
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        d = nnz[rows[i]]
        if k < 0:
            out[i] = d
        elif replace:
            out[i] = k if d > 0 else 0
        else:
            out[i] = min(k, d)
    return out


_ONE = 1 << 32  # acceptance thresholds are fixed-point fractions of 2**32
_TMASK = (1 << 33) - 1


@kernel(parallel=True)
def row_alias(indptr, indices, weights, scratch):
    """Per-row alias tables (Walker/Vose) of ``weights`` (CSR order, >= 0) as one record
    per edge, so a weighted draw reads one record and nothing else.

    Returns ``(rec, nnz)``: ``rec`` is ``(E, 2)`` int64 with ``rec[p, 0] = alias << 33 |
    threshold`` (row position j is kept when 32 random bits are below ``threshold``, a
    fraction of 2**32, else replaced by row position ``alias``) and ``rec[p, 1]`` the
    neighbour (16 bytes per edge); ``nnz`` counts positive weights per row.  ``scratch`` is an
    int64 array as long as ``weights`` (the work lists).
    """
    nrows = indptr.shape[0] - 1
    rec = np.zeros((weights.shape[0], 2), dtype=np.int64)
    prob = np.zeros(weights.shape[0], dtype=np.float64)
    nnz = np.zeros(nrows, dtype=np.int64)
    for r in prange(nrows):
        s0 = indptr[r]
        d = indptr[r + 1] - s0
        total = 0.0
        c = 0
        big = -1
        for j in range(d):
            w = weights[s0 + j]
            total += w
            rec[s0 + j, 0] = j << 33
            rec[s0 + j, 1] = indices[s0 + j]
            if w > 0:
                c += 1
                big = j
        nnz[r] = c
        if c == 0:
            continue
        small = s0  # small list grows up from s0, large list down from s0 + d - 1
        large = s0 + d - 1
        for j in range(d):
            q = weights[s0 + j] * d / total
            prob[s0 + j] = q
            if q < 1.0:
                scratch[small] = j
                small += 1
            else:
                scratch[large] = j
                large -= 1
        ns = small - s0
        nl = s0 + d - 1 - large
        while ns > 0 and nl > 0:
            ns -= 1
            sj = scratch[s0 + ns]
            lj = scratch[s0 + d - nl]
            rec[s0 + sj, 0] = lj << 33
            prob[s0 + lj] -= 1.0 - prob[s0 + sj]
            if prob[s0 + lj] < 1.0:
                nl -= 1
                scratch[s0 + ns] = lj
                ns += 1
        for t in range(nl):  # leftovers are 1 up to rounding
            prob[s0 + scratch[s0 + d - 1 - t]] = 1.0
        for t in range(ns):
            j = scratch[s0 + t]
            if weights[s0 + j] > 0:
                prob[s0 + j] = 1.0
            else:  # a zero weight must stay unreachable
                prob[s0 + j] = 0.0
                rec[s0 + j, 0] = big << 33
        for j in range(d):
            thr = min(np.int64(prob[s0 + j] * _ONE), _ONE)
            rec[s0 + j, 0] = rec[s0 + j, 0] | thr
    return rec, nnz


@kernel
def _sort_small(a, lo, hi):
    """Insertion sort of ``a[lo:hi]`` in place."""
    for i in range(lo + 1, hi):
        v = a[i]
        j = i - 1
        while j >= lo and a[j] > v:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = v


@kernel
def _in(a, lo, hi, v):
    found = False
    j = lo
    while j < hi and not found:
        found = a[j] == v
        j += 1
    return found


@kernel
def _gather(pos, o, c, start, indices, eids, out_src, out_eid):
    """Positions (relative to ``start``) in ``pos[o:o+c]`` -> sorted neighbour and edge IDs."""
    if c <= _FLOYD_MAX:
        _sort_small(pos, o, o + c)
    else:
        pos[o:o + c] = np.sort(pos[o:o + c])
    for j in range(o, o + c):
        p = start + pos[j]
        out_eid[j] = eids[p]
        out_src[j] = indices[p]


@kernel(parallel=True)
def fill_uniform(indptr, indices, eids, rows, keys, offsets, k, replace, seed, salt,
                 out_src, out_eid):
    """Uniform sampling: fill ``out_src``/``out_eid[offsets[i]:offsets[i+1]]`` for row i."""
    for i in prange(rows.shape[0]):
        start = indptr[rows[i]]
        d = indptr[rows[i] + 1] - start
        o = offsets[i]
        c = offsets[i + 1] - o
        if c == 0:
            continue
        if k < 0 or (not replace and c >= d):
            for j in range(c):
                out_src[o + j] = indices[start + j]
                out_eid[o + j] = eids[start + j]
            continue
        st = item_state(seed, salt, keys[i])
        pos = out_src  # the output slice doubles as scratch for positions
        if replace:
            for j in range(c):
                pos[o + j] = randint(st, j, d)
        elif c <= _FLOYD_MAX:
            # Floyd: a uniform c-subset of range(d) in exactly c draws
            for t in range(c):
                jj = d - c + t
                x = randint(st, t, jj + 1)
                if _in(pos, o, o + t, x):
                    x = jj
                pos[o + t] = x
        else:
            perm = np.arange(d)
            for t in range(c):
                x = t + randint(st, t, d - t)
                tmp = perm[t]
                perm[t] = perm[x]
                perm[x] = tmp
            pos[o:o + c] = perm[:c]
        _gather(pos, o, c, start, indices, eids, out_src, out_eid)


@kernel
def alias_draw(rec, s0, d, st, step):
    """Row position drawn from the alias records of the row starting at ``s0`` (2 draws)."""
    j = randint(st, 2 * step, d)
    v = rec[s0 + j, 0]
    if np.int64(draw(st, 2 * step + 1) >> np.uint64(32)) < (v & _TMASK):
        return j
    return v >> 33


@kernel
def _row_weights(rec, s0, d):
    """Weights of a row up to a common factor, recovered from its alias records."""
    w = np.zeros(d, dtype=np.float64)
    for j in range(d):
        v = rec[s0 + j, 0]
        p = (v & _TMASK) / _ONE
        w[j] += p
        w[v >> 33] += 1.0 - p
    return w


@kernel
def _gather_rec(pos, o, c, start, rec, eids, out_src, out_eid):
    if c <= _FLOYD_MAX:
        _sort_small(pos, o, o + c)
    else:
        pos[o:o + c] = np.sort(pos[o:o + c])
    for j in range(o, o + c):
        p = start + pos[j]
        out_eid[j] = eids[p]
        out_src[j] = rec[p, 1]


@kernel
def _exp_keys_fill(w, pos, o, t, c, st, step0):
    """Fill ``pos[o+t:o+c]`` with the smallest exponential keys -log(u)/w among the remaining
    positive-weight positions (Efraimidis-Spirakis), i.e. continue sequential weighted
    sampling without replacement exactly."""
    d = w.shape[0]
    keyv = np.full(d, np.inf)
    for p in range(d):
        if w[p] > 1e-9 and not _in(pos, o, o + t, p):
            keyv[p] = -np.log(1.0 - uniform(st, step0 + p)) / w[p]
    order = np.argsort(keyv, kind="mergesort")
    for j in range(c - t):
        pos[o + t + j] = order[j]


@kernel
def _sequential_fill(w, pos, o, c, st, step0):
    """Weighted sampling without replacement by ``c`` linear scans of the row: each pick is
    drawn in proportion to the weights not yet picked (exact; for rows where c > deg / 2)."""
    remaining = 0.0
    for p in range(w.shape[0]):
        remaining += w[p]
    for t in range(c):
        u = uniform(st, step0 + t) * remaining
        acc = 0.0
        last = -1
        x = -1
        for p in range(w.shape[0]):
            if w[p] > 0:
                last = p
                acc += w[p]
                if acc > u:
                    x = p
                    break
        if x < 0:  # rounding at the top
            x = last
        pos[o + t] = x
        remaining -= w[x]
        w[x] = 0.0


@kernel(parallel=True)
def fill_weighted(indptr, eids, rec, nnz, rows, keys, offsets, k, replace, seed, salt, out_src,
                  out_eid):
    """Sampling proportional to edge weights (alias records from :func:`row_alias`)."""
    for i in prange(rows.shape[0]):
        r = rows[i]
        start = indptr[r]
        d = indptr[r + 1] - start
        o = offsets[i]
        c = offsets[i + 1] - o
        if c == 0:
            continue
        pos = out_src
        if k < 0 or (not replace and c >= nnz[r]):
            if nnz[r] == d:  # every weight positive: the whole row
                for p in range(d):
                    out_src[o + p] = rec[start + p, 1]
                    out_eid[o + p] = eids[start + p]
                continue
            w = _row_weights(rec, start, d)
            t = 0
            for p in range(d):
                if w[p] > 1e-9:
                    pos[o + t] = p
                    t += 1
            _gather_rec(pos, o, c, start, rec, eids, out_src, out_eid)
            continue
        st = item_state(seed, salt, keys[i])
        if replace:
            for j in range(c):
                pos[o + j] = alias_draw(rec, start, d, st, j)
        elif 2 * c > d:
            _sequential_fill(_row_weights(rec, start, d), pos, o, c, st, 1 << 41)
        else:
            t = 0
            a = 0
            if c <= _FLOYD_MAX:
                while t < c and a < 4 * c + 16:
                    x = alias_draw(rec, start, d, st, a)
                    if not _in(pos, o, o + t, x):
                        pos[o + t] = x
                        t += 1
                    a += 1
            if t < c:
                _exp_keys_fill(_row_weights(rec, start, d), pos, o, t, c, st, 1 << 40)
        _gather_rec(pos, o, c, start, rec, eids, out_src, out_eid)
