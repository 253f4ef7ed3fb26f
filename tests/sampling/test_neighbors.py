"""One-hop sampling: exact distributions (chi-square), invariants, errors, store parity."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit
from scipy import integrate, stats

import graphshard as gs
from graphshard.errors import ValidationError
from graphshard.sampling import degrees, find_edges, in_subgraph, sample_neighbors
from graphshard.sampling.kernels.keys_dense import _smallest_first
from graphshard.sampling.kernels.rng import neg_log


@njit
def _neg_logs(u):
    out = np.empty_like(u)
    for i in range(u.shape[0]):
        out[i] = neg_log(u[i])
    return out

ALPHA = 1e-4  # fixed seeds: a pass is deterministic; a real bias fails by a wide margin


def stars(num_dst: int, deg: int) -> gs.Graph:
    """``num_dst`` destinations, each with ``deg`` in-edges; the edge at row position j of
    destination v has edge ID v*deg + j, so positions can be read off the edge IDs."""
    dst = np.repeat(np.arange(num_dst), deg)
    src = num_dst + np.arange(num_dst * deg)
    return gs.graph((src, dst), num_nodes=num_dst * (deg + 1))


def subset_counts(eids: np.ndarray, dst: np.ndarray, deg: int, k: int) -> np.ndarray:
    pos = (eids % deg).reshape(-1, k)
    subsets = {c: i for i, c in enumerate(itertools.combinations(range(deg), k))}
    counts = np.zeros(len(subsets), dtype=np.int64)
    for row in np.sort(pos, axis=1):
        counts[subsets[tuple(row)]] += 1
    return counts


def test_uniform_without_replacement_is_uniform_over_subsets():
    deg, k, n = 6, 2, 6000
    g = stars(n, deg)
    res = sample_neighbors(g, np.arange(n), k, seed=11)
    _src, dst, eids = res.edges()
    assert len(eids) == n * k
    counts = subset_counts(eids, dst, deg, k)  # 15 subsets, each with probability 1/15
    assert stats.chisquare(counts).pvalue > ALPHA


def test_uniform_with_replacement_is_uniform_per_draw():
    deg, k, n = 7, 3, 5000
    g = stars(n, deg)
    _, _, eids = sample_neighbors(g, np.arange(n), k, replace=True, seed=5).edges()
    assert len(eids) == n * k
    assert stats.chisquare(np.bincount(eids % deg, minlength=deg)).pvalue > ALPHA


def test_large_fanout_path_is_uniform():
    deg, k, n = 100, 70, 400  # more than 64 picks: the Fisher-Yates branch
    g = stars(n, deg)
    _, dst, eids = sample_neighbors(g, np.arange(n), k, seed=2).edges()
    assert np.all(np.bincount(dst) == k)
    assert all(len(set(r)) == k for r in eids.reshape(n, k).tolist())
    inc = np.bincount(eids % deg, minlength=deg)  # each ~ Binomial(n, 0.7)
    z = (inc - n * 0.7) / np.sqrt(n * 0.7 * 0.3)
    assert np.abs(z).max() < 4.5


@pytest.mark.parametrize("weights", [[1.0, 2.0, 3.0, 4.0, 0.0], [50.0, 1.0, 1.0, 1.0, 0.0]])
def test_weighted_with_replacement_matches_weights(weights):
    w = np.array(weights)
    deg, k, n = len(w), 4, 4000
    g = stars(n, deg)
    g.edata["p"] = np.tile(w, n)
    _, _, eids = sample_neighbors(g, np.arange(n), k, replace=True, prob="p", seed=3).edges()
    counts = np.bincount(eids % deg, minlength=deg)
    assert counts[w == 0].sum() == 0
    nz = w > 0
    assert stats.chisquare(counts[nz], counts[nz].sum() * w[nz] / w[nz].sum()).pvalue > ALPHA


def successive_subset_probs(w: np.ndarray, k: int) -> np.ndarray:
    """Exact probability of every k-subset under successive weighted draws (by permutations)."""
    probs = []
    for subset in itertools.combinations(range(len(w)), k):
        total = 0.0
        for order in itertools.permutations(subset):
            p, left = 1.0, w.sum()
            for x in order:
                p *= w[x] / left
                left -= w[x]
            total += p
        probs.append(total)
    return np.array(probs)


@pytest.mark.parametrize(("weights", "k"), [
    ([1.0, 2.0, 3.0, 4.0], 2),        # rejection sampling
    ([300.0, 1.0, 1.0, 2.0], 2),      # rejection gives up, exponential keys finish
    ([1.0, 2.0, 3.0, 4.0, 5.0], 3),   # rejection with a high repeat rate
    ([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 5),  # k >= 2/3 deg: exponential keys over the row
    ([1.0, 8.0, 2.0, 0.5, 3.0, 1.0, 4.0, 6.0], 6),  # float32 keys, two of eight struck out
])
def test_weighted_without_replacement_matches_successive_sampling(weights, k):
    w = np.array(weights)
    deg, n = len(w), 6000
    g = stars(n, deg)
    g.edata["p"] = np.tile(w, n)
    _, dst, eids = sample_neighbors(g, np.arange(n), k, prob="p", seed=8).edges()
    counts = subset_counts(eids, dst, deg, k)
    expected = successive_subset_probs(w, k)
    keep = expected * n >= 5
    assert stats.chisquare(counts[keep], expected[keep] / expected[keep].sum()
                           * counts[keep].sum()).pvalue > ALPHA


def test_weighted_rejection_on_a_long_row_matches_successive_sampling():
    # 70 edges, 5 of them weighted: alias draws rejecting repeats (one hash a draw, the
    # repeat check past 64 edges scans the picks); the 3-subsets of the weighted edges
    # follow the law of successive sampling
    deg, k, n = 70, 3, 6000
    at = np.array([2, 17, 40, 64, 69])
    w = np.zeros(deg)
    w[at] = [1.0, 2.0, 3.0, 4.0, 5.0]
    g = stars(n, deg)
    g.edata["p"] = np.tile(w, n)
    _, dst, eids = sample_neighbors(g, np.arange(n), k, prob="p", seed=12).edges()
    pos = eids % deg
    assert np.isin(pos, at).all()
    assert all(len(set(r)) == k for r in pos.reshape(n, k).tolist())
    counts = subset_counts(np.searchsorted(at, pos), dst, len(at), k)
    expected = successive_subset_probs(w[at], k)
    assert stats.chisquare(counts, expected * n).pvalue > ALPHA


def test_weighted_keys_on_a_longer_row_exclude_by_the_exact_law():
    # deg 21, k 20: float32 exponential keys over the row (kernels/keys_dense.py); one edge is left
    # out, edge p with probability P(key p is the largest)
    w = np.arange(1.0, 22.0)
    deg, k, n = len(w), 20, 6000
    g = stars(n, deg)
    g.edata["p"] = np.tile(w, n)
    _, dst, eids = sample_neighbors(g, np.arange(n), k, prob="p", seed=4).edges()
    assert np.all(np.bincount(dst) == k)
    pos = (eids % deg).reshape(n, k)
    assert all(len(set(r)) == k for r in pos.tolist())
    out = deg * (deg - 1) // 2 - pos.sum(axis=1)  # the position each row left out
    counts = np.bincount(out, minlength=deg)

    def density(t, p):  # key p equals t and every other key is below it
        return w[p] * np.exp(-w[p] * t) * np.prod(1.0 - np.exp(-np.delete(w, p) * t))

    expected = np.array([integrate.quad(density, 0, np.inf, args=(p,))[0] for p in range(deg)])
    assert abs(expected.sum() - 1.0) < 1e-6
    keep = expected * n >= 5
    assert stats.chisquare(counts[keep], expected[keep] / expected[keep].sum()
                           * counts[keep].sum()).pvalue > ALPHA
    assert counts[~keep].sum() <= 3 * max(1.0, expected[~keep].sum() * n)


@pytest.mark.parametrize(("deg", "k"), [(64, 50), (65, 50), (12, 8)])
def test_weighted_dense_rows_skip_zero_weights_and_never_repeat(deg, k):
    # deg 64 is the longest row of the float32 path, 65 takes the float64 keys; zero
    # weights (1 / w = inf) must never be picked, and the last row ends the arrays
    n = 300
    g = stars(n, deg)
    w = np.random.default_rng(deg).random(deg) + 0.01
    w[[1, deg // 2, deg - 1]] = 0.0
    g.edata["p"] = np.tile(w, n)
    _, dst, eids = sample_neighbors(g, np.arange(n), k, prob="p", seed=9).edges()
    assert np.all(np.bincount(dst, minlength=n) == k)
    pos = (eids % deg).reshape(n, k)
    assert all(len(set(r)) == k for r in pos.tolist())
    assert not np.isin(pos, [1, deg // 2, deg - 1]).any()
    again = sample_neighbors(g, np.arange(n), k, prob="p", seed=9).edges()[2]
    other = sample_neighbors(g, np.arange(n), k, prob="p", seed=10).edges()[2]
    assert np.array_equal(eids, again) and not np.array_equal(eids, other)


@pytest.mark.parametrize("k", [3, 10])
def test_weighted_rows_of_every_path_mixed_in_one_chunk(k):
    # the fill kernel lists a chunk's rows by path (whole, float32 keys, float64 keys,
    # rejection); a node's sample must not depend on its neighbours in the seed order
    rng = np.random.default_rng(k)
    degs = np.array([0, 1, k - 1, k, k + 1, k + k // 2, 2 * k + 1, 4 * k, 6 * k, 70, 130])
    deg = rng.permutation(np.repeat(degs, 40))
    n = deg.size
    dst = np.repeat(np.arange(n), deg)
    g = gs.graph((rng.integers(0, n, dst.size), dst), num_nodes=n)
    w = rng.random(dst.size) + 0.01
    w[rng.random(dst.size) < 0.15] = 0.0  # rows with zero weights, some whole
    g.edata["w"] = w
    order = rng.permutation(n)
    _, d1, e1 = sample_neighbors(g, order, k, prob="w", seed=5).edges()
    _, d2, e2 = sample_neighbors(g, np.sort(order), k, prob="w", seed=5).edges()
    assert np.array_equal(e1[np.argsort(d1, kind="stable")], e2[np.argsort(d2, kind="stable")])
    positive = np.bincount(dst[w > 0], minlength=n)
    assert np.array_equal(np.bincount(d1, minlength=n), np.minimum(positive, k))
    assert np.all(w[e1] > 0) and np.unique(e1).size == e1.size
    assert np.array_equal(dst[e1], d1)


def test_smallest_first_selects_the_smallest():
    rng = np.random.default_rng(0)
    for n in (1, 2, 5, 16, 17, 40, 100, 256):
        for need in sorted({1, n // 3, n // 2, n - 1, n} - {0}):
            a = np.empty(n + 16, dtype=np.int64)
            vals = rng.choice(1 << 40, size=n, replace=False)
            a[:n] = vals
            _smallest_first(a, n, need)
            assert sorted(a[:n].tolist()) == sorted(vals.tolist())  # a permutation
            assert set(a[:need].tolist()) == set(np.sort(vals)[:need].tolist()), (n, need)


def test_fast_negative_log_is_accurate():
    rng = np.random.default_rng(1)
    u = np.concatenate([rng.random(20000), np.logspace(-300, -1e-12, 2000),
                        1.0 - np.logspace(-16, -1, 200), [2**-0.5, 0.5, 2**-1022]])
    u = u[(u > 0) & (u < 1)]
    got = _neg_logs(u)
    assert np.max(np.abs(got / -np.log(u) - 1.0)) < 1e-14


def test_weighted_long_row_fallback_is_exact():
    # one weight dominates a 300-edge row: rejection keeps drawing it and gives up, and the
    # exponential keys finish over the whole (long, sorted) row: the rest must be uniform
    deg, k, n = 300, 3, 3000
    g = stars(n, deg)
    w = np.ones(deg)
    w[7], w[11] = 1e7, 0.0
    g.edata["p"] = np.tile(w, n)
    _, dst, eids = sample_neighbors(g, np.arange(n), k, prob="p", seed=5).edges()
    pos = (eids % deg).reshape(n, k)
    assert np.all(np.bincount(dst) == k)
    assert all(len(set(r)) == k for r in pos.tolist())
    assert np.all((pos == 7).any(axis=1)) and not (pos == 11).any()
    rest = np.bincount(pos[pos != 7], minlength=deg)
    keep = np.ones(deg, dtype=bool)
    keep[[7, 11]] = False
    assert stats.chisquare(rest[keep]).pvalue > ALPHA


def test_weighted_within_a_real_graph(blogcatalog):
    g = blogcatalog
    hub = int(np.argmax(g.in_degrees()))
    csr = g.in_csr()
    row_eids = csr.eids[csr.indptr[hub]:csr.indptr[hub + 1]]
    w = g.edata["w"][row_eids].astype(np.float64)
    counts = np.zeros(len(row_eids))
    index = {e: i for i, e in enumerate(row_eids.tolist())}
    for s in range(40):  # the same node with 40 seeds x 50 draws
        e = sample_neighbors(g, [hub], 50, replace=True, prob="w", seed=s).edges()[2]
        for x in e.tolist():
            counts[index[x]] += 1
    # group positions by weight value (1..5): 5 cells with exact expected shares
    by_w = np.array([counts[w == v].sum() for v in range(1, 6)])
    share = np.array([v * (w == v).sum() for v in range(1, 6)], dtype=float)
    assert stats.chisquare(by_w, share / share.sum() * by_w.sum()).pvalue > ALPHA


@st.composite
def small_graphs(draw):
    n = draw(st.integers(1, 12))
    m = draw(st.integers(0, 40))
    src = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    dst = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    return gs.graph((np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64)), num_nodes=n)


@settings(max_examples=40, deadline=None)
@given(g=small_graphs(), k=st.integers(-1, 6), replace=st.booleans(),
       edge_dir=st.sampled_from(["in", "out"]), seed=st.integers(0, 2**40))
def test_invariants(g, k, replace, edge_dir, seed):
    seeds = np.arange(g.num_nodes())
    res = sample_neighbors(g, seeds, k, edge_dir=edge_dir, replace=replace, seed=seed)
    src, dst, eids = res.edges()
    s_true, d_true = g.find_edges(eids)
    assert np.array_equal(src, s_true) and np.array_equal(dst, d_true)
    own = dst if edge_dir == "in" else src
    deg = g.in_degrees() if edge_dir == "in" else g.out_degrees()
    counts = np.bincount(own, minlength=g.num_nodes())
    if k < 0:
        expect = deg
    elif replace:
        expect = np.where(deg > 0, k, 0)
    else:
        expect = np.minimum(k, deg)
    assert np.array_equal(counts, expect)
    if not replace:
        for v in seeds:
            e = eids[own == v]
            assert len(np.unique(e)) == len(e)


def test_exclude_edges_and_zero_weights_never_sampled():
    g = stars(50, 6)
    g.edata["p"] = np.tile([0.0, 1, 1, 1, 1, 1], 50)
    banned = np.arange(0, 300, 6) + 1  # position 1 of every row
    for replace in (False, True):
        e = sample_neighbors(g, np.arange(50), 3, replace=replace, prob="p",
                             exclude_edges=banned, seed=1).edges()[2]
        assert not np.isin(e % 6, [0, 1]).any()
    all_e = sample_neighbors(g, np.arange(50), -1, prob="p", exclude_edges=banned).edges()[2]
    assert np.array_equal(np.bincount(all_e % 6, minlength=6), [0, 0, 50, 50, 50, 50])


def test_whole_row_keeps_every_positive_weight():
    # 1e-300 is positive (so counted) but rounds to 0 in the alias thresholds: the whole row
    # must still yield both positive edges and never the zero one
    g = gs.graph(([1, 2, 3, 1, 2], [0, 0, 0, 4, 4]), num_nodes=5)
    g.edata["p"] = np.array([1.0, 1e-300, 0.0, 0.0, 2.0])
    for k in (-1, 2, 5):
        src, _, eids = sample_neighbors(g, [0, 4], k, prob="p", seed=1).edges()
        assert sorted(eids.tolist()) == [0, 1, 4], k
        assert np.array_equal(src, g.find_edges(eids)[0])


def test_heterograph_per_type_fanout(dblp):
    seeds = {"paper": np.arange(0, 2000, 7)}
    res = sample_neighbors(dblp, seeds, {"author2paper": 2, "term2paper": 3}, seed=4)
    assert res.src[("venue", "venue2paper", "paper")].size == 0
    for et, k in ((("author", "author2paper", "paper"), 2), (("term", "term2paper", "paper"), 3)):
        src, dst, eids = res.edges(et)
        assert np.array_equal(dblp.find_edges(eids, et)[0], src)
        deg = dblp.in_degrees(et)[seeds["paper"]]
        assert np.array_equal(np.bincount(dst, minlength=2000)[seeds["paper"]],
                              np.minimum(deg, k))


def test_reference_store_gives_identical_samples(pgl_toy_weighted, reference_store):
    g = pgl_toy_weighted
    ref = reference_store(g)
    seeds = {"i": np.arange(g.num_nodes("i")), "u": np.arange(0, g.num_nodes("u"), 2)}
    for kw in ({}, {"replace": True}, {"prob": "w"}, {"prob": "w", "replace": True}):
        a = sample_neighbors(g, seeds, 3, seed=9, **kw)
        b = sample_neighbors(ref, seeds, 3, seed=9, **kw)
        for et in a.src:
            assert np.array_equal(a.eids[et], b.eids[et]), (kw, et)


def test_same_seed_same_result_and_order():
    g = stars(30, 9)
    a = sample_neighbors(g, np.arange(30), 4, seed=1).edges()[2]
    b = sample_neighbors(g, np.arange(30)[::-1], 4, seed=1).edges()[2]
    assert np.array_equal(np.sort(a), np.sort(b))  # keyed by node ID, not by position
    assert not np.array_equal(a, sample_neighbors(g, np.arange(30), 4, seed=2).edges()[2])


def test_helpers():
    g = gs.graph(([0, 1, 2, 2], [2, 2, 0, 1]))
    assert degrees(g, [2, 0], edge_dir="in").tolist() == [2, 1]
    assert degrees(g, [2], edge_dir="out").tolist() == [2]
    assert [a.tolist() for a in find_edges(g, [3])] == [[2], [1]]
    sub = in_subgraph(g, [2, 1])
    assert sub.edges()[2].tolist() == [0, 1, 3]


@pytest.mark.parametrize(("call", "message"), [
    (lambda g: sample_neighbors(g, [5], 2), r"seeds of node type '_N': ID 5 at position 0 is "
     r"out of range \[0, 5\)"),
    (lambda g: sample_neighbors(g, [-1], 2), r"ID -1 at position 0 is out of range"),
    (lambda g: sample_neighbors(g, [0], {"nope": 2}), r"unknown edge type 'nope'; edge types "
     r"are \[\('_N', '_E', '_N'\)\]"),
    (lambda g: sample_neighbors(g, [0], -2), r"a fanout must be an int >= -1"),
    (lambda g: sample_neighbors(g, [0], 2, edge_dir="up"), r"edge_dir must be one of "
     r"\['in', 'out'\], got 'up'"),
    (lambda g: sample_neighbors(g, [1], 2, prob="neg"), r"prob feature 'neg' must be finite "
     r"and >= 0, but edge 0 has weight -1.0"),
    (lambda g: sample_neighbors(g, [1], 2, prob="missing"), r"no edge feature 'missing' to "
     r"use as prob; features are \['neg'\]"),
    (lambda g: sample_neighbors(g, [1], 2, backend="tpu"), r"unknown sampling backend 'tpu'; "
     r"available: \['cpu', 'cuda'\]"),
    (lambda g: sample_neighbors(g, {"x": [0]}, 2), r"unknown node type 'x'; node types are "
     r"\['_N'\]"),
    (lambda g: sample_neighbors(g, [0], 2, seed=-3), r"seed must be a non-negative int"),
    (lambda g: sample_neighbors(g, [0], 2, exclude_edges=[9]), r"exclude_edges of "
     r"\('_N', '_E', '_N'\): ID 9 at position 0 is out of range \[0, 4\)"),
])
def test_errors(call, message):
    g = gs.graph(([0, 1, 2, 3], [1, 2, 3, 4]), num_nodes=5)
    g.edata["neg"] = np.array([-1.0, 1.0, 1.0, 1.0])
    with pytest.raises(ValidationError, match=message):
        call(g)


def test_hetero_seeds_need_a_dict(dblp):
    with pytest.raises(ValidationError, match=r"seeds: the graph has node types \['author', "
                       r"'paper', 'term', 'venue'\]; pass a dict"):
        sample_neighbors(dblp, [0], 2)


def test_malformed_store_output_is_rejected(reference_store):
    class Broken(reference_store):
        def neighbors(self, ids, etype, *, edge_dir="in"):
            csr = super().neighbors(ids, etype, edge_dir=edge_dir)
            return gs.CSR(csr.indptr[:-1], csr.indices, csr.eids)

    g = gs.graph(([0, 1], [1, 0]))
    with pytest.raises(ValidationError, match=r"neighbors of \('_N', '_E', '_N'\): the store "
                       r"returned a malformed CSR for 2 rows \(indptr length 2"):
        sample_neighbors(Broken(g), [0, 1], 1)
