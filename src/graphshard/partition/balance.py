"""Part weights within the balance bound: commit moves with reverts, rebalance by gain.

Shared by the in-memory partition methods (:func:`enforce_balance` repairs an assignment
that a backend returned above its bound, as METIS k-way does at large k) and by the
label-propagation pipeline, which runs :func:`rebalance_candidates` shard by shard.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable

import numpy as np

from .._util.jit import kernel
from .._util.keyed import keyed_hash
from ..errors import ValidationError
from ..typing import IdArray
from .adjacency import Adjacency
from .balance_swaps import room_weights, swap_to_balance


def max_part_weight(total_weight: int, num_parts: int, imbalance: float) -> int:
    """Heaviest part allowed: ``floor((1 + imbalance) * total / num_parts)``, at least ``ceil``.

    Example:
        >>> max_part_weight(15606, 2, 0.05)
        8193
    """
    bound = math.floor((1.0 + imbalance) * total_weight / num_parts + 1e-9)
    return max(bound, -(-total_weight // num_parts))

__all__ = ["commit_moves", "counting_order", "enforce_balance", "group_prefix",
           "max_part_weight", "needed_moves", "rebalance_candidates", "rebalance_loop",
           "unmet_balance", "weight_sums"]

log = logging.getLogger(__name__)

#: :func:`rebalance_loop` stops after a round that keeps more than this share of the
#: excess in every column
STALL = 0.99


def weight_sums(labels: IdArray, weights: IdArray, size: int) -> IdArray:
    """Sum of ``weights`` per label, int64: ``(size,)`` for 1-D weights, ``(size, C)`` for
    ``(n, C)`` weights (one column per balance constraint).  Integer weights are summed
    exactly in one pass, without float copies of the columns (``np.bincount``'s were slow
    at millions of nodes: benchmarks/TUNING.md).

    Raises:
        ValidationError: ``labels`` and ``weights`` differ in length, or a label is outside
            ``[0, size)``.

    Example:
        >>> weight_sums(np.array([1, 0, 1]), np.array([[1, 5], [1, 6], [1, 7]]), 3).tolist()
        [[1, 6], [2, 12], [0, 0]]
    """
    labels = np.asarray(labels)
    weights = np.asarray(weights)
    if len(labels) != len(weights):
        raise ValidationError(f"weight_sums: {len(labels)} labels but {len(weights)} weights",
                              field="weights")
    if len(labels) and (int(labels.min()) < 0 or int(labels.max()) >= size):
        raise ValidationError(f"weight_sums: labels must be in [0, {size}), found "
                              f"{int(labels.min())}..{int(labels.max())}", field="labels")
    if weights.dtype.kind not in "iub" or labels.dtype.kind not in "iu":
        if weights.ndim == 1:
            return np.bincount(labels, weights=weights, minlength=size).astype(np.int64)
        return np.stack([np.bincount(labels, weights=weights[:, c], minlength=size)
                         for c in range(weights.shape[1])], axis=1).astype(np.int64)
    columns = 1 if weights.ndim == 1 else weights.shape[1]
    out = np.zeros((size, columns), dtype=np.int64)
    _add_rows(out, labels, weights.reshape(len(weights), columns).view(
        np.uint8 if weights.dtype == np.bool_ else weights.dtype))
    return out[:, 0] if weights.ndim == 1 else out


@kernel
def _add_rows(out, labels, weights):  # pragma: no cover - compiled
    """``out[labels[i]] += weights[i]`` for every row ``i`` (labels checked by the caller)."""
    for i in range(labels.shape[0]):
        for c in range(weights.shape[1]):
            out[labels[i], c] += weights[i, c]


def group_prefix(groups: IdArray, weights: IdArray) -> IdArray:
    """Weight before each item inside its run of equal ``groups`` (sorted runs)."""
    cs = np.cumsum(weights)
    first = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
    base = np.repeat((cs - weights)[first], np.diff(np.r_[first, len(groups)]))
    return cs - weights - base


def commit_moves(labels: IdArray, nodes: IdArray, targets: IdArray, gains: IdArray,
                 node_w: IdArray, label_w: IdArray, max_w: int | IdArray, *,
                 inplace: bool = False) -> tuple[IdArray, IdArray]:
    """Apply moves ``nodes -> targets``, reverting, per overloaded label, its lowest-gain
    incoming moves until every label weighs ``<= max_w`` (or no move into it is left).

    Weights may have several columns (``node_w`` ``(n, C)``, ``label_w`` ``(L, C)``,
    ``max_w`` ``(C,)``): a label is overloaded when any column is over its limit.
    Reverting can overload a move's source again; the loop repeats until no label that
    received a move is over, so a feasible start stays feasible.

    Returns:
        ``(labels, label_w)``: new copies, of the dtypes given; with ``inplace``, the
        arrays given, updated (``label_w`` contiguous): a caller that owns them saves a
        copy of each per-node array per commit.

    Example:
        >>> commit_moves(np.array([0, 1, 1]), np.array([1, 2]), np.array([0, 0]),
        ...              np.array([5, 1]), np.ones(3, np.int64), np.array([1, 2]), 2)
        (array([0, 0, 1]), array([2, 1]))
    """
    flat = node_w.ndim == 1
    nw = node_w.reshape(-1, 1) if flat else node_w
    limit = np.ascontiguousarray(np.broadcast_to(np.asarray(max_w, dtype=np.int64),
                                                 (nw.shape[1],)))
    m = len(label_w)
    w = label_w.reshape(m, -1)
    if not inplace or not w.flags.c_contiguous:
        w = w.copy()
    # the kernels read each move's source label and weights through ``nodes``: no
    # per-move copies of them (the moves of a clustering round are half the nodes)
    _move_weights(w, labels, nodes, targets, nw)
    # moves grouped by target (counting sort), each group in node order (ties of gain)
    by_node = None if len(nodes) < 2 or bool((nodes[1:] >= nodes[:-1]).all()) else \
        np.argsort(nodes, kind="stable")
    count = np.zeros(m + 1, dtype=np.int32 if len(nodes) < 2**31 else np.int64)
    order = counting_order(targets if by_node is None else targets[by_node], count)
    if by_node is not None:
        order = by_node[order]
    keep = np.ones(len(nodes), dtype=np.bool_)
    _revert_overloads(w, labels, nodes, targets, gains, nw, limit, order, count, keep)
    out = labels if inplace else labels.copy()
    out[nodes[keep]] = targets[keep]
    if inplace:
        return out, label_w if np.shares_memory(w, label_w) else w.reshape(label_w.shape)
    return out, (w[:, 0].copy() if flat else w)


@kernel
def counting_order(targets, count):  # pragma: no cover - compiled
    """Positions of ``targets`` (labels) in a stable counting sort by label: O(items +
    labels).  ``count``: zeros, one more than the labels, of an integer type that holds
    the number of items; left holding the end of each label's group in the order."""
    num_labels = count.shape[0] - 1
    for i in range(targets.shape[0]):
        count[targets[i] + 1] += 1
    for t in range(num_labels):
        count[t + 1] += count[t]
    order = np.empty(targets.shape[0], count.dtype)  # positions: they fit count's type
    for i in range(targets.shape[0]):
        t = targets[i]
        order[count[t]] = i
        count[t] += 1
    return order


