"""``rebalance_loop``: the balancer shared by in-memory repair and the ``lp`` pipeline."""

from __future__ import annotations

import numpy as np
import pytest

from graphshard.partition.adjacency import symmetric_adjacency
from graphshard.partition.balance import rebalance_candidates, rebalance_loop, weight_sums


def _out_of_part0(labels, part_w, it, calls):
    calls.append(it)
    rows = np.flatnonzero(labels == 0)
    return rows, np.ones_like(rows), np.zeros_like(rows), rows


@pytest.mark.parametrize(("max_w", "calls_made", "swapped"),
                         [([2, 10], [0], [0, 0, 0, 1, 1, 1]),
                          ([3, 10], [0, 1, 2, 0, 1, 2], [1, 0, 0, 0, 1, 1])])
def test_stops_after_a_round_that_sheds_nothing(max_w, calls_made, swapped):
    """Part 0 is over its in-edge limit (and its node limit with ``[2, 10]``), and part 1,
    the only target, has no room for a node: every move is reverted, so a second round
    would propose the same moves again.  With ``[3, 10]`` part 1 could take in-edges
    but is full of nodes: one round asks it to make room, the loop stops, a swap of a
    heavy node for a light one takes part 0 from 15 in-edges to 11 (no assignment of
    three nodes a part meets 10), and the rounds run once more, shedding nothing.  With
    ``[2, 10]`` no swap helps: part 0 is over in nodes too, which a swap cannot change."""
    parts = np.array([0, 0, 0, 1, 1, 1])
    node_w = np.array([[1, 5], [1, 5], [1, 5], [1, 1], [1, 1], [1, 1]])
    calls: list[int] = []
    out = rebalance_loop(parts, node_w, 2, np.array(max_w),
                         lambda lab, pw, it: _out_of_part0(lab, pw, it, calls),
                         max_iter=20, warn=False)
    np.testing.assert_array_equal(out, swapped)
    assert calls == calls_made


def test_swaps_balance_edges_where_moves_would_overfill_the_node_count():
    """Issue 44 item 4: every part is at its node limit and part 0 is over in in-edges;
    no single move fits, swapping its heavy nodes for light ones does."""
    from graphshard.partition.balance_swaps import swap_to_balance

    rng = np.random.default_rng(3)
    parts = np.repeat(np.arange(4), 50)
    edges = rng.integers(1, 20, 200)
    edges[:50] += 10  # part 0 heavy in in-edges
    node_w = np.stack([np.ones(200, np.int64), edges], axis=1)
    max_w = np.array([50, int(edges.sum() * 1.03 / 4)])
    assert weight_sums(parts, node_w, 4)[0, 1] > max_w[1]
    out = swap_to_balance(parts, node_w, 4, max_w)
    loads = weight_sums(out, node_w, 4)
    assert (loads <= max_w).all(), loads
    assert np.bincount(out).tolist() == [50, 50, 50, 50]
    # the same through the loop, whose single moves find no room
    calls: list[int] = []
    looped = rebalance_loop(parts, node_w, 4, max_w,
                            lambda lab, pw, it: _out_of_part0(lab, pw, it, calls), warn=False)
    assert (weight_sums(looped, node_w, 4) <= max_w).all()


def test_rounds_go_on_while_they_shed_excess():
    """One move fits per round (the target fills up): the loop keeps going until part 0
    is within its limit."""
    parts = np.zeros(6, dtype=np.int64)
    node_w = np.ones((6, 1), dtype=np.int64)
    calls: list[int] = []

    def one_at_a_time(labels, part_w, it):
        calls.append(it)
        rows = np.flatnonzero(labels == 0)[:1]
        return rows, np.ones_like(rows), np.zeros_like(rows), rows

    out = rebalance_loop(parts, node_w, 2, np.array([3]), one_at_a_time, max_iter=20)
    assert np.bincount(out, minlength=2).tolist() == [3, 3] and calls == [0, 1, 2]


def test_a_part_full_of_nodes_makes_room_for_in_edges():
    """Part 0 is one in-edge over; only part 1 has in-edge room, and it is full of nodes;
    part 2 has node room but no in-edge room.  No single move fits: part 1 must first move
    a node without in-edges to part 2, then part 0 can move a light node into part 1."""
    adj = symmetric_adjacency(np.array([0, 1, 2, 3]), np.array([1, 2, 4, 4]), 5)
    node_w = np.array([[1, 3], [1, 1], [1, 0], [1, 0], [1, 3]])
    parts = np.array([0, 0, 1, 1, 2])
    max_w = np.array([2, 3])

    def candidates(labels, part_w, it):
        return rebalance_candidates(adj.indptr, adj.indices, adj.edge_weights, 0, labels,
                                    node_w, part_w, max_w, it)

    out = rebalance_loop(parts, node_w, 3, max_w, candidates)
    assert (weight_sums(out, node_w, 3) <= max_w).all()
    assert (out != parts).sum() == 2
