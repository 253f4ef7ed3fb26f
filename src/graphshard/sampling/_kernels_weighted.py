"""Numba kernels for weighted neighbour sampling: per-row alias tables and the fill kernel.

Same conventions as :mod:`._kernels_nbr` (two-pass ragged output, draws keyed by node ID,
chunks of rows with prefetches).  A weighted draw reads one alias record (``row_alias``:
O(1) per draw).  Without replacement (successive sampling: draw proportionally to weight,
remove, repeat) the fill kernel takes a row whole when it yields all its positive-weight
edges, draws keys ``E / w`` (``E`` ~ Exp(1), ``1 / w`` precomputed per edge in float32
by ``row_inv_weights``) over rows with ``k >= 2 deg / 3`` and keeps the ``k`` smallest
(Efraimidis-Spirakis; in float32 lanes by :mod:`._keys_dense` on rows up to
``DENSE_MAX`` long), and rejects repeated alias draws on sparser rows, finishing with
keys if the rejections drag on.  All paths are exact up to float rounding (the alias
thresholds' 2**-32 and the record pick's ``d / 2**32``, ``1 / w``'s 2**-24, the float64
keys' 2**-44: see :mod:`._keys_dense`).

Example:
    >>> import numpy as np
    >>> indptr = np.array([0, 3]); nb = np.array([5, 6, 7]); w = np.array([1.0, 0.0, 3.0])
    >>> rec, nnz = row_alias(indptr, nb, w, np.empty(3, np.int64), np.empty((3, 2), np.int64))
    >>> nnz.tolist(), weighted_counts(indptr, nnz, np.array([0]), 5, False).tolist()
    ([2], [2])
"""

from __future__ import annotations

import numpy as np
from numba import prange

from .._jit import kernel
from ._kernels_nbr import _AHEAD, _FLOYD_MAX, row_yield, sample_counts
from ._keys_dense import DENSE_MAX, SCRATCH, at_least, dense_pick, keys_select
from ._prefetch import prefetch
from ._rng import draw, item_state, randint

__all__ = ["alias_draw", "fill_weighted", "row_alias", "row_inv_weights", "weighted_counts"]

_KEYS4 = 6  # no replacement: exponential keys over rows with 4 deg <= _KEYS4 k, else rejection
_ONE = 1 << 32  # acceptance thresholds are fixed-point fractions of 2**32
_TMASK = (1 << 33) - 1
_LO32 = np.uint64((1 << 32) - 1)
_S32 = np.uint64(32)
_ROWS = 128  # rows per chunk (uniform's 64 measured 3-9% slower here: more misses in flight)


@kernel
def weighted_counts(indptr, nnz, rows, k, replace):
    """As :func:`sample_counts` with ``nnz`` (positive-weight edges per row; empty: all
    weights are positive) as the degree."""
    if nnz.shape[0] == 0:
        return sample_counts(indptr, rows, k, replace)
    n = rows.shape[0]
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        if i + _AHEAD < n:
            prefetch(nnz, rows[i + _AHEAD])
        out[i] = row_yield(nnz[rows[i]], k, replace)
    return out


@kernel(parallel=True)
def row_alias(indptr, indices, weights, scratch, rec):
    """Per-row alias tables (Walker/Vose) of ``weights`` (CSR order, >= 0) as one record
    per edge, so a weighted draw reads one record and nothing else.

    Returns ``(rec, nnz)``: ``rec`` is ``(E, 2)`` int64 with ``rec[p, 0] = alias << 33 |
    threshold`` (row position j is kept when 32 random bits are below ``threshold``, a
    fraction of 2**32, else replaced by row position ``alias``) and ``rec[p, 1]`` the
    neighbour (16 bytes per edge); ``nnz`` counts positive weights per row, and is empty
    when every weight is positive (then the kernels take the degree and skip a lookup).
    ``scratch`` is an int64 array as long as ``weights`` (the work lists) and ``rec`` the
    ``(E, 2)`` int64 output, allocated by the caller (NumPy gives big arrays huge pages,
    which the random reads of sampling need: measured 15% faster than numba's allocation).
    """
    nrows = indptr.shape[0] - 1
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
    for r in range(nrows):
        if nnz[r] != indptr[r + 1] - indptr[r]:
            return rec, nnz
    return rec, nnz[:0].copy()


@kernel
def alias_draw(rec, s0, d, st, step):
    """Row position drawn from the alias records of the row starting at ``s0`` (2 draws)."""
    j = randint(st, 2 * step, d)
    v = rec[s0 + j, 0]
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
        v = rec[s0 + j, 0]
        p = (v & _TMASK) / _ONE
        w[j] += p
        w[v >> 33] += 1.0 - p