@kernel
def _sort_group_by_gain(order, lo, hi, gains):  # pragma: no cover - compiled
    """Stable sort of ``order[lo:hi]`` by ``gains`` (insertion sort for short groups)."""
    if hi - lo <= 32:
        for j in range(lo + 1, hi):
            cur = order[j]
            g = gains[cur]
            k = j - 1
            while k >= lo and gains[order[k]] > g:
                order[k + 1] = order[k]
                k -= 1
            order[k + 1] = cur
    else:
        seg = order[lo:hi].copy()
        perm = np.argsort(gains[seg], kind="mergesort")
        for j in range(hi - lo):
            order[lo + j] = seg[perm[j]]


@kernel
def _revert_overloads(w, labels, nodes, targets, gains, node_w, limit, order, ends, keep
                      ):  # pragma: no cover - compiled
    """Revert, per label over its limit in a column, its lowest-gain kept incoming moves
    (``order``: moves grouped by target, node order inside a group; ``ends``: the end of
    each label's group in ``order``, as :func:`counting_order` leaves ``count``) until
    the label fits, in passes over the columns until no label that received a move is
    over.  Every pass decides from the weights at its start, then applies its reverts.

    A label's weight only grows when a move out of it is reverted, so after the first
    visit a group is looked at again in a column only once that happened (``dirty``):
    a pass costs its reverts, not a scan of every label's weights (benchmarks/TUNING.md)."""
    n = order.shape[0]
    num_cols = w.shape[1]
    num_groups = 0
    for j in range(n):  # counted first: a group per target, not an entry per move
        if j == 0 or targets[order[j]] != targets[order[j - 1]]:
            num_groups += 1
    starts = np.empty(num_groups + 1, np.int64)
    num_groups = 0
    for j in range(n):
        if j == 0 or targets[order[j]] != targets[order[j - 1]]:
            starts[num_groups] = j
            num_groups += 1
    starts[num_groups] = n
    for g in range(num_groups):  # lowest gain first, node order among equal gains
        _sort_group_by_gain(order, starts[g], starts[g + 1], gains)
    # the moves' fields in that order: the passes below read them sequentially
    group_target = np.empty(num_groups, targets.dtype)
    for g in range(num_groups):
        group_target[g] = targets[order[starts[g]]]
    moved_w = np.empty((n, num_cols), node_w.dtype)
    moved_src = np.empty(n, labels.dtype)
    for j in range(n):
        u = nodes[order[j]]
        moved_src[j] = labels[u]
        for c in range(num_cols):
            moved_w[j, c] = node_w[u, c]
    kept = np.ones(n, np.bool_)
    dirty = np.ones((num_cols, n), np.bool_)  # by the position where a group starts
    rev = np.empty(n, order.dtype)
    rev_target = np.empty(n, targets.dtype)
    while True:
        reverted = False
        for c in range(num_cols):
            num_rev = 0
            for g in range(num_groups):
                lo = starts[g]
                if not dirty[c, lo]:
                    continue
                dirty[c, lo] = False
                t = group_target[g]
                excess = w[t, c] - limit[c]
                if excess <= 0:
                    continue
                before = 0
                for j in range(lo, starts[g + 1]):
                    if not kept[j] or moved_w[j, c] == 0:  # a move weightless in c
                        continue  # did not put the label over in c: it stays
                    if before >= excess:
                        break
                    rev[num_rev] = j
                    rev_target[num_rev] = t
                    num_rev += 1
                    before += moved_w[j, c]
            for r in range(num_rev):
                j = rev[r]
                kept[j] = False
                s = moved_src[j]
                for cc in range(num_cols):
                    w[rev_target[r], cc] -= moved_w[j, cc]
                    w[s, cc] += moved_w[j, cc]
                s_lo = ends[s - 1] if s > 0 else 0
                if ends[s] > s_lo:  # moves into the source: its group may be over now
                    for cc in range(num_cols):
                        dirty[cc, s_lo] = True
            if num_rev > 0:
                reverted = True
        if not reverted:
            break
    for j in range(n):
        keep[order[j]] = kept[j]


