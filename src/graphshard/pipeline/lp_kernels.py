"""Numba kernels of the label-propagation pipeline: pure functions on one shard's arrays.

A *shard* is a CSR slice of an undirected weighted graph: rows are the nodes
``lo .. lo + len(indptr) - 2`` (global IDs), ``indices`` are global neighbour IDs and
``weights`` the edge weights.  Every kernel here touches one shard (or one edge chunk) plus
per-node arrays, so its edge memory is bounded by the shard, never by the graph.

Randomness is keyed (STYLE §8): :func:`graphshard._keyed.keyed_hash` mixes
``(seed, item, step)``, so the order of visits and every tie-break are the same on any
thread or worker count.
"""

from __future__ import annotations

import numpy as np

from .._jit import kernel
from .._keyed import GOLDEN, keyed_hash, mix

__all__ = ["accumulate_degrees", "favourite_labels", "group_rows", "keep_heavy", "lp_sweep",
           "shard_cut", "sort_rows", "weight_histogram"]

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
def group_rows(rows, cols, weights, num_rows, num_cols):  # pragma: no cover - compiled
    """Entries ``(rows[i], cols[i], weights[i])`` as a CSR with repeats merged.

    A counting sort by row (stable), then one pass per row that merges repeated columns
    (summing weights) with a per-column marker: O(entries + rows + cols), no comparison
    sort.  Inside a row, columns keep the order of their first appearance.

    Returns:
        ``(indptr, indices, weights)``: int64, ``num_rows + 1`` and the merged entries.
    """
    m = rows.shape[0]
    indptr = np.zeros(num_rows + 1, dtype=np.int64)
    for i in range(m):
        indptr[rows[i] + 1] += 1
    for r in range(num_rows):
        indptr[r + 1] += indptr[r]
    pos = indptr[:-1].copy()
    out_c = np.empty(m, dtype=np.int64)
    out_w = np.empty(m, dtype=np.int64)
    for i in range(m):
        p = pos[rows[i]]
        out_c[p] = cols[i]
        out_w[p] = weights[i]
        pos[rows[i]] = p + 1
    marker = np.full(num_cols, -1, dtype=np.int64)
    j = 0
    start = 0
    for r in range(num_rows):
        first = j
        for p in range(start, indptr[r + 1]):  # j <= p: merging in place is safe
            c = out_c[p]
            slot = marker[c]
            if slot >= first:
                out_w[slot] += out_w[p]
            else:
                marker[c] = j
                out_c[j] = c
                out_w[j] = out_w[p]
                j += 1
        start = indptr[r + 1]
        indptr[r + 1] = j
    return indptr, out_c[:j].copy(), out_w[:j].copy()


@kernel
def _visit_order(lo, num_rows, seed, step, sub, num_sub):  # pragma: no cover - compiled
    """Rows active in sub-round ``sub`` of ``num_sub``, in a keyed random order.

    Only the active rows are sorted (a sub-round costs its share of the rows).
    """
    keys = np.empty(num_rows, dtype=np.uint64)
    rows = np.empty(num_rows, dtype=np.int64)
    m = 0
    for r in range(num_rows):
        h = keyed_hash(seed, lo + r, step)
        if (h >> np.uint64(40)) % np.uint64(num_sub) == np.uint64(sub):
            keys[m] = h
            rows[m] = r
            m += 1
    return rows[:m][np.argsort(keys[:m])]


