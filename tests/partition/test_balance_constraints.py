"""``enforce_balance`` on every balance constraint: after METIS, each column of the vertex
weights (``balance_ntypes`` labels, in-edges) is within ``imbalance``, or a warning says
which column is over and by how much."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import graphshard as gs
from graphshard.partition.adjacency import symmetric_adjacency
from graphshard.partition.balance import enforce_balance, max_part_weight, weight_sums
from graphshard.partition.constraints import balance_weights
from graphshard.partition.methods import MethodOptions, run_method


def _train_mask(g):
    return np.concatenate([np.asarray(g.nodes[t].data["train_mask"]).astype(bool)
                           if "train_mask" in g.nodes[t].data
                           else np.zeros(g.num_nodes(t), dtype=bool) for t in g.ntypes])


@pytest.mark.parametrize("balance_edges", [False, True])
def test_train_mask_balanced_on_acm(acm, caplog, balance_edges):
    """HGB ACM, train mask as ``balance_ntypes``, k=4: METIS's recursive bisection left
    the node count 6.1% over at 3% (the train column 5.8%); every column now fits."""
    src, dst, _ = acm.homogeneous_edges()
    n = acm.num_nodes()
    mask = _train_mask(acm)
    assert 0 < mask.sum() < n
    w = balance_weights(n, np.bincount(dst, minlength=n), balance_ntypes=mask,
                        balance_edges=balance_edges)
    adj = symmetric_adjacency(src, dst, n).with_vertex_weights(w)
    with caplog.at_level(logging.WARNING, logger="graphshard.partition.balance"):
        parts = run_method(adj, 4, "metis", MethodOptions(seed=0))
    loads = weight_sums(parts, w, 4)
    limits = [max_part_weight(int(t), 4, 0.03) for t in w.sum(axis=0)]
    assert (loads.max(axis=0) <= limits).all(), (loads.max(axis=0), limits)
    assert "balance not met" not in caplog.text


def test_an_unmeetable_constraint_is_named_with_its_excess(caplog):
    """A star: the hub's in-degree alone is over the in-edge limit of 2 parts, so no
    assignment balances edges; the warning names that column, its excess and the cause."""
    n = 9
    src, dst = np.arange(1, n), np.zeros(n - 1, dtype=np.int64)
    w = balance_weights(n, np.bincount(dst, minlength=n), balance_edges=True)
    adj = symmetric_adjacency(src, dst, n).with_vertex_weights(w)
    with caplog.at_level(logging.WARNING, logger="graphshard.partition.balance"):
        parts = run_method(adj, 2, "metis", MethodOptions(seed=0))
    assert np.bincount(parts, minlength=2).max() <= max_part_weight(n, 2, 0.03)
    assert "column 1 of 2: heaviest part 8 = 2.000x the average (limit 4 = 1.000x, " \
        "100.0% over); its heaviest node alone weighs 8, more than the slack 0" in caplog.text


def test_a_part_over_in_one_column_takes_nodes_that_weigh_nothing_there():
    """Two one-hot columns (a train mask), k=2, no slack: part 0 holds 6 of the 8
    non-train nodes, part 1 holds 3 of the 4 train nodes.  Each part is over in one column
    only, so part 0's non-train nodes fit in part 1 and part 1's train nodes in part 0;
    a part over in any column used to refuse every node, and both stayed over."""
    n = 12
    train = np.zeros(n, dtype=bool)
    train[[6, 8, 9, 10]] = True
    parts = np.array([0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1])  # 6 + 1 train / 2 + 3 train
    ring = np.arange(n)
    adj = symmetric_adjacency(ring, (ring + 1) % n, n).with_vertex_weights(
        balance_weights(n, np.ones(n, np.int64), balance_ntypes=train))
    w = np.asarray(adj.vertex_weights)
    assert weight_sums(parts, w, 2).tolist() == [[6, 1], [2, 3]]
    out = enforce_balance(adj, parts, 2, 0.0)
    assert weight_sums(out, w, 2).tolist() == [[4, 2], [4, 2]]


@pytest.mark.parametrize(("k", "balance_edges"), [(4, False), (8, True)])
def test_train_mask_balanced_on_coauthor_cs(shared_file, caplog, k, balance_edges):
    """Coauthor CS with 20 train nodes per class (300 of 18,333; Shchur et al.'s split
    size): METIS left the train column 5.3% over (k=4) and the in-edges 7.3% (k=8), and
    the repair stopped at 4.0% / 6.4% with a warning, because a part over in one column
    took no node at all; every column now fits."""
    import graphshard as gs

    g = gs.datasets.load_shchur_npz(shared_file("gnn-benchmark-shchur", "coauthor-cs.zip"))
    labels = np.asarray(g.ndata["label"])
    rng = np.random.default_rng(0)
    train = np.zeros(len(labels), dtype=bool)
    for c in np.unique(labels):
        train[rng.permutation(np.flatnonzero(labels == c))[:20]] = True
    src, dst, _ = g.homogeneous_edges()
    n = g.num_nodes()
    w = balance_weights(n, np.bincount(dst, minlength=n), balance_ntypes=train,
                        balance_edges=balance_edges)
    adj = symmetric_adjacency(src, dst, n).with_vertex_weights(w)
    with caplog.at_level(logging.WARNING, logger="graphshard.partition.balance"):
        parts = run_method(adj, k, "metis", MethodOptions(seed=0))
    limits = [max_part_weight(int(t), k, 0.03) for t in w.sum(axis=0)]
    assert (weight_sums(parts, w, k).max(axis=0) <= limits).all()
    assert "balance not met" not in caplog.text


@pytest.mark.parametrize("k", [4, 8])
def test_acm_meets_the_edge_balance(acm, tmp_path, k):
    """Issue 44 item 4: on HGB ACM, balance_edges ended at 1.039x (k=4) and 1.067x (k=8)
    the average against the 1.030 limit: single moves had no part with room for a node.
    Swaps bring both columns within the limit."""
    gs.partition_graph(acm, "acm", k, tmp_path, part_method="metis", balance_edges=True)
    report = gs.partition.read_config(tmp_path / "acm.json").read_report()
    assert report.edge_balance <= 1.0301 and report.node_balance <= 1.0301