@kernel
def _move_weights(label_w, labels, nodes, dst, node_w):  # pragma: no cover - compiled
    """Move node ``nodes[i]``'s weights (one row of columns) from its label to ``dst[i]``,
    in place: work in the moves, not in the labels (a clustering has one label a node)."""
    for i in range(nodes.shape[0]):
        u = nodes[i]
        s = labels[u]
        for c in range(label_w.shape[1]):
            label_w[s, c] -= node_w[u, c]
            label_w[dst[i], c] += node_w[u, c]


@kernel
def _fits(part_w, p, node_w, u, max_w):  # pragma: no cover - compiled
    """Part ``p`` takes node ``u``: every column ``u`` weighs on stays within its limit (a
    column ``u`` does not weigh on cannot get worse, even where ``p`` is over already:
    with a one-hot label column, a part over in train nodes still takes the others)."""
    fits = True
    for c in range(max_w.shape[0]):
        fits &= node_w[u, c] == 0 or part_w[p, c] + node_w[u, c] <= max_w[c]
    return fits


@kernel
def rebalance_candidates(indptr, indices, weights, lo, labels, node_w, part_w, max_w,
                         seed):  # pragma: no cover - compiled
    """Best move out of an overloaded part for every row of the shard that sits in one.

    Weights have one column per constraint (``node_w`` ``(n, C)``, ``part_w`` ``(k, C)``,
    ``max_w`` ``(C,)``); a part is overloaded when any column is over its limit.  The
    target is the connected part with the highest connection that has room for the row
    in every column, else the least loaded part (by its fullest column) among those the
    row fits in, else the row is no candidate (its move could only be reverted); the gain
    is ``connection(target) - connection(own)``.  The fallback looks past a least loaded
    part that is full in a column the row does not weigh on: a part holding the one hub
    of the in-edge column is "full" there, yet takes any node of in-degree 0.

    Returns:
        ``(rows, targets, gains, ties)``: int64 global node IDs, target parts, gains and a
        keyed tie-break key, for rows in overloaded parts.
    """
    num_rows = indptr.shape[0] - 1
    k = part_w.shape[0]
    ncon = max_w.shape[0]
    over = np.zeros(k, dtype=np.bool_)
    loads = np.zeros(k, dtype=np.float64)
    for p in range(k):
        for c in range(ncon):
            over[p] |= part_w[p, c] > max_w[c]
            loads[p] = max(loads[p], part_w[p, c] / max(1, max_w[c]))
    by_load = np.argsort(loads, kind="mergesort")  # least loaded first, ties by part
    rating = np.zeros(k, dtype=np.int64)
    rows = np.empty(num_rows, dtype=np.int64)
    targets = np.empty(num_rows, dtype=np.int64)
    gains = np.empty(num_rows, dtype=np.int64)
    ties = np.empty(num_rows, dtype=np.int64)
    m = 0
    for r in range(num_rows):
        u = lo + r
        cur = labels[u]
        if not over[cur]:
            continue
        for j in range(indptr[r], indptr[r + 1]):
            rating[labels[indices[j]]] += weights[j]
        best, best_r = -1, np.int64(-1)
        for p in by_load:
            if p != cur and _fits(part_w, p, node_w, u, max_w):
                best, best_r = p, rating[p]
                break
        for p in range(k):
            if p != cur and rating[p] > best_r and _fits(part_w, p, node_w, u, max_w):
                best, best_r = p, rating[p]
        if best < 0:
            for j in range(indptr[r], indptr[r + 1]):  # no part has room for it: a move
                rating[labels[indices[j]]] = 0  # would be reverted, and would take the
            continue  # place of moves that fit in needed_moves
        rows[m] = u
        targets[m] = best
        gains[m] = best_r - rating[cur]
        ties[m] = np.int64(keyed_hash(seed, u, 17) >> np.uint64(2))
        m += 1
        for j in range(indptr[r], indptr[r + 1]):
            rating[labels[indices[j]]] = 0
    return rows[:m].copy(), targets[:m].copy(), gains[:m].copy(), ties[:m].copy()


