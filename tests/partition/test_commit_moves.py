"""``commit_moves`` against a plain rendering of its rule: per label over its limit in a
column, revert its lowest-gain kept incoming moves that weigh on that column (node order
among equal gains) until it fits, deciding each pass from the weights at its start;
repeat until no label is over."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from graphshard.partition.balance import commit_moves


def _reference(labels, nodes, targets, gains, node_w, label_w, max_w):
    nw = node_w.reshape(len(node_w), -1)
    w = label_w.reshape(len(label_w), -1).astype(np.int64)
    limit = np.broadcast_to(np.asarray(max_w), (nw.shape[1],))
    src = labels[nodes]
    for i, u in enumerate(nodes):
        w[src[i]] -= nw[u]
        w[targets[i]] += nw[u]
    keep = np.ones(len(nodes), dtype=bool)
    while True:
        reverted = False
        for c in range(nw.shape[1]):
            start = w[:, c].copy()
            revs = []
            for t in np.unique(targets[keep]):
                excess = start[t] - limit[c]
                if excess <= 0:
                    continue
                into = sorted((gains[i], nodes[i], i)
                              for i in np.flatnonzero(keep & (targets == t)))
                before = 0
                for _, _, i in into:
                    if nw[nodes[i], c] == 0:  # did not add to the excess in c
                        continue
                    if before >= excess:
                        break
                    revs.append(i)
                    before += nw[nodes[i], c]
            for i in revs:
                keep[i] = False
                w[targets[i]] -= nw[nodes[i]]
                w[src[i]] += nw[nodes[i]]
            reverted = reverted or bool(revs)
        if not reverted:
            break
    out = labels.copy()
    out[nodes[keep]] = targets[keep]
    return out, w


@given(st.integers(0, 2**31), st.integers(1, 2), st.booleans(), st.sampled_from([3, 60]))
@settings(max_examples=60, deadline=None)
def test_commit_moves_follows_its_rule(seed, cols, sorted_nodes, num_labels):
    """Random moves, ties in gain, groups of both sizes the kernel sorts differently (more
    than 32 moves into one label with 3 labels), nodes in order or not, 1 or 2 columns."""
    rng = np.random.default_rng(seed)
    n = 200
    labels = rng.integers(0, num_labels, n)
    nodes = rng.choice(n, size=rng.integers(0, n), replace=False)
    if sorted_nodes:
        nodes = np.sort(nodes)
    targets = rng.integers(0, num_labels, len(nodes))
    gains = rng.integers(-2, 3, len(nodes))
    node_w = rng.integers(0, 4, size=(n, cols)) if cols > 1 else rng.integers(1, 4, n)
    label_w = np.stack([np.bincount(labels, weights=node_w.reshape(n, -1)[:, c],
                                    minlength=num_labels) for c in range(cols)], axis=1)
    label_w = label_w.astype(np.int64).reshape(num_labels, -1) if cols > 1 else \
        label_w[:, 0].astype(np.int64)
    max_w = label_w.reshape(num_labels, -1).max(axis=0) + rng.integers(-2, 3, cols)
    out, w = commit_moves(labels, nodes, targets, gains, node_w, label_w, max_w)
    ref_out, ref_w = _reference(labels, nodes, targets, gains, node_w, label_w, max_w)
    assert out.tolist() == ref_out.tolist()
    assert w.reshape(num_labels, -1).tolist() == ref_w.tolist()
    # in place: the same result, in the arrays given (the lp driver's one copy of each)
    given_labels, given_w = labels.copy(), label_w.copy()
    out, w = commit_moves(given_labels, nodes, targets, gains, node_w, given_w, max_w,
                          inplace=True)
    assert out is given_labels and w is given_w
    assert out.tolist() == ref_out.tolist()
    assert w.reshape(num_labels, -1).tolist() == ref_w.tolist()


def test_a_revert_that_overloads_its_source_is_followed_by_a_second_pass():
    """Limit 2 a label.  ``a`` (0 -> 1) overloads label 1 and is reverted; back in label 0
    it overloads that label, which took ``d`` (2 -> 0) meanwhile: a second pass must look
    at label 0 again and revert ``d``, though label 0 was within its limit in the first."""
    labels = np.array([0, 0, 1, 1, 2])  # a, b, c, x, d
    out, w = commit_moves(labels, np.array([0, 4]), np.array([1, 0]), np.array([1, 5]),
                          np.ones(5, np.int64), np.array([2, 2, 1]), 2)
    assert out.tolist() == labels.tolist()
    assert w.tolist() == [2, 2, 1]
