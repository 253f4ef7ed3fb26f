"""Numba kernels for weighted neighbour sampling: the fill kernel over per-row alias tables.

Same conventions as :mod:`.neighbors` (two-pass ragged output, draws keyed by node ID,
chunks of rows with prefetches).  A weighted draw reads one alias record (``row_alias``
of :mod:`.alias`, re-exported here: O(1) per draw).  Without replacement (successive
sampling: draw proportionally to weight, remove, repeat) the fill kernel takes a row whole
when it yields all its positive-weight edges, draws keys ``E / w`` (``E`` ~ Exp(1),
``1 / w`` precomputed per edge in float32 by ``row_inv_weights``) over rows with
``k >= 2 deg / 3`` and keeps the ``k`` smallest (Efraimidis-Spirakis; in float32 lanes by
:mod:`.keys_dense` on rows up to ``DENSE_MAX`` long), and rejects repeated alias draws
on sparser rows, finishing with keys if the rejections drag on.  All paths are exact up
to float rounding (the alias thresholds' 2**-32 and the record pick's ``d / 2**32``,
``1 / w``'s 2**-24, the float64 keys' 2**-44: see :mod:`.keys_dense`).  A chunk's rows
are listed by path first and each path runs over its own rows, so its branches see runs
of one row kind (cheaper than rows of mixed kinds in seed order: benchmarks/TUNING.md).

Example:
    >>> import numpy as np
    >>> indptr = np.array([0, 3]); nb = np.array([5, 6, 7]); w = np.array([1.0, 0.0, 3.0])
    >>> rec, nnz = row_alias(indptr, w, np.empty(0, np.int64), np.empty(3, np.int64))
    >>> nnz.tolist(), weighted_counts(indptr, nnz, np.array([0]), 5, False).tolist()
    ([2], [2])
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ..._util.jit import kernel
from ..._util.prefetch import prefetch
from .alias import _TMASK, alias_draw, row_alias, row_inv_weights
from .keys_dense import DENSE_MAX, SCRATCH, at_least, dense_pick, keys_select
from .neighbors import _AHEAD, _FLOYD_MAX, row_yield, sample_counts, whole_row
from .rng import draw, item_state, randint

__all__ = ["alias_draw", "fill_weighted", "row_alias", "row_inv_weights", "weighted_counts"]

_KEYS4 = 6  # no replacement: exponential keys over rows with 4 deg <= _KEYS4 k, else rejection
_LO32 = np.uint64((1 << 32) - 1)
_S32 = np.uint64(32)
_ROWS = 128  # rows per chunk (above uniform's 64: more misses in flight; benchmarks/TUNING.md)
_WHOLE, _REJECT, _KEYS = 1, 2, 3  # paths without replacement (0: the row yields nothing)
_CNT = 4 * _ROWS  # lists[q * _ROWS:] holds a chunk's rows of path q, lists[_CNT + q] how many
_LIST = _CNT + 4 + SCRATCH + SCRATCH // 2  # int64 scratch of a chunk (with the dense path's)


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


@kernel(inline=True)
def _alias_resolve(rec, s0, j, st, step):
    """Second half of :func:`alias_draw`: keep row position ``j`` or take its alias."""
    v = rec[s0 + j]
    keep = np.int64(draw(st, 2 * step + 1) >> np.uint64(32)) < (v & _TMASK)
    return j if keep else v >> 33


@kernel(inline=True)
def _hi_index(h, d):
    """``floor(hi d / 2**32)`` for the high 32 bits ``hi`` of ``h``: a record of a row of
    ``d < 2**32`` edges, uniform up to ``d / 2**32`` (the thresholds' own precision)."""
    return np.int64(((h >> _S32) * np.uint64(d)) >> _S32)


@kernel(inline=True)
def _alias_pick(rec, s0, d, h):
    """Row position of one alias draw from the 64 random bits ``h``: the high half picks
    the record (:func:`_hi_index`), the low half is the coin against its threshold (one
    hash a draw, where :func:`alias_draw` takes two: benchmarks/TUNING.md)."""
    j = _hi_index(h, d)
    v = rec[s0 + j]
    keep = np.int64(h & _LO32) < (v & _TMASK)
    return j if keep else v >> 33


@kernel(inline=True)
def _by_keys(c, d):
    """Without replacement, does a row of ``d`` edges yielding ``c < d`` take exponential
    keys (else alias draws rejecting repeats)?"""
    return (4 * d <= _KEYS4 * c) | (c > _FLOYD_MAX)


@kernel
def _with_replacement(indptr, indices, eids, rec, invw, rows, keys, offsets, lo, hi, k, seed,
                      salt, out_src, out_eid):
    """Positions of a chunk's rows with replacement (the draws of :func:`alias_draw`):
    the first draws into ``out_src`` with their records' lines prefetched, then the
    alias choices into ``out_eid`` as ``-p - 1`` (see :func:`_gather`)."""
    for i in range(lo, hi):
        o = offsets[i]
        c = offsets[i + 1] - o
        if c == 0 or k < 0:
            continue
        start = indptr[rows[i]]
        d = indptr[rows[i] + 1] - start
        st = item_state(seed, salt, keys[i])
        for a in range(c):
            j = randint(st, 2 * a, d)
            out_src[o + a] = j
            prefetch(rec, start + j)
            prefetch(eids, start + j)  # the edge ID, unless the draw takes the alias
    for i in range(lo, hi):
        o = offsets[i]
        c = offsets[i + 1] - o
        if c == 0:
            continue
        start = indptr[rows[i]]
        d = indptr[rows[i] + 1] - start
        if k < 0:
            _whole(indices, eids, invw, start, d, o, c, out_eid)
            continue
        st = item_state(seed, salt, keys[i])
        for j in range(c):
            x = start + _alias_resolve(rec, start, out_src[o + j], st, j)
            out_eid[o + j] = -x - 1
            prefetch(indices, x)  # the neighbour and edge ID of the position drawn
            prefetch(eids, x)


@kernel
def _classify(indptr, indices, eids, nnz, rows, offsets, lo, hi, k, lists, out_eid):
    """Without replacement, list the rows ``i`` of a chunk by path (see ``_CNT``): rows
    rejecting repeated alias draws, rows taking exponential keys (:func:`_by_keys`) and
    rows taken whole that have zero weights.  Rows taken whole with every weight positive
    get their CSR positions here, their lines prefetched, as :func:`fill_uniform` does
    (faster on such rows than listing them too: benchmarks/TUNING.md)."""
    allpos = nnz.shape[0] == 0
    for q in range(4):
        lists[_CNT + q] = 0
    for i in range(lo, hi):
        o = offsets[i]
        c = offsets[i + 1] - o
        r = rows[i]
        start = indptr[r]
        d = indptr[r + 1] - start
        nz = d if allpos else nnz[r]
        whole = (k < 0) | (c >= nz)  # then c is the row's number of positive weights
        if whole & (c == d) & (c > 0):
            whole_row(indices, eids, start, o, c, out_eid)
            continue
        q = _KEYS if _by_keys(c, d) else _REJECT
        q = _WHOLE if whole else q
        q = 0 if c == 0 else q
        t = lists[_CNT + q]
        lists[q * _ROWS + t] = i
        lists[_CNT + q] = t + 1


@kernel
def _first_draws(indptr, invw, rows, keys, offsets, lists, seed, salt, rec, eids, cand):
    """Pass 1 without replacement: the first ``c`` alias draws' 64 bits of each rejecting
    row (into ``cand``, see :func:`_alias_pick`) with their records prefetched (not their
    edge IDs, which :func:`_reject_repeats` prefetches once it knows the position:
    benchmarks/TUNING.md), and the ``1 / w`` lines of the rows that take keys."""
    for q in range(lists[_CNT + _REJECT]):
        i = lists[_REJECT * _ROWS + q]
        o = offsets[i]
        start = indptr[rows[i]]
        d = indptr[rows[i] + 1] - start
        st = item_state(seed, salt, keys[i])
        for a in range(offsets[i + 1] - o):
            h = draw(st, a)
            cand[o + a] = np.int64(h)
            j = _hi_index(h, d)
            prefetch(rec, start + j)  # not the edge ID: the draw may take the alias
    for q in range(lists[_CNT + _KEYS]):
        i = lists[_KEYS * _ROWS + q]
        for j in range(indptr[rows[i]], indptr[rows[i] + 1], 16):  # 16 float32 a line
            prefetch(invw, j)


@kernel(inline=True)
def _whole(indices, eids, invw, start, d, o, c, out_eid):
    """The row at ``start`` taken whole: its ``c`` positive-weight edges' CSR positions (in
    CSR order) into ``out_eid[o:o+c]``, their lines prefetched when ``c == d``."""
    if c == d:
        whole_row(indices, eids, start, o, c, out_eid)
        return
    t = 0
    for p in range(start, start + d):
        if invw[p] < np.inf and t < c:
            out_eid[o + t] = p
            t += 1
    for p in range(start, start + d):  # weights under 2**-32 of the row's
        if invw[p] == np.inf and t < c:  # mean read as 0 in the records
            out_eid[o + t] = p
            t += 1


@kernel(inline=True)
def _reject_repeats(rec, indices, eids, start, d, o, c, st, cand, pos):
    """Alias draws without replacement by rejecting repeats (the bits of draw ``a < c`` are
    ``cand[o + a]``, later ones are drawn here: :func:`_alias_pick`) into ``pos[o:o+c]`` as
    ``-p - 1`` for CSR position ``p`` (see :func:`_gather`); returns how many of the ``c``
    picks it made before giving up.

    Branch-free per draw where it can be, as both tests are coin flips a branch predictor
    would miss: the alias choice is a select, and a repeat (found in a bit mask of the
    picks' positions mod 64, confirmed by a scan of the picks on rows over 64 long) is
    written, then overwritten by the next draw."""
    t = 0
    mask = np.uint64(0)
    for a in range(4 * c + 16):
        if a >= c and t == c:  # no exit test in the first c draws, where t < c
            break
        h = np.uint64(cand[o + a]) if a < c else draw(st, a)
        x = _alias_pick(rec, start, d, h)
        bit = np.uint64(1) << np.uint64(x & 63)
        new = np.int64((mask & bit) == 0)
        e = -(start + x) - 1
        if d > 64 and new == 0:  # the mask holds positions mod 64: scan to be sure
            hit = 0
            for q in range(o, o + t):
                hit |= np.int64(pos[q] == e)
            new = 1 - hit
        mask |= bit
        pos[o + t] = e
        t += new
        prefetch(indices, start + x)  # the neighbour and edge ID of the position drawn
        prefetch(eids, start + x)
    return t


@kernel(inline=True)
def _from_indices(pos, o, c, start, indices, eids):
    """Row positions ``pos[o:o+c]`` to CSR positions, their lines prefetched for the gather."""
    for j in range(o, o + c):
        pos[j] += start
        prefetch(indices, pos[j])
        prefetch(eids, pos[j])


@kernel
def _gather(indices, eids, rec, lo, hi, out_src, out_eid):
    """``out_eid[lo:hi]`` holds CSR positions ``p`` or ``-p - 1`` (an alias draw's, whose
    lines the draw prefetched): replace them by edge IDs, neighbours to ``out_src``."""
    for j in range(lo, hi):
        p = out_eid[j]
        if p < 0:
            p = -p - 1
        out_src[j] = indices[p]
        out_eid[j] = eids[p]


@kernel(parallel=True)
def fill_weighted(indptr, indices, eids, rec, nnz, invw, rows, keys, offsets, k, replace, seed,
                  salt, out_src, out_eid):
    """Sampling proportional to edge weights (alias records from :func:`row_alias`, ``1/w``
    from :func:`row_inv_weights`, ``nnz`` and offsets from :func:`weighted_counts`).

    Chunked as :func:`fill_uniform`: the positions of a chunk's rows (in ``out_eid``;
    ``out_src`` holds the first draws), then the gather.  Without replacement the rows are
    listed by path (:func:`_classify`) and each path runs over its rows: rows taken whole;
    denser rows taking exponential keys over the row (float32 lanes up to ``DENSE_MAX``
    edges); rows with ``4 deg > _KEYS4 k`` rejecting repeated alias draws (one hash a draw:
    :func:`_alias_pick`; finishing with exponential keys if the rejections drag on).  With
    replacement the draws equal :func:`alias_draw`'s.  Per-row helpers are inlined by
    numba (``kernel(inline=True)``), and the whole rows' path is written out: a compiled
    call per row is slow on such rows (benchmarks/TUNING.md).
    """
    n = rows.shape[0]
    keyv0 = np.empty(0, dtype=np.float64)
    for ch in prange((n + _ROWS - 1) // _ROWS):
        lo = ch * _ROWS
        hi = min(n, lo + _ROWS)
        for i in range(lo, hi):
            prefetch(indptr, rows[i])
        if replace:
            _with_replacement(indptr, indices, eids, rec, invw, rows, keys, offsets, lo, hi, k,
                              seed, salt, out_src, out_eid)
            _gather(indices, eids, rec, offsets[lo], offsets[hi], out_src, out_eid)
            continue
        keyv = keyv0
        lists = np.empty(_LIST, dtype=np.int64)
        _classify(indptr, indices, eids, nnz, rows, offsets, lo, hi, k, lists, out_eid)
        _first_draws(indptr, invw, rows, keys, offsets, lists, seed, salt, rec, eids, out_src)
        for q in range(lists[_CNT + _WHOLE]):  # rows taken whole that have zero weights
            i = lists[_WHOLE * _ROWS + q]
            start = indptr[rows[i]]
            o = offsets[i]
            _whole(indices, eids, invw, start, indptr[rows[i] + 1] - start, o,
                   offsets[i + 1] - o, out_eid)
        packed = lists[_CNT + 4:_CNT + 4 + SCRATCH]
        k32 = lists[_CNT + 4 + SCRATCH:].view(np.float32)  # SCRATCH float32 entries
        for q in range(lists[_CNT + _KEYS]):
            i = lists[_KEYS * _ROWS + q]
            start = indptr[rows[i]]
            d = indptr[rows[i] + 1] - start
            o = offsets[i]
            c = offsets[i + 1] - o
            st = item_state(seed, salt, keys[i])
            if d <= DENSE_MAX:
                dense_pick(invw, start, d, out_eid, o, c, st, k32, packed)
            else:
                keyv = at_least(keyv, d + 16)
                keys_select(invw, start, d, out_eid, o, 0, c, st, 1 << 41, keyv)
            _from_indices(out_eid, o, c, start, indices, eids)
        for q in range(lists[_CNT + _REJECT]):
            i = lists[_REJECT * _ROWS + q]
            start = indptr[rows[i]]
            d = indptr[rows[i] + 1] - start
            o = offsets[i]
            c = offsets[i + 1] - o
            st = item_state(seed, salt, keys[i])
            t = _reject_repeats(rec, indices, eids, start, d, o, c, st, out_src, out_eid)
            if t == c:
                continue
            for j in range(o, o + t):  # back to row positions for the keys
                out_eid[j] = -out_eid[j] - 1 - start
            keyv = at_least(keyv, d + 16)
            keys_select(invw, start, d, out_eid, o, t, c, st, 1 << 40, keyv)
            _from_indices(out_eid, o, c, start, indices, eids)
        _gather(indices, eids, rec, offsets[lo], offsets[hi], out_src, out_eid)
