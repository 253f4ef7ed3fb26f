"""Numba kernels of the label-propagation sweeps: pure functions on one shard's arrays.

A *shard* is a CSR slice of an undirected weighted graph: rows are the nodes
``lo .. lo + len(indptr) - 2`` (global IDs), ``indices`` are global neighbour IDs and
``weights`` the edge weights.  Every kernel here touches one shard (or one edge chunk) plus
per-node arrays, so its edge memory is bounded by the shard, never by the graph.

Randomness is keyed (STYLE §8): :func:`graphshard._util.keyed.keyed_hash` mixes
``(seed, item, step)``, so the order of visits and every tie-break are the same on any
thread or worker count.  The kernels that build the levels are in
:mod:`graphshard.partition.lp.kernels.levels`.
"""

from __future__ import annotations

import numpy as np

from ...._util.jit import kernel
from ...._util.keyed import GOLDEN, keyed_hash, mix
from ...._util.prefetch import prefetch

__all__ = ["favourite_labels", "lp_sweep", "shard_cut"]


#: label arrays of at least this many labels (clustering: one per node) get their lines
#: prefetched a row ahead in :func:`lp_sweep`; smaller ones stay in cache anyway, where
#: the extra prefetches only cost (benchmarks/TUNING.md)
FAR_LABELS = 1 << 18

#: rows are visited in blocks of this many consecutive node IDs (see :func:`_visit_order`)
VISIT_BLOCK = 64

#: with far labels, rows of at most this many entries are rated in a small hash table
#: that stays in cache (:func:`_rate_in_table`) instead of the per-label ``rating`` array:
#: the same moves, fewer cache misses (benchmarks/TUNING.md)
TABLE_ROW = 1024


@kernel(inline=True)
def _rate_in_table(indices, weights, start, end, live, cur, tkey, tval, shift, labels_out,
                   ratings_out):  # pragma: no cover - compiled
    """Sum the weights of entries ``start .. end`` per label of their column (``live``)
    in the open-addressing table ``tkey`` / ``tval`` (keys -1 when empty, left so), and
    write the labels and their sums to ``labels_out`` / ``ratings_out``; returns their
    count, the total weight and the sum of label ``cur``."""
    mask = tkey.shape[0] - 1
    nt = 0
    total = 0
    for j in range(start, end):
        lv = live[indices[j]]
        s = np.int64((np.uint64(lv) * GOLDEN) >> shift)
        while True:
            k = tkey[s]
            if k == lv:
                tval[s] += weights[j]
                break
            if k < 0:
                tkey[s] = lv
                tval[s] = weights[j]
                labels_out[nt] = s  # the slot, for now
                nt += 1
                break
            s = (s + 1) & mask
        total += weights[j]
    own = 0
    for t in range(nt):
        s = labels_out[t]
        labels_out[t] = tkey[s]
        ratings_out[t] = tval[s]
        if tkey[s] == cur:
            own = tval[s]
        tkey[s] = -1
    return nt, total, own


@kernel(inline=True)
def _copy_flat(dst, src):  # pragma: no cover - compiled
    """``dst[...] = src`` for C-contiguous ``dst`` of ``src``'s shape, element by element."""
    out = dst.reshape(-1)
    inp = np.ascontiguousarray(src).reshape(-1)
    for i in range(out.shape[0]):
        out[i] = inp[i]


@kernel
def _visit_order(lo, num_rows, seed, step, sub, num_sub):  # pragma: no cover - compiled
    """Rows active in sub-round ``sub`` of ``num_sub``, in a keyed random order of blocks
    of :data:`VISIT_BLOCK` consecutive node IDs, each block's rows in a keyed random order
    (ties of the 24-bit row keys: ascending rows).

    A row's neighbours sit next to those of the rows visited just before it, so a sweep
    reads its shard in runs (faster than a random order over the whole shard, the cut no
    worse: benchmarks/TUNING.md).  Only the blocks are sorted, and each block's few rows
    by insertion (a sub-round costs its share of the rows, not a sort of all active
    rows); blocks are of global IDs, so the order does not
    depend on where a shard starts.
    """
    rows = np.empty(num_rows, dtype=np.int64)
    row_key = np.empty(num_rows, dtype=np.uint64)
    first = np.empty(num_rows + 1, dtype=np.int64)  # start of each block's active rows
    block_key = np.empty(num_rows, dtype=np.uint64)
    low = np.uint64((1 << 24) - 1)
    m = 0
    nb = 0
    block = -1
    for r in range(num_rows):
        h = keyed_hash(seed, lo + r, step)
        if (h >> np.uint64(40)) % np.uint64(num_sub) == np.uint64(sub):
            b = (lo + r) // VISIT_BLOCK
            if b != block:
                block = b
                block_key[nb] = keyed_hash(seed, b, step ^ 0x5EED) & ~low
                first[nb] = m
                nb += 1
            row_key[m] = h & low
            rows[m] = r
            m += 1
    first[nb] = m
    out = np.empty(m, dtype=np.int64)
    out_key = np.empty(m, dtype=np.uint64)
    t = 0
    for bi in np.argsort(block_key[:nb], kind="mergesort"):
        s, e = first[bi], first[bi + 1]
        for i in range(s, e):  # insertion sort of the block's rows by key (stable)
            x, kx = rows[i], row_key[i]
            q = t + i - s
            while q > t and out_key[q - 1] > kx:
                out[q] = out[q - 1]
                out_key[q] = out_key[q - 1]
                q -= 1
            out[q] = x
            out_key[q] = kx
        t += e - s
    return out