def enforce_balance(adj: Adjacency, parts: IdArray, num_parts: int, imbalance: float, *,
                    seed: int = 0, max_iter: int = 20) -> IdArray:
    """Move nodes out of parts above :func:`max_part_weight` in any balance constraint,
    best cut gain first (boundary nodes to the connected part with room that costs the
    least cut), until every constraint is within ``imbalance``.

    Every column of ``adj.vertex_weights`` is a constraint (unit weights without them):
    a METIS multi-constraint run can end 6-9% over on one of them at the default 3%
    (benchmarks/TUNING.md).  Moves are single, then swaps where they are stuck
    (:func:`rebalance_loop`); a column left over its limit is a warning
    (:func:`unmet_balance`).  ``parts`` comes back unchanged when within the bound.

    Example:
        >>> from graphshard.partition.adjacency import symmetric_adjacency
        >>> adj = symmetric_adjacency(np.arange(5), np.arange(1, 6), 6)
        >>> np.bincount(enforce_balance(adj, np.array([0, 0, 0, 0, 1, 1]), 2, 0.0)).tolist()
        [3, 3]
    """
    node_w = (np.ones((adj.num_nodes, 1), dtype=np.int64) if adj.vertex_weights is None
              else np.ascontiguousarray(np.asarray(adj.vertex_weights).reshape(
                  adj.num_nodes, -1), dtype=np.int64))
    max_w = np.array([max_part_weight(int(t), num_parts, imbalance)
                      for t in node_w.sum(axis=0)], dtype=np.int64)

    def candidates(labels: IdArray, part_w: IdArray, it: int) -> tuple[IdArray, ...]:
        return rebalance_candidates(adj.indptr, adj.indices, adj.edge_weights, 0, labels,
                                    node_w, part_w, max_w, seed + it)

    parts = rebalance_loop(parts, node_w, num_parts, max_w, candidates, max_iter=max_iter,
                           warn=False)
    message = unmet_balance(parts, node_w, num_parts, max_w, imbalance)
    if message:
        log.warning("%s", message)
    return parts


