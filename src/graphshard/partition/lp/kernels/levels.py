"""Numba kernels that build the levels of the label-propagation pipeline: degrees of the
edge chunks, bucketing entries by shard, grouping a shard's rows (repeats merged),
contraction through a clustering, and the weight histogram and heavy-edge selection of
the thinned coarsest level.  Pure functions on one edge chunk or one shard's arrays (see
:mod:`graphshard.partition.lp.kernels.sweep` for the shard layout); the label-propagation
sweeps are in :mod:`graphshard.partition.lp.kernels.sweep`.
"""

from __future__ import annotations

import numpy as np

from ...._util.jit import kernel
from ...._util.keyed import keyed_hash
from ...._util.prefetch import prefetch

__all__ = ["accumulate_degrees", "bucket_entries", "contract_entries", "group_keys",
           "keep_heavy", "sort_rows", "weight_histogram"]


@kernel
def accumulate_degrees(deg, indeg, u, v):  # pragma: no cover - compiled
    """Add one to ``deg[u[i]]`` and ``deg[v[i]]`` for every non-loop edge, and to
    ``indeg[v[i]]`` for every edge (loops too: the edges a node's owner stores), in place."""
    for i in range(u.shape[0]):
        indeg[v[i]] += 1
        if u[i] != v[i]:
            deg[u[i]] += 1
            deg[v[i]] += 1


@kernel
def _scan_cuts(sizes, budget, out):  # pragma: no cover - compiled
    """Rows where :func:`range_cuts` starts a range, written to ``out[1:]`` when ``out``
    has room (an empty ``out``: only counted); returns how many."""
    count = 0
    before = 0
    group = 0
    for i in range(sizes.shape[0]):
        g = before // budget
        if i > 0 and g != group:
            if out.shape[0] > 0:
                out[count + 1] = i
            count += 1
        group = g
        before += sizes[i]
    return count


@kernel
def range_cuts(sizes, budget):  # pragma: no cover - compiled
    """Where rows of ``sizes`` entries start a new range of ``budget`` entries: row ``i``
    belongs to range ``(entries before it) // budget``; returns ``[0, cuts..., n]``
    (counted, then written: nothing per row, where a per-node prefix sum cost the
    driver 24 bytes a node)."""
    count = _scan_cuts(sizes, budget, np.empty(0, dtype=np.int64))
    out = np.empty(count + 2, dtype=np.int64)
    out[0] = 0
    out[count + 1] = sizes.shape[0]
    _scan_cuts(sizes, budget, out)
    return out


