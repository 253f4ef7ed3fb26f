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


@pytest.mark.parametrize(("max_w", "calls_made"), [([2, 10], [0]), ([3, 10], [0, 1, 2])])
def test_stops_after_a_round_that_sheds_nothing(max_w, calls_made):
    """Part 0 is over its in-edge limit (and its node limit with ``[2, 10]``), and part 1,
    the only target, has no room for a node: every move is reverted, so a second round
    would propose the same moves again.  With ``[3, 10]`` part 1 could take in-edges
    but is full of nodes: one round asks it to make room, then the loop stops."""
    parts = np.array([0, 0, 0, 1, 1, 1])
    node_w = np.array([[1, 5], [1, 5], [1, 5], [1, 1], [1, 1], [1, 1]])
    calls: list[int] = []
    out = rebalance_loop(parts, node_w, 2, np.array(max_w),
                         lambda lab, pw, it: _out_of_part0(lab, pw, it, calls),
                         max_iter=20, warn=False)
    np.testing.assert_array_equal(out, parts)
    assert calls == calls_made


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
