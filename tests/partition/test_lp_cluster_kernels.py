"""Clustering kernels on per-node arrays against plain NumPy renderings of their rules."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphshard.errors import ValidationError
from graphshard.partition.balance import counting_order
from graphshard.partition.lp.kernels.clustering import alone_nodes, merge_by_favourite


def _reference_merge(labels, alone, fav, node_w, max_w):
    """Sort the alone nodes by (favourite, ID); cut each favourite's nodes where the
    weight before a node reaches the next multiple of the limit in some column; each
    piece takes its first node's label."""
    order = np.lexsort((alone, fav))
    out = labels.copy()
    start = 0
    while start < len(order):
        end = start
        while end < len(order) and fav[order[end]] == fav[order[start]]:
            end += 1
        before = np.zeros(node_w.shape[1], dtype=np.int64)
        last_piece, leader = -1, 0
        for i in order[start:end]:
            piece = int((before // np.maximum(1, max_w)).max())
            if piece != last_piece:
                last_piece, leader = piece, labels[alone[i]]
            out[alone[i]] = leader
            before += node_w[alone[i]]
        start = end
    return out


@given(st.integers(0, 2**31), st.integers(1, 3), st.integers(1, 6))
@settings(max_examples=60, deadline=None)
def test_merge_by_favourite_follows_its_rule(seed, cols, cap):
    rng = np.random.default_rng(seed)
    n = 120
    labels = rng.integers(0, n, n).astype(np.int32)
    alone = np.sort(rng.choice(n, size=rng.integers(0, n), replace=False)).astype(np.int64)
    fav = rng.integers(0, 5, len(alone)).astype(np.int64) * 7  # few favourites: long runs
    node_w = rng.integers(0, 4, (n, cols)).astype(np.int32)
    max_w = rng.integers(0, cap + 1, cols).astype(np.int64)  # 0 counts as 1
    order = counting_order(fav, np.zeros(n + 1, np.int32))
    got = merge_by_favourite(labels, alone, fav, order, node_w, max_w)
    assert got.dtype == labels.dtype
    assert got.tolist() == _reference_merge(labels, alone, fav, node_w, max_w).tolist()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_alone_nodes_are_the_only_members_of_their_cluster_with_edges(seed):
    rng = np.random.default_rng(seed)
    n = 500
    labels = rng.integers(0, n, n).astype(np.int32)
    degrees = rng.integers(0, 3, n).astype(np.int32)
    size = np.bincount(labels, minlength=n)
    expected = np.flatnonzero((size[labels] == 1) & (degrees > 0))
    got = alone_nodes(labels, degrees)
    assert got.dtype == np.int64 and got.tolist() == expected.tolist()


def test_two_hop_refuses_labels_that_are_not_node_ids():
    """The kernels index per-node arrays by label without bounds checks."""
    from pathlib import Path

    from graphshard.partition.lp.clustering import two_hop
    from graphshard.partition.lp.shards import ShardedGraph

    level = ShardedGraph(Path("."), np.array([0, 3]), np.ones((3, 1), np.int64),
                         np.ones(3, np.int64))
    with pytest.raises(ValidationError, match=r"node IDs in \[0, 3\)"):
        two_hop(np.array([0, 1, 3]), level, None, np.array([2]))
    with pytest.raises(ValidationError, match="2 labels for 3 nodes"):
        two_hop(np.array([0, 1]), level, None, np.array([2]))