@kernel
def lp_sweep(indptr, indices, weights, lo, labels, node_w, label_w, max_w, seed, step,
             sub, num_sub, strict, norm):  # pragma: no cover - compiled
    """One size-constrained label-propagation sweep over the active rows of a shard.

    Each active row (keyed random order) moves to the label with the heaviest connection
    among those whose weight stays ``<= max_w``; ties break by a keyed hash.  With
    ``strict`` a row moves only when the connection strictly grows (refinement); without,
    it may also move on a tie (clustering).  With ``norm > 0`` labels are scored by
    ``connection / weight ** norm`` (after the move), which favours tight small clusters
    over hubs' big ones.  Labels and label weights of this shard's own
    rows are updated live; other rows' labels come from the snapshot ``labels``.

    Args:
        indptr, indices, weights: the shard's CSR (int64; ``indices`` global).
        lo: global ID of the shard's first row.
        labels: int64 snapshot of every node's label (read only).
        node_w: int64 ``(n, C)`` weights of every node, one column per constraint.
        label_w: int64 ``(L, C)`` snapshot weights of every label (read only).
        max_w: int64 ``(C,)`` limit of a label's weight in each column.

    Returns:
        ``(new_labels, gains)``: int64 per row of the shard; ``gains`` is the connection
        gained by the move (0 for rows that stay).
    """
    num_rows = indptr.shape[0] - 1
    num_labels = label_w.shape[0]
    ncon = max_w.shape[0]
    new = labels[lo:lo + num_rows].copy()
    gains = np.zeros(num_rows, dtype=np.int64)
    lw = label_w.copy()  # live label weights
    rating = np.zeros(num_labels, dtype=np.int64)
    max_deg = 0
    for r in range(num_rows):
        max_deg = max(max_deg, indptr[r + 1] - indptr[r])
    touched = np.empty(max_deg, dtype=np.int64)
    for r in _visit_order(lo, num_rows, seed, step, sub, num_sub):
        start, end = indptr[r], indptr[r + 1]
        cur = new[r]
        u = lo + r
        wu = node_w[u, 0]
        nt = 0
        for j in range(start, end):
            v = indices[j]
            lv = new[v - lo] if lo <= v < lo + num_rows else labels[v]
            if rating[lv] == 0:
                touched[nt] = lv
                nt += 1
            rating[lv] += weights[j]
        own = rating[cur]
        best, best_r = cur, own
        best_s = own / lw[cur, 0] ** norm if norm > 0 else float(own)
        key = keyed_hash(seed, u, step)
        best_h = mix(key ^ (np.uint64(cur) * GOLDEN))
        for t in range(nt):
            c = touched[t]
            if c == cur:
                continue
            rc = rating[c]
            if strict and rc <= own:
                continue
            fits = True
            for q in range(ncon):
                fits &= lw[c, q] + node_w[u, q] <= max_w[q]
            if not fits:
                continue
            sc = rc / (lw[c, 0] + wu) ** norm if norm > 0 else float(rc)
            if sc < best_s:
                continue
            h = mix(key ^ (np.uint64(c) * GOLDEN))
            if sc > best_s or h > best_h:
                best, best_r, best_s, best_h = c, rc, sc, h
        for t in range(nt):
            rating[touched[t]] = 0
        if best != cur:
            for q in range(ncon):
                lw[cur, q] -= node_w[u, q]
                lw[best, q] += node_w[u, q]
            new[r] = best
            gains[r] = best_r - own
    return new, gains


@kernel
def favourite_labels(indptr, indices, weights, lo, labels, num_labels
                     ):  # pragma: no cover - compiled
    """Per row of the shard, the label it is most connected to (ties: the smallest
    label), whatever its weight; -1 for a row without edges."""
    num_rows = indptr.shape[0] - 1
    out = np.full(num_rows, -1, dtype=np.int64)
    rating = np.zeros(num_labels, dtype=np.int64)
    for r in range(num_rows):
        best, best_r = -1, 0
        for j in range(indptr[r], indptr[r + 1]):
            rating[labels[indices[j]]] += weights[j]
        for j in range(indptr[r], indptr[r + 1]):
            lv = labels[indices[j]]
            rv = rating[lv]
            if rv > best_r or (rv == best_r and lv < best):
                best, best_r = lv, rv
        for j in range(indptr[r], indptr[r + 1]):
            rating[labels[indices[j]]] = 0
        out[r] = best
    return out


@kernel
def shard_cut(indptr, indices, weights, lo, labels):  # pragma: no cover - compiled
    """Sum of weights of the shard's entries whose endpoints carry different labels."""
    cut = 0
    for r in range(indptr.shape[0] - 1):
        lu = labels[lo + r]
        for j in range(indptr[r], indptr[r + 1]):
            if labels[indices[j]] != lu:
                cut += weights[j]
    return cut


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
    """Entries of a shard kept by :func:`~graphshard.pipeline.lp_shards.gather`'s thinning:
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