@kernel(inline=True)
def _prefetch_ahead(order, i, m, indptr, indices, weights, live, rating, lwf, ncon, far,
                    table_row):  # pragma: no cover - compiled
    """Prefetch for the rows ahead of visit ``i``: the CSR lines three rows ahead, the
    labels of the neighbours two rows ahead, their ratings and weights one row ahead, so
    that the random reads of a row are in flight while the row before is rated."""
    if i + 3 < m:
        r3 = order[i + 3]
        for j in range(indptr[r3], min(indptr[r3 + 1], indptr[r3] + 64), 8):
            prefetch(indices, j)
            prefetch(weights, j)
    if i + 2 < m:
        r2 = order[i + 2]
        for j in range(indptr[r2], indptr[r2 + 1]):
            prefetch(live, indices[j])
    if far and i + 1 < m:
        r1 = order[i + 1]
        in_table = indptr[r1 + 1] - indptr[r1] <= table_row
        for j in range(indptr[r1], indptr[r1 + 1]):
            lv1 = live[indices[j]]
            if not in_table:
                prefetch(rating, lv1)
            prefetch(lwf, lv1 * ncon)


@kernel(inline=True)
def _rate_in_array(indices, weights, start, end, live, cur, rating, labels_out, ratings_out
                   ):  # pragma: no cover - compiled
    """Rate the labels of row entries ``start .. end`` in the per-label array ``rating``
    (left zeroed): ``(count, total, own)``, the distinct labels and their ratings in
    ``labels_out`` / ``ratings_out[:count]``, the row's weight and its rating of ``cur``."""
    nt = 0
    total = 0
    for j in range(start, end):
        lv = live[indices[j]]
        if rating[lv] == 0:
            labels_out[nt] = lv
            nt += 1
        rating[lv] += weights[j]
        total += weights[j]
    own = rating[cur]
    for t in range(nt):
        ratings_out[t] = rating[labels_out[t]]
        rating[labels_out[t]] = 0
    return nt, total, own


@kernel(inline=True)
def _best_label(u, cur, own, nt, touched, touched_r, lw, node_w, max_w, strict, norm, key
                ):  # pragma: no cover - compiled
    """``(label, rating)`` row ``u`` moves to among the ``nt`` rated labels (``cur`` and
    ``own`` when it stays): the best score whose weight stays within ``max_w``, ties by
    the keyed hash of ``key`` and the label (see :func:`lp_sweep`)."""
    ncon = max_w.shape[0]
    wu = node_w[u, 0]
    best, best_r = cur, own
    best_s = own / lw[cur, 0] ** norm if norm > 0 else float(own)
    best_h = mix(key ^ (np.uint64(cur) * GOLDEN))
    for t in range(nt):
        c = touched[t]
        if c == cur:
            continue
        rc = touched_r[t]
        if (strict and rc <= own) or (norm == 0 and rc < best_r):
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
    return best, best_r