@kernel(parallel=True)
def row_inv_weights(indptr, rec):
    """``1 / w`` per edge (float32, CSR order; ``inf`` for a zero weight), with ``w`` the
    weights the alias records of :func:`row_alias` encode (scaled to sum to the degree per
    row), so exponential keys and alias draws sample the same weights (up to float32's
    rounding of ``1 / w``, 2**-24 of it: 4 bytes an edge, and 8 key lanes per AVX2 vector
    in :mod:`._keys_dense`)."""
    nrows = indptr.shape[0] - 1
    w = np.empty(rec.shape[0], dtype=np.float64)
    out = np.empty(rec.shape[0], dtype=np.float32)
    for r in prange(nrows):
        s0 = indptr[r]
        d = indptr[r + 1] - s0
        _row_weights(rec, s0, d, w[s0:s0 + d])
        for j in range(s0, s0 + d):
            x = w[j]
            out[j] = np.float32(1.0 / x) if x > 0.0 else np.float32(np.inf)
    return out


@kernel
def _alias_resolve(rec, s0, j, st, step):
    """Second half of :func:`alias_draw`: keep row position ``j`` or take its alias."""
    v = rec[s0 + j, 0]
    keep = np.int64(draw(st, 2 * step + 1) >> np.uint64(32)) < (v & _TMASK)
    return j if keep else v >> 33


@kernel
def _hi_index(h, d):
    """``floor(hi d / 2**32)`` for the high 32 bits ``hi`` of ``h``: a record of a row of
    ``d < 2**32`` edges, uniform up to ``d / 2**32`` (the thresholds' own precision)."""
    return np.int64(((h >> _S32) * np.uint64(d)) >> _S32)


@kernel
def _alias_pick(rec, s0, d, h):
    """Row position of one alias draw from the 64 random bits ``h``: the high half picks
    the record (:func:`_hi_index`), the low half is the coin against its threshold (one
    hash a draw, where :func:`alias_draw` takes two: measured 12-18% off the rejection
    rows' time)."""
    j = _hi_index(h, d)
    v = rec[s0 + j, 0]
    keep = np.int64(h & _LO32) < (v & _TMASK)
    return j if keep else v >> 33


@kernel
def _by_keys(c, d):
    """Without replacement, does a row of ``d`` edges yielding ``c < d`` take exponential
    keys (else alias draws rejecting repeats)?"""
    return 4 * d <= _KEYS4 * c or c > _FLOYD_MAX


@kernel
def _first_pass(indptr, invw, nnz, rows, keys, offsets, lo, hi, k, replace, seed, salt,
                flat, eids, cand):
    """Pass 1 of a chunk: the first ``c`` alias draws of every row that draws (into ``cand``:
    row positions with replacement, else their 64 bits, see :func:`_alias_pick`), their
    records and edge IDs prefetched, and the ``1 / w`` lines of rows that take exponential
    keys.  A row yielding fewer than ``k`` edges is taken whole (its CSR lines are not read
    here).  Returns how many rows take exponential keys."""
    nkeys = 0
    for i in range(lo, hi):
        o = offsets[i]
        c = offsets[i + 1] - o
        if c == 0 or k < 0 or (not replace and c < k):
            continue
        r = rows[i]
        start = indptr[r]
        d = indptr[r + 1] - start
        nz = nnz[r] if nnz.shape[0] > 0 else d
        if not replace and c >= nz:
            continue
        if not replace and _by_keys(c, d):
            nkeys += 1
            for j in range(0, d, 16):  # 16 float32 a line
                prefetch(invw, start + j)
        else:
            st = item_state(seed, salt, keys[i])
            for a in range(c):
                if replace:  # the draws of alias_draw
                    j = randint(st, 2 * a, d)
                    cand[o + a] = j
                else:
                    h = draw(st, a)
                    cand[o + a] = np.int64(h)
                    j = _hi_index(h, d)
                prefetch(flat, 2 * (start + j))
                prefetch(eids, start + j)  # the edge ID, unless the draw takes the alias
    return nkeys


@kernel
def _reject_repeats(rec, flat, eids, start, d, o, c, st, cand, pos):
    """Alias draws without replacement by rejecting repeats (the bits of draw ``a < c`` are
    ``cand[o + a]``, later ones are drawn here: :func:`_alias_pick`); returns how many of
    the ``c`` picks it made before giving up.

    Branch-free per draw where it can be, as both tests are coin flips a branch predictor
    would miss: the alias choice is a select, and a repeat (found in a bit mask of the
    picks' positions mod 64, confirmed by a scan of the picks on rows over 64 long) is
    written, then overwritten by the next draw."""
    t = 0
    a = 0
    mask = np.uint64(0)
    while t < c and a < 4 * c + 16:
        h = np.uint64(cand[o + a]) if a < c else draw(st, a)
        x = _alias_pick(rec, start, d, h)
        bit = np.uint64(1) << np.uint64(x & 63)
        new = np.int64((mask & bit) == 0)
        if d > 64 and new == 0:  # the mask holds positions mod 64: scan to be sure
            hit = 0
            for q in range(o, o + t):
                hit |= np.int64(pos[q] == x)
            new = 1 - hit
        mask |= bit
        pos[o + t] = x
        t += new
        prefetch(flat, 2 * (start + x))  # in cache unless the draw took the alias
        prefetch(eids, start + x)
        a += 1
    return t