def unmet_balance(parts: IdArray, node_w: IdArray, num_parts: int, max_w: IdArray,
                  imbalance: float) -> str:
    """A message naming every balance column (``node_w`` ``(n, C)``) whose heaviest part
    is above ``max_w``, by how much, and why when one node alone outweighs the slack
    (then no assignment can meet it); ``""`` when all are met.  Columns are numbered as
    :func:`~graphshard.partition.constraints.balance_weights` builds them: one per
    ``balance_ntypes`` label (or the node count), then in-edges with ``balance_edges``.

    Example:
        >>> unmet_balance(np.array([0, 0, 1]), np.array([[1, 5], [1, 0], [1, 1]]), 2,
        ...               np.array([2, 4]), 0.03)  # doctest: +NORMALIZE_WHITESPACE
        'balance not met within imbalance 0.03 (no move left fits every constraint):
        column 1 of 2: heaviest part 5 = 1.667x the average (limit 4 = 1.333x, 25.0% over);
        its heaviest node alone weighs 5, more than the slack 1'
    """
    node_w = np.asarray(node_w).reshape(len(parts), -1)
    loads = weight_sums(parts, node_w, num_parts).reshape(num_parts, -1)
    limits = np.asarray(max_w, dtype=np.int64).reshape(-1)
    found = []
    for c in np.flatnonzero(loads.max(axis=0) > limits):
        total = int(node_w[:, c].sum())
        avg = total / num_parts
        heaviest, limit = int(loads[:, c].max()), int(limits[c])
        text = (f"column {c} of {node_w.shape[1]}: heaviest part {heaviest} = "
                f"{heaviest / avg:.3f}x the average (limit {limit} = {limit / avg:.3f}x, "
                f"{100 * (heaviest / limit - 1):.1f}% over)")
        node_max = int(node_w[:, c].max())
        slack = limit - -(-total // num_parts)
        if node_max > slack:
            text += f"; its heaviest node alone weighs {node_max}, more than the slack {slack}"
        found.append(text)
    if not found:
        return ""
    return (f"balance not met within imbalance {imbalance:g} (no move left fits every "
            f"constraint): " + "; ".join(found))


def needed_moves(src: IdArray, rows: IdArray, gains: IdArray, ties: IdArray,
                 node_w: IdArray, excess: IdArray) -> IdArray:
    """Indices of the candidate moves that remove each part's ``excess`` (``(k, C)``), best
    gain first (ties by ``ties``): a move out of part ``src`` is needed while the moves
    before it out of that part weigh less than the excess in some column.

    Applied to any subset of the candidates (one shard's), it keeps every candidate that
    the whole set would keep (a move's prefix only grows with more candidates), so shard
    tasks can filter before the driver does.

    Example:
        >>> needed_moves(np.array([0, 0, 0]), np.array([5, 6, 7]), np.array([1, 3, 2]),
        ...              np.zeros(3, np.int64), np.ones((8, 1), np.int64),
        ...              np.array([[2], [0]])).tolist()
        [1, 2]
    """
    if len(rows) == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.lexsort((ties, -gains, src))
    src, moved = src[order], rows[order]
    take = np.zeros(len(order), dtype=bool)
    for c in range(node_w.shape[1]):
        take |= group_prefix(src, node_w[moved, c]) < excess[src, c]
    return order[take]


def rebalance_loop(parts: IdArray, node_w: IdArray, num_parts: int, max_w: IdArray,
                   candidates: Callable[[IdArray, IdArray, int], tuple[IdArray, ...]], *,
                   max_iter: int = 20, warn: bool = True, swaps: bool = True) -> IdArray:
    """Rounds of: ``candidates(parts, part_weights, round)`` proposes moves out of heavy
    parts (rows, targets, gains, tie keys, as :func:`rebalance_candidates` returns); the
    best-gain moves that remove each part's excess are committed.  Stops when balanced,
    or after a round that shed less than ``1 - STALL`` of the excess in every column that
    had some (the targets had no room: more rounds would propose the same moves again).

    When the moves are stuck with a column still over, ``swaps`` pair heavy nodes of the
    over part with light ones of parts with room
    (:func:`~graphshard.partition.balance_swaps.swap_to_balance`), and the rounds run once
    more.  ``node_w`` is ``(n, C)`` and ``max_w`` ``(C,)``: one column per constraint.  With
    ``warn`` a result still over the limit is logged as a warning (else at debug level:
    a coarse level of a multilevel scheme may not balance, its finer levels will).
    """
    last, made_room = None, False
    for it in range(max_iter):
        pw = weight_sums(parts, node_w, num_parts)
        excess = pw - max_w
        if (excess <= 0).all():
            return parts
        over = np.maximum(excess, 0).sum(axis=0)
        ask = pw
        if last is not None and not (over < STALL * last)[last > 0].any():
            # the last round shed under 1% of the excess in every column over: stuck
            room = None if made_room else room_weights(pw, np.asarray(max_w))
            if room is None:
                break
            ask = room
            made_room, over = True, None
        last = over
        rows, targets, gains, ties = candidates(parts, ask, it)
        take = needed_moves(parts[rows], rows, gains, ties, node_w, ask - max_w)
        parts, _ = commit_moves(parts, rows[take], targets[take], gains[take], node_w, pw,
                                max_w)
    heaviest = weight_sums(parts, node_w, num_parts).max(axis=0)
    if (heaviest > max_w).any() and swaps:
        # single moves are stuck: swaps move weight where moves would overfill another
        # column, then the moves run again (a column may now have takers)
        swapped = swap_to_balance(parts, node_w, num_parts, max_w)
        if not np.array_equal(swapped, parts):
            return rebalance_loop(swapped, node_w, num_parts, max_w, candidates,
                                  max_iter=max_iter, warn=warn, swaps=False)
    if (heaviest > max_w).any():
        (log.warning if warn else log.debug)(
            "parts still weigh up to %s > %s after %d rebalancing rounds",
            heaviest.tolist(), np.asarray(max_w).tolist(), max_iter)
    return parts