@kernel
def lp_sweep(indptr, indices, weights, lo, labels, node_w, label_w, max_w, seed, step,
             sub, num_sub, strict, norm, live, lw, rating, max_row=0, table_row=TABLE_ROW,
             fresh=True):  # pragma: no cover - compiled
    """One size-constrained label-propagation sweep over the active rows of a shard.

    Each active row (keyed random order) moves to the label with the heaviest connection
    among those whose weight stays ``<= max_w``; ties break by a keyed hash.  With
    ``strict`` a row moves only when the connection strictly grows (refinement); without,
    it may also move on a tie (clustering).  With ``norm > 0`` labels are scored by
    ``connection / weight ** norm`` (after the move), which favours tight small clusters
    over hubs' big ones.  Labels and label weights of this shard's own
    rows are updated live; other rows' labels come from the snapshot ``labels``.

    Args:
        indptr, indices, weights: the shard's CSR (``indices`` global; int32 or int64).
        lo: global ID of the shard's first row.
        labels: int64 snapshot of every node's label (read only).
        node_w: int64 ``(n, C)`` weights of every node, one column per constraint.
        label_w: int64 ``(L, C)`` snapshot weights of every label (read only).
        max_w: int64 ``(C,)`` limit of a label's weight in each column.
        live, lw, rating: scratch of the shapes and dtypes of ``labels``, ``label_w`` and
            ``(L,)`` int64; ``rating`` must be zero, and is left zero (callers reuse
            them: fresh per-node arrays at every task cost page faults; benchmarks/TUNING.md).
            ``live`` and ``lw`` are left equal to ``labels`` and
            ``label_w`` (the changes are undone at the end).
        max_row: rows with more entries stay where they are (0: no limit).  Clustering
            leaves the hubs of a power-law graph alone: a few rows hold most entries
            (benchmarks/TUNING.md), and the leaves still join the hubs.
        table_row: with at least :data:`FAR_LABELS` labels, rows of at most this many
            entries are rated in a small hash table (:data:`TABLE_ROW`; 0: none).
        fresh: copy ``labels`` and ``label_w`` into ``live`` and ``lw`` first; False when
            they already hold them (a task after another of the same snapshot: at 8M
            nodes the copies took a quarter of a clustering task).

    Returns:
        ``(new_labels, gains, external)``: int64 per row of the shard; ``gains`` is the
        connection gained by the move (0 for rows that stay); ``external`` sums the
        visited rows' weight to other labels, as each row was visited (when every row is
        visited once, as in refinement, about twice the cut).
    """
    num_rows = indptr.shape[0] - 1
    ncon = max_w.shape[0]
    # the shard's own rows and the label weights change live, in scratch copies of the
    # snapshot (unless they hold it already), copied as flat loops (numba's 2-D slice
    # assignment is slower: benchmarks/TUNING.md)
    if fresh:
        _copy_flat(live, labels)
        _copy_flat(lw, label_w)
    gains = np.zeros(num_rows, dtype=np.int64)
    dirty = np.empty(2 * num_rows, dtype=np.int64)  # labels whose weight changed
    nd = 0
    max_deg = 0
    for r in range(num_rows):
        max_deg = max(max_deg, indptr[r + 1] - indptr[r])
    touched = np.empty(max_deg, dtype=np.int64)
    touched_r = np.empty(max_deg, dtype=np.int64)  # their ratings
    lwf = lw.reshape(-1)
    far = rating.shape[0] >= FAR_LABELS  # label arrays beyond the caches: prefetch them too
    tbits = 1
    while far and (1 << tbits) < 2 * min(max_deg, table_row):
        tbits += 1
    tkey = np.full(1 << tbits, -1, dtype=np.int64)
    tval = np.zeros(1 << tbits, dtype=np.int64)
    shift = np.uint64(64 - tbits)
    order = _visit_order(lo, num_rows, seed, step, sub, num_sub)
    m = 0  # rows without entries have nowhere to go (half of R-MAT's): not visited
    for i in range(order.shape[0]):
        d = indptr[order[i] + 1] - indptr[order[i]]
        if d > 0 and (max_row <= 0 or d <= max_row):
            order[m] = order[i]
            m += 1
    external = 0
    for i in range(m):
        _prefetch_ahead(order, i, m, indptr, indices, weights, live, rating, lwf, ncon, far,
                        table_row)
        r = order[i]
        start, end = indptr[r], indptr[r + 1]
        u = lo + r
        cur = live[u]
        if far and end - start <= table_row:
            nt, total, own = _rate_in_table(indices, weights, start, end, live, cur, tkey,
                                            tval, shift, touched, touched_r)
        else:
            nt, total, own = _rate_in_array(indices, weights, start, end, live, cur, rating,
                                            touched, touched_r)
        external += total - own
        best, best_r = _best_label(u, cur, own, nt, touched, touched_r, lw, node_w, max_w,
                                   strict, norm, keyed_hash(seed, u, step))
        if best != cur:
            for q in range(ncon):
                lw[cur, q] -= node_w[u, q]
                lw[best, q] += node_w[u, q]
            dirty[nd] = cur
            dirty[nd + 1] = best
            nd += 2
            live[u] = best
            gains[r] = best_r - own
    new = live[lo:lo + num_rows].copy()
    for r in range(num_rows):  # undo: the scratch holds the snapshot again
        live[lo + r] = labels[lo + r]
    for t in range(nd):
        for q in range(ncon):
            lw[dirty[t], q] = label_w[dirty[t], q]
    return new, gains, external


@kernel
def favourite_labels(indptr, indices, weights, lo, labels, rating, wanted
                     ):  # pragma: no cover - compiled
    """Per row of the shard, the label it is most connected to (ties: the smallest
    label), whatever its weight; -1 for a row without edges or not ``wanted`` (a bool
    per node: rows left out cost nothing).  ``rating``: zeroed int64 scratch, one per
    label, left zeroed."""
    num_rows = indptr.shape[0] - 1
    out = np.full(num_rows, -1, dtype=np.int64)
    for r in range(num_rows):
        if not wanted[lo + r]:
            continue
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