@kernel
def _from_indices(pos, o, c, start, indices, eids):
    """Row positions ``pos[o:o+c]`` to CSR positions, their lines prefetched for the gather."""
    for j in range(o, o + c):
        pos[j] += start
        prefetch(indices, pos[j])
        prefetch(eids, pos[j])


@kernel
def _gather(indices, eids, rec, lo, hi, out_src, out_eid):
    """``out_eid[lo:hi]`` holds CSR positions ``p`` (neighbour in ``indices``) or ``-p - 1``
    (neighbour in the alias record, whose line the draw brought in): replace them by edge
    IDs, neighbours to ``out_src``."""
    for j in range(lo, hi):
        p = out_eid[j]
        if p >= 0:
            out_src[j] = indices[p]
        else:
            p = -p - 1
            out_src[j] = rec[p, 1]
        out_eid[j] = eids[p]


@kernel(parallel=True)
def fill_weighted(indptr, indices, eids, rec, nnz, invw, rows, keys, offsets, k, replace, seed,
                  salt, out_src, out_eid):
    """Sampling proportional to edge weights (alias records from :func:`row_alias`, ``1/w``
    from :func:`row_inv_weights`).

    Chunked as :func:`fill_uniform`, in three passes: prefetches and the first alias draws
    of every row (``out_src`` is the scratch), then the positions (in ``out_eid``), then the
    gather.  Without replacement, rows with ``4 deg > _KEYS4 k`` reject repeated alias draws
    (one hash a draw: :func:`_alias_pick`; finishing with exponential keys if the
    rejections drag on); denser rows take exponential keys over the row (float32 lanes up
    to ``DENSE_MAX`` edges).  With replacement the draws equal :func:`alias_draw`'s.
    """
    n = rows.shape[0]
    flat = rec.reshape(-1)
    allpos = nnz.shape[0] == 0
    keyv0 = np.empty(0, dtype=np.float64)
    k32_0 = np.empty(0, dtype=np.float32)
    packed0 = np.empty(0, dtype=np.int64)
    for ch in prange((n + _ROWS - 1) // _ROWS):
        lo = ch * _ROWS
        hi = min(n, lo + _ROWS)
        keyv = keyv0
        for i in range(lo, hi):
            prefetch(indptr, rows[i])
        nkeys = _first_pass(indptr, invw, nnz, rows, keys, offsets, lo, hi, k, replace, seed,
                            salt, flat, eids, out_src)
        k32 = np.empty(SCRATCH, dtype=np.float32) if nkeys else k32_0  # dense path scratch
        packed = np.empty(SCRATCH, dtype=np.int64) if nkeys else packed0
        for i in range(lo, hi):  # pass 2: positions
            r = rows[i]
            start = indptr[r]
            d = indptr[r + 1] - start
            o = offsets[i]
            c = offsets[i + 1] - o
            if c == 0:
                continue
            nz = d if allpos else nnz[r]
            if k < 0 or (not replace and c >= nz):  # the whole row (its positive weights)
                if nz == d:
                    for j in range(c):
                        out_eid[o + j] = start + j
                    for j in range(0, c, 8):
                        prefetch(indices, start + j)
                        prefetch(eids, start + j)
                else:
                    t = 0
                    for p in range(start, start + d):
                        if invw[p] < np.inf and t < c:
                            out_eid[o + t] = p
                            t += 1
                    for p in range(start, start + d):  # weights under 2**-32 of the row's
                        if invw[p] == np.inf and t < c:  # mean read as 0 in the records
                            out_eid[o + t] = p
                            t += 1
                continue
            st = item_state(seed, salt, keys[i])
            if replace:
                for j in range(c):
                    x = start + _alias_resolve(rec, start, out_src[o + j], st, j)
                    out_eid[o + j] = -x - 1
                    prefetch(flat, 2 * x)  # in cache unless the draw took the alias
                    prefetch(eids, x)
                continue
            t = 0
            if not _by_keys(c, d):
                t = _reject_repeats(rec, flat, eids, start, d, o, c, st, out_src, out_eid)
                if t == c:
                    for j in range(o, o + c):
                        out_eid[j] = -(start + out_eid[j]) - 1
                    continue
            if t == 0 and d <= DENSE_MAX and k32.shape[0] > 0:
                dense_pick(invw, start, d, out_eid, o, c, st, k32, packed)
            else:
                keyv = at_least(keyv, d + 16)
                keys_select(invw, start, d, out_eid, o, t, c, st,
                            (1 << 41) if t == 0 else (1 << 40), keyv)
            _from_indices(out_eid, o, c, start, indices, eids)
        _gather(indices, eids, rec, offsets[lo], offsets[hi], out_src, out_eid)
