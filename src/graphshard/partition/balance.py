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

from .._jit import kernel
from .._keyed import keyed_hash
from ..typing import IdArray
from .adjacency import Adjacency


def max_part_weight(total_weight: int, num_parts: int, imbalance: float) -> int:
    """Heaviest part allowed: ``floor((1 + imbalance) * total / num_parts)``, at least ``ceil``.

    Example:
        >>> max_part_weight(15606, 2, 0.05)
        8193
    """
    bound = math.floor((1.0 + imbalance) * total_weight / num_parts + 1e-9)
    return max(bound, -(-total_weight // num_parts))

__all__ = ["commit_moves", "enforce_balance", "group_prefix", "max_part_weight",
           "rebalance_candidates", "rebalance_loop", "weight_sums"]

log = logging.getLogger(__name__)


def weight_sums(labels: IdArray, weights: IdArray, size: int) -> IdArray:
    return np.bincount(labels, weights=weights, minlength=size).astype(np.int64)


def group_prefix(groups: IdArray, weights: IdArray) -> IdArray:
    """Weight before each item inside its run of equal ``groups`` (sorted runs)."""
    cs = np.cumsum(weights)
    first = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
    base = np.repeat((cs - weights)[first], np.diff(np.r_[first, len(groups)]))
    return cs - weights - base


def commit_moves(labels: IdArray, nodes: IdArray, targets: IdArray, gains: IdArray,
                 node_w: IdArray, label_w: IdArray, max_w: int) -> tuple[IdArray, IdArray]:
    """Apply moves ``nodes -> targets``, reverting, per overloaded label, its lowest-gain
    incoming moves until every label weighs ``<= max_w`` (or no move into it is left).

    Reverting can overload a move's source again; the loop repeats until no label that
    received a move is over, so a feasible start stays feasible.

    Returns:
        ``(labels, label_w)``: new int64 copies.

    Example:
        >>> commit_moves(np.array([0, 1, 1]), np.array([1, 2]), np.array([0, 0]),
        ...              np.array([5, 1]), np.ones(3, np.int64), np.array([1, 2]), 2)
        (array([0, 0, 1]), array([2, 1]))
    """
    src = labels[nodes]
    wt = node_w[nodes]
    m = len(label_w)
    w = label_w + weight_sums(targets, wt, m) - weight_sums(src, wt, m)
    keep = np.ones(len(nodes), dtype=bool)
    while True:
        cand = np.flatnonzero(keep & (w[targets] > max_w))
        if cand.size == 0:
            break
        order = np.lexsort((nodes[cand], gains[cand], targets[cand]))
        cand = cand[order]
        t = targets[cand]
        rev = cand[group_prefix(t, wt[cand]) < w[t] - max_w]
        keep[rev] = False
        w += weight_sums(src[rev], wt[rev], m) - weight_sums(targets[rev], wt[rev], m)
    out = labels.copy()
    out[nodes[keep]] = targets[keep]
    return out, w



@kernel
def rebalance_candidates(indptr, indices, weights, lo, labels, node_w, part_w, max_w,
                         seed):  # pragma: no cover - compiled
    """Best move out of an overloaded part for every row of the shard that sits in one.

    The target is the connected part with the highest connection that has room for the
    row (else the lightest part); the gain is ``connection(target) - connection(own)``.

    Returns:
        ``(rows, targets, gains, ties)``: int64 global node IDs, target parts, gains and a
        keyed tie-break key, for rows in parts heavier than ``max_w``.
    """
    num_rows = indptr.shape[0] - 1
    k = part_w.shape[0]
    lightest = np.argmin(part_w)
    rating = np.zeros(k, dtype=np.int64)
    rows = np.empty(num_rows, dtype=np.int64)
    targets = np.empty(num_rows, dtype=np.int64)
    gains = np.empty(num_rows, dtype=np.int64)
    ties = np.empty(num_rows, dtype=np.int64)
    m = 0
    for r in range(num_rows):
        u = lo + r
        cur = labels[u]
        if part_w[cur] <= max_w:
            continue
        for j in range(indptr[r], indptr[r + 1]):
            rating[labels[indices[j]]] += weights[j]
        best, best_r = lightest, rating[lightest]
        for p in range(k):
            if p != cur and part_w[p] + node_w[u] <= max_w and rating[p] > best_r:
                best, best_r = p, rating[p]
        if best == cur:
            for j in range(indptr[r], indptr[r + 1]):
                rating[labels[indices[j]]] = 0
            continue
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
    """Move nodes out of parts above :func:`max_part_weight`, best cut gain first.

    Uses the first vertex-weight column (unit weights without one).  Returns ``parts``
    unchanged when it is already within the bound.

    Example:
        >>> from graphshard.partition.adjacency import symmetric_adjacency
        >>> adj = symmetric_adjacency(np.arange(5), np.arange(1, 6), 6)
        >>> np.bincount(enforce_balance(adj, np.array([0, 0, 0, 0, 1, 1]), 2, 0.0)).tolist()
        [3, 3]
    """
    node_w = (np.ones(adj.num_nodes, dtype=np.int64) if adj.vertex_weights is None
              else np.ascontiguousarray(adj.vertex_weights[:, 0], dtype=np.int64))
    max_w = max_part_weight(int(node_w.sum()), num_parts, imbalance)
    def candidates(labels: IdArray, part_w: IdArray, it: int) -> tuple[IdArray, ...]:
        return rebalance_candidates(adj.indptr, adj.indices, adj.edge_weights, 0, labels,
                                    node_w, part_w, max_w, seed + it)

    return rebalance_loop(parts, node_w, num_parts, max_w, candidates, max_iter=max_iter)


def rebalance_loop(parts: IdArray, node_w: IdArray, num_parts: int, max_w: int,
                   candidates: Callable[[IdArray, IdArray, int], tuple[IdArray, ...]], *,
                   max_iter: int = 20) -> IdArray:
    """Rounds of: ``candidates(parts, part_weights, round)`` proposes moves out of heavy
    parts (rows, targets, gains, tie keys, as :func:`rebalance_candidates` returns); the
    best-gain moves that remove each part's excess are committed.  Stops when balanced.
    """
    for it in range(max_iter):
        pw = weight_sums(parts, node_w, num_parts)
        excess = pw - max_w
        if (excess <= 0).all():
            return parts
        rows, targets, gains, ties = candidates(parts, pw, it)
        src = parts[rows]
        order = np.lexsort((ties, -gains, src))
        rows, targets, gains, src = rows[order], targets[order], gains[order], src[order]
        take = group_prefix(src, node_w[rows]) < excess[src]
        parts, _ = commit_moves(parts, rows[take], targets[take], gains[take], node_w, pw,
                                max_w)
    heaviest = weight_sums(parts, node_w, num_parts).max()
    if heaviest > max_w:
        log.warning("parts still weigh up to %d > %d after %d rebalancing rounds", heaviest,
                    max_w, max_iter)
    return parts
