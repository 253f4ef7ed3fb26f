"""When single moves cannot reach the balance: weights that make room, and swaps.

:func:`~graphshard.partition.balance.rebalance_loop` moves single nodes out of parts over a
limit.  With two constraints, typically nodes and in-edges (``balance_edges``), it gets
stuck when the part over in edges can only hand its nodes to parts that are full in the
node count: every move adds a node there.  A swap of a heavy node of the over part with a
light node of a part with room moves the difference in the over column and nothing in
the others, when the two nodes weigh the same there (both count one node; with
``balance_ntypes``, both have the same label).  :func:`swap_to_balance` makes such swaps,
largest differences that fit first, until every column is within its limit or no swap
helps.  It looks at weights only, not at the cut: it runs after the cut-aware moves have
done what they can.

Example:
    >>> parts = np.array([0, 0, 0, 1, 1, 1])
    >>> w = np.array([[1, 4], [1, 2], [1, 1], [1, 1], [1, 1], [1, 2]])  # nodes, in-edges
    >>> new = swap_to_balance(parts, w, 2, np.array([3, 6]))  # part 0: 7 in-edges > 6
    >>> new.tolist(), np.bincount(new, weights=w[:, 1]).astype(int).tolist()
    ([0, 1, 0, 0, 1, 1], [6, 5])
"""

from __future__ import annotations

import numpy as np

from ..typing import IdArray

__all__ = ["room_weights", "swap_to_balance"]


def _signatures(node_w: IdArray, column: int) -> IdArray:
    """A group ID per node: nodes with equal weights in every column but ``column``."""
    others = np.delete(node_w, column, axis=1)
    if others.shape[1] == 0:
        return np.zeros(len(node_w), dtype=np.int64)
    return np.unique(others, axis=0, return_inverse=True)[1].reshape(-1)


def _swap_pairs(parts: IdArray, weight: IdArray, groups: IdArray, p: int, q: int,
                need: int, room: int) -> int:
    """Swap nodes of part ``p`` with lighter nodes of part ``q`` in the same group, moving
    at most ``room`` and, where possible, at least ``need`` of ``weight`` from ``p`` to
    ``q``; ``parts`` changes in place.  Returns the weight moved."""
    mine, theirs = np.flatnonzero(parts == p), np.flatnonzero(parts == q)
    moved = 0
    for g in np.intersect1d(groups[mine], groups[theirs]):
        if moved >= need:
            break
        u = mine[groups[mine] == g]
        v = theirs[groups[theirs] == g]
        u = u[np.argsort(-weight[u], kind="stable")]
        v = v[np.argsort(weight[v], kind="stable")]
        left = room - moved
        u = u[weight[u] - weight[v[0]] <= left]  # a pair moving more than the room: never
        m = min(len(u), len(v))
        diff = weight[u[:m]] - weight[v[:m]]
        m = int(np.count_nonzero(diff > 0))  # non-increasing: the helpful pairs lead
        if m == 0:
            continue
        cs = np.cumsum(diff[:m])
        fits = int(np.searchsorted(cs, left, side="right"))  # prefix within the room
        enough = int(np.searchsorted(cs, need - moved, side="left")) + 1
        take = min(fits, enough)
        parts[u[:take]] = q
        parts[v[:take]] = p
        moved += int(cs[take - 1]) if take else 0
    return moved


def swap_to_balance(parts: IdArray, node_w: IdArray, num_parts: int, max_w: IdArray, *,
                    max_rounds: int = 256) -> IdArray:
    """``parts`` with swaps that bring columns over ``max_w`` down (see the module).

    Each round takes the part and column furthest over (relative to the limit) and swaps
    with the parts that have the most room in that column, until it is within the limit.
    Stops when all columns are within their limits, when a round moves nothing, or after
    ``max_rounds``.  A swap never pushes a part over a limit it was within.

    Args:
        parts: Part of each node (not changed).
        node_w: ``(n, C)`` int weights, one column per constraint.
        num_parts: Number of parts.
        max_w: ``(C,)`` limit of each column.
    """
    parts = np.array(parts, dtype=np.int64, copy=True)
    node_w = np.asarray(node_w, dtype=np.int64).reshape(len(parts), -1)
    max_w = np.asarray(max_w, dtype=np.int64).reshape(-1)
    signatures: dict[int, IdArray] = {}
    for _ in range(max_rounds):
        pw = np.stack([np.bincount(parts, weights=node_w[:, c], minlength=num_parts)
                       for c in range(node_w.shape[1])], axis=1).astype(np.int64)
        excess = pw - max_w
        if (excess <= 0).all():
            break
        p, c = (int(i) for i in np.unravel_index(int(np.argmax(excess / np.maximum(max_w, 1))),
                                                 excess.shape))
        if c not in signatures:
            signatures[c] = _signatures(node_w, c)
        room = max_w[c] - pw[:, c]
        need = int(excess[p, c])
        for q in np.argsort(-room, kind="stable"):
            if need <= 0 or room[q] <= 0:
                break
            need -= _swap_pairs(parts, node_w[:, c], signatures[c], int(p), int(q), need,
                                int(room[q]))
        if need == int(excess[p, c]):
            break  # nothing moved: no swap helps this column
    return parts


def room_weights(part_w: IdArray, max_w: IdArray) -> IdArray | None:
    """Part weights that make room when rebalancing is stuck: the parts that could take
    load in every column some part is over in, but lack room in another column, look
    over that column by the total excess, so that a round moves their nodes out to
    parts with room (``None`` when no part is like that).

    Example:
        >>> room_weights(np.array([[5, 12], [6, 3]]), np.array([6, 10])).tolist()
        [[5, 12], [8, 3]]
    """
    over = (part_w > max_w).any(axis=0)
    if not over.any() or over.all():
        return None
    need = np.maximum(part_w - max_w, 0)[:, over].sum()
    takers = (part_w[:, over] < max_w[over]).all(axis=1)
    out = part_w.copy()
    for c in np.flatnonzero(~over):
        full = takers & (max_w[c] - part_w[:, c] < need)
        out[full, c] = max_w[c] + need - (max_w[c] - part_w[full, c])
    return None if np.array_equal(out, part_w) else out