@kernel
def group_keys(keys, lo, num_nodes, weights, num_rows, marker, out_c, out_w
               ):  # pragma: no cover - compiled
    """Entries ``keys[i] = row * num_nodes + col`` (rows ``lo .. lo + num_rows``) of
    weight ``weights[i]`` (an empty ``weights``: 1 each) as a CSR with repeats merged.

    A counting sort by row (stable), then one pass per row that merges repeated columns
    (summing weights) with a per-column marker: O(entries + rows), no comparison sort.
    Inside a row, columns keep the order of their first appearance.  Rows and columns
    are decoded from the keys in the passes (no per-entry row and column arrays).

    Args:
        marker: zeros, one per column (int32 when the entries fit), left zero: each row
            clears the columns it marked, so callers keep one for every call (a fresh
            per-column array cost a fifth of the call in page faults).
        out_c, out_w: buffers of ``len(keys)`` for the columns and merged weights, of
            types that hold ``num_nodes - 1`` and the weights' sum.

    Returns:
        ``(indptr, count)``: int64 ``num_rows + 1``, and the merged entries, which are
        ``out_c[:count]`` and ``out_w[:count]``.
    """
    m = keys.shape[0]
    unit = weights.shape[0] == 0
    indptr = np.zeros(num_rows + 1, dtype=np.int64)
    for i in range(m):
        indptr[keys[i] // num_nodes - lo + 1] += 1
    for r in range(num_rows):
        indptr[r + 1] += indptr[r]
    pos = indptr[:-1].copy()
    for i in range(m):
        row = keys[i] // num_nodes
        p = pos[row - lo]
        out_c[p] = keys[i] - row * num_nodes
        out_w[p] = 1 if unit else weights[i]
        pos[row - lo] = p + 1
    j = 0
    start = 0
    for r in range(num_rows):
        first = j
        for p in range(start, indptr[r + 1]):  # j <= p: merging in place is safe
            c = out_c[p]
            slot = marker[c] - 1  # marker: 1 + the row's entry holding column c
            if slot >= 0:
                out_w[slot] += out_w[p]
            else:
                marker[c] = j + 1
                out_c[j] = c
                out_w[j] = out_w[p]
                j += 1
        for p in range(first, j):
            marker[out_c[p]] = 0
        start = indptr[r + 1]
        indptr[r + 1] = j
    return indptr, j


@kernel
def bucket_entries(rows, cols, weights, num_nodes, bounds):  # pragma: no cover - compiled
    """Entries ``(rows[i], cols[i], weights[i])`` as keys ``row * num_nodes + col``,
    grouped by the range of ``bounds`` that holds their row (a stable counting sort over
    the ranges: O(entries + ranges), whatever the node count).  An empty ``weights``
    stands for unit weights, and gives empty weights back.

    Returns:
        ``(keys, weights, offsets)``: int64; range ``b``'s entries are
        ``offsets[b] .. offsets[b + 1]``, in their input order.
    """
    m = rows.shape[0]
    nb = bounds.shape[0] - 1
    shift, table = _range_table(bounds)
    off = np.zeros(nb + 1, dtype=np.int64)
    for i in range(m):
        off[_range_of(rows[i], bounds, shift, table) + 1] += 1
    for b in range(nb):
        off[b + 1] += off[b]
    pos = off[:-1].copy()
    keys = np.empty(m, dtype=np.int64)
    weighted = weights.shape[0] > 0
    out_w = np.empty(m if weighted else 0, dtype=np.int64)
    for i in range(m):
        b = _range_of(rows[i], bounds, shift, table)
        p = pos[b]
        keys[p] = rows[i] * num_nodes + cols[i]
        if weighted:
            out_w[p] = weights[i]
        pos[b] = p + 1
    return keys, out_w, off


@kernel
def _range_table(bounds):  # pragma: no cover - compiled
    """``(shift, table)``: ``table[k]`` is the range of ``bounds`` holding row
    ``k << shift``, for at most 65536 blocks of rows (it stays in the L1 cache)."""
    n = bounds[bounds.shape[0] - 1]
    shift = 0
    while (n >> shift) >= 65536:
        shift += 1
    table = np.empty((n >> shift) + 1, dtype=np.int64)
    b = 0
    for k in range(table.shape[0]):
        while b + 2 < bounds.shape[0] and bounds[b + 1] <= (k << shift):
            b += 1
        table[k] = b
    return shift, table


@kernel
def _range_of(row, bounds, shift, table):  # pragma: no cover - compiled
    """The range of ``bounds`` holding ``row < bounds[-1]``: the table's guess for its
    block, then the few range ends inside the block (a binary search per entry, branches
    a predictor misses, took two thirds of :func:`bucket_entries`)."""
    b = table[row >> shift]
    while row >= bounds[b + 1]:
        b += 1
    return b


@kernel
def contract_entries(indptr, indices, weights, lo, clusters, num_coarse, bounds
                     ):  # pragma: no cover - compiled
    """A shard's entries mapped through ``clusters`` (fine -> coarse node), entries inside
    a cluster dropped, as :func:`bucket_entries` returns them (keys
    ``coarse row * num_coarse + coarse col``, bucketed by the coarse row's range of
    ``bounds``): one fused pass, no per-entry temporaries.  The weights keep the type of
    ``weights`` (a piece is a copy of fine entries; the shard task sums them)."""
    num_rows = indptr.shape[0] - 1
    nb = bounds.shape[0] - 1
    m = indptr[num_rows] - indptr[0]
    cols = np.empty(m, dtype=np.int64)
    off = np.zeros(nb + 1, dtype=np.int64)
    row_bucket = np.empty(num_rows, dtype=np.int64)
    for r in range(num_rows):
        cu = clusters[lo + r]
        b = np.searchsorted(bounds, cu, side="right") - 1
        row_bucket[r] = b
        for j in range(indptr[r], indptr[r + 1]):
            if j + 32 < indptr[num_rows]:  # the cluster of an entry ahead (-22% a shard)
                prefetch(clusters, indices[j + 32])
            cv = clusters[indices[j]]
            if cv == cu:
                cols[j - indptr[0]] = -1
            else:
                cols[j - indptr[0]] = cv
                off[b + 1] += 1
    for b in range(nb):
        off[b + 1] += off[b]
    pos = off[:-1].copy()
    keys = np.empty(off[nb], dtype=np.int64)
    out_w = np.empty(off[nb], dtype=weights.dtype)
    for r in range(num_rows):
        b = row_bucket[r]
        base = np.int64(clusters[lo + r]) * num_coarse
        p = pos[b]
        for j in range(indptr[r], indptr[r + 1]):
            cv = cols[j - indptr[0]]
            if cv >= 0:
                keys[p] = base + cv
                out_w[p] = weights[j]
                p += 1
        pos[b] = p
    return keys, out_w, off


@kernel
def _log2_bucket(w):  # pragma: no cover - compiled
    b = 0
    while w > 1 and b < 62:
        w >>= 1
        b += 1
    return b


@kernel
def weight_histogram(weights):  # pragma: no cover - compiled
    """Entries per ``floor(log2(weight))`` bucket (64 buckets; weights are >= 1)."""
    hist = np.zeros(64, dtype=np.int64)
    for j in range(weights.shape[0]):
        hist[_log2_bucket(weights[j])] += 1
    return hist


@kernel
def sort_rows(indptr, indices, weights):  # pragma: no cover - compiled
    """Sort every row of a CSR by column, in place (``weights`` follow): the cost of one
    sort per row, with no per-entry key or permutation array over the whole graph."""
    for r in range(indptr.shape[0] - 1):
        lo, hi = indptr[r], indptr[r + 1]
        if hi - lo > 1:
            order = np.argsort(indices[lo:hi], kind="mergesort")
            indices[lo:hi] = indices[lo:hi][order]
            weights[lo:hi] = weights[lo:hi][order]


@kernel
def keep_heavy(indptr, indices, weights, lo, bucket, threshold, seed
               ):  # pragma: no cover - compiled
    """Entries of a shard kept by :func:`~graphshard.partition.lp.shards.gather`'s thinning:
    all above weight bucket ``bucket``, and those in it whose keyed hash of the unordered
    pair is below ``threshold`` (both directions of an edge share the decision).

    Returns:
        ``(rows, cols, weights)`` of the kept entries (global IDs).
    """
    num_rows = indptr.shape[0] - 1
    m = 0
    for r in range(num_rows):
        for j in range(indptr[r], indptr[r + 1]):
            m += _log2_bucket(weights[j]) >= bucket
    rows = np.empty(m, dtype=np.int64)
    cols = np.empty(m, dtype=np.int64)
    wts = np.empty(m, dtype=np.int64)
    i = 0
    for r in range(num_rows):
        u = lo + r
        for j in range(indptr[r], indptr[r + 1]):
            b = _log2_bucket(weights[j])
            if b < bucket:
                continue
            v = indices[j]
            if b == bucket and keyed_hash(seed, min(u, v), max(u, v)) >= threshold:
                continue
            rows[i] = u
            cols[i] = v
            wts[i] = weights[j]
            i += 1
    return rows[:i].copy(), cols[:i].copy(), wts[:i].copy()
