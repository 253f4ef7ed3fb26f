"""Random, weighted, metapath and node2vec walks: edges exist, exact step distributions."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import graphshard as gs
from graphshard.errors import ValidationError
from graphshard.sampling import node2vec_walk, random_walk

ALPHA = 1e-4


def edge_keys(g, et):
    s, d = g.edges(etype=et)
    return set(zip(s.tolist(), d.tolist(), strict=True))


def check_steps_follow_edges(g, w, path):
    tr = w.traces
    sets = {et: edge_keys(g, et) for et in set(path)}
    for t in range(1, tr.shape[1]):
        et = path[(t - 1) % len(path)]
        alive = tr[:, t] >= 0
        assert np.all(tr[~alive, t:] == -1) if (~alive).any() else True
        for a, b in zip(tr[alive, t - 1].tolist(), tr[alive, t].tolist(), strict=True):
            assert (a, b) in sets[et]


def test_uniform_walk_on_real_graph(blogcatalog):
    g = blogcatalog
    w = random_walk(g, np.arange(0, 10312, 50), 12, walk_times=3, seed=1)
    assert w.traces.shape == (207 * 3, 12)
    check_steps_follow_edges(g, w, [("_N", "_E", "_N")])
    # first steps from one hub: uniform over its out-neighbours (by edge multiplicity)
    hub = int(np.argmax(g.out_degrees()))
    nxt = random_walk(g, np.full(20000, hub), 2, seed=3).traces[:, 1]
    nbrs = g.out_csr().indices[g.out_csr().indptr[hub]:g.out_csr().indptr[hub + 1]]
    uniq, mult = np.unique(nbrs, return_counts=True)
    counts = np.array([np.sum(nxt == v) for v in uniq])
    assert counts.sum() == 20000
    assert stats.chisquare(counts, mult / mult.sum() * 20000).pvalue > ALPHA


def test_weighted_walk_matches_weights():
    g = gs.graph(([0, 0, 0, 0, 1, 2, 3, 4], [1, 2, 3, 4, 0, 0, 0, 0]))
    g.edata["p"] = np.array([1.0, 2.0, 0.0, 5.0, 1, 1, 1, 1])
    tr = random_walk(g, np.zeros(16000, dtype=np.int64), 2, prob="p", seed=2).traces
    counts = np.bincount(tr[:, 1], minlength=5)[1:]
    assert counts[2] == 0
    exp = np.array([1.0, 2.0, 5.0]) / 8 * 16000
    assert stats.chisquare(counts[[0, 1, 3]], exp).pvalue > ALPHA


def test_metapath_walks_follow_types(pgl_toy):
    g = pgl_toy
    w = random_walk(g, np.arange(g.num_nodes("u")), 9, metapath="u2click2i-i2click2u",
                    walk_times=2, seed=0)
    assert w.node_types() == ["u", "i"] * 4 + ["u"]
    path = [("u", "u2click2i", "i"), ("i", "i2click2u", "u")]
    check_steps_follow_edges(g, w, path)
    w2 = random_walk(g, {"u": [0, 1]}, 5, metapath=[path[0], "i2buy2u"], seed=0)
    check_steps_follow_edges(g, w2, [path[0], ("i", "i2buy2u", "u")])


def test_metapath_on_dblp_and_reference_store(dblp, reference_store):
    mp = "author2paper-paper2venue-venue2paper-paper2author"
    w = random_walk(dblp, np.arange(300), 9, metapath=mp, seed=5)
    path = [dblp.to_canonical_etype(r) for r in mp.split("-")]
    check_steps_follow_edges(dblp, w, path)
    w_ref = random_walk(reference_store(dblp), np.arange(300), 9, metapath=mp, seed=5)
    assert np.array_equal(w.traces, w_ref.traces)


def test_weighted_metapath_reference_store(pgl_toy_weighted, reference_store):
    g = pgl_toy_weighted
    kw = {"metapath": "u2buy2i-i2buy2u", "prob": "w", "seed": 2, "restart_prob": 0.1}
    a = random_walk(g, np.arange(100), 7, **kw)
    b = random_walk(reference_store(g), np.arange(100), 7, **kw)
    assert np.array_equal(a.traces, b.traces)


def test_dead_ends_and_restart():
    g = gs.graph(([0, 1], [1, 2]), num_nodes=4)
    assert random_walk(g, [0, 3], 5, seed=0).traces.tolist() == [[0, 1, 2, -1, -1],
                                                                [3, -1, -1, -1, -1]]
    ring = gs.graph((np.arange(10), (np.arange(10) + 1) % 10))
    tr = random_walk(ring, np.zeros(20000, dtype=np.int64), 2, restart_prob=0.3, seed=1).traces
    stopped = int((tr[:, 1] == -1).sum())
    assert stats.binomtest(stopped, 20000, 0.3).pvalue > ALPHA


def node2vec_exact(g, prev, cur, p, q):
    csr = g.out_csr()
    nb = csr.indices[csr.indptr[cur]:csr.indptr[cur + 1]]
    prev_nb = set(csr.indices[csr.indptr[prev]:csr.indptr[prev + 1]].tolist())
    w = np.array([1 / p if x == prev else (1.0 if x in prev_nb else 1 / q) for x in nb])
    return nb, w / w.sum()


@pytest.mark.parametrize(("p", "q"), [(1.0, 1.0), (0.25, 4.0), (4.0, 0.25)])
def test_node2vec_second_order_distribution(p, q):
    # undirected: 0-1, 1-2, 1-3, 1-4, 2-3, 4-5
    und = [(0, 1), (1, 2), (1, 3), (1, 4), (2, 3), (4, 5)]
    s = [a for a, b in und] + [b for a, b in und]
    d = [b for a, b in und] + [a for a, b in und]
    g = gs.graph((s, d))
    tr = node2vec_walk(g, np.full(30000, 2), 3, p=p, q=q, seed=7).traces
    check_steps_follow_edges(g, gs.sampling.WalkResult(tr, np.zeros(3, np.int64), ["_N"]),
                             [("_N", "_E", "_N")])
    sel = tr[tr[:, 1] == 1]  # walks 2 -> 1 -> x
    nb, prob = node2vec_exact(g, 2, 1, p, q)
    counts = np.array([np.sum(sel[:, 2] == x) for x in nb])
    assert counts.sum() == len(sel)
    assert stats.chisquare(counts, prob * len(sel)).pvalue > ALPHA


@pytest.mark.parametrize(("p", "q"), [(1.0, 1.0), (0.25, 4.0)])
def test_node2vec_reference_store_equals_local(reference_store, p, q):
    """A store without a local adjacency (as a DistGraph) walks step-wise, same traces."""
    rng = np.random.default_rng(3)
    src, dst = rng.integers(0, 60, 400), rng.integers(0, 60, 400)
    g = gs.graph((np.concatenate([src, dst, [7]]), np.concatenate([dst, src, [7]])),
                 num_nodes=64)  # parallel edges, a self loop, isolated nodes 60..63
    starts = np.array([0, 5, 61, 7, 33])
    local = node2vec_walk(g, starts, 9, p=p, q=q, walk_times=3, seed=11)
    ref = node2vec_walk(reference_store(g), starts, 9, p=p, q=q, walk_times=3, seed=11)
    np.testing.assert_array_equal(ref.traces, local.traces)
    assert (local.traces[:, 1:] >= 0).sum() == 12 * 8 and (local.traces[[2, 7, 12]] == [
        [61] + [-1] * 8] * 3).all()
    check_steps_follow_edges(g, ref, [("_N", "_E", "_N")])


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"metapath": "u2click2i-u2buy2i"}, r"metapath 'u2click2i-u2buy2i' does not chain: "
     r"\('u', 'u2click2i', 'i'\) ends at node type 'i' but the next edge type "
     r"\('u', 'u2buy2i', 'i'\) starts at 'u'"),
    ({"metapath": "u2click2i"}, r"metapath 'u2click2i' does not chain"),
    ({"metapath": "u2nothing2i"}, r"unknown edge type 'u2nothing2i'"),
    ({}, r"the graph has edge types .*: pass a metapath"),
    ({"metapath": "u2click2i-i2click2u", "restart_prob": 1.0}, r"restart_prob must be in"),
    ({"metapath": "u2click2i-i2click2u", "walk_times": 0}, r"walk_times must be an int >= 1"),
])
def test_walk_errors(pgl_toy, kwargs, message):
    with pytest.raises(ValidationError, match=message):
        random_walk(pgl_toy, [0], 5, **kwargs)


def test_walk_start_errors(pgl_toy):
    with pytest.raises(ValidationError, match=r"starts of node type 'u': ID 144 at position 1 "
                       r"is out of range \[0, 144\)"):
        random_walk(pgl_toy, [0, 144], 3, metapath="u2click2i-i2click2u")
    with pytest.raises(ValidationError, match=r"node2vec p must be > 0"):
        node2vec_walk(gs.graph(([0], [1])), [0], 3, p=0)


def test_weighted_metapath_mixing_zero_and_positive_weight_tables(reference_store):
    # u->i weights are all positive (the alias table drops its nnz array), i->u has zeros:
    # the joined metapath table must still stop at a row whose weights are all zero.
    g = gs.heterograph({("u", "a", "i"): ([0, 0, 1, 2], [0, 1, 1, 2]),
                        ("i", "b", "u"): ([0, 1, 1, 2], [1, 0, 2, 0])})
    g.edges["a"].data["w"] = np.array([1.0, 3.0, 1.0, 1.0])
    g.edges["b"].data["w"] = np.array([2.0, 0.0, 1.0, 0.0])  # item 2: all zero
    tr = random_walk(g, np.array([0] * 4000 + [2]), 3, metapath="a-b", prob="w", seed=4).traces
    assert tr[-1].tolist() == [2, 2, -1]  # u2 -> i2, whose only out-weight is zero
    first = tr[:-1, 1]
    assert stats.chisquare(np.bincount(first, minlength=2), [1000, 3000]).pvalue > ALPHA
    assert np.all(tr[:-1][first == 1, 2] == 2)  # i1 -> u0 has weight 0
    assert np.all(tr[:-1][first == 0, 2] == 1)
    ref = random_walk(reference_store(g), np.array([0] * 50 + [2]), 5, metapath="a-b", prob="w",
                      seed=4)
    loc = random_walk(g, np.array([0] * 50 + [2]), 5, metapath="a-b", prob="w", seed=4)
    assert np.array_equal(ref.traces, loc.traces)
