"""DistGraph on real (local) Ray servers: same answers and samples as the whole graph."""

from __future__ import annotations

import numpy as np
import pytest

import graphshard as gs
from graphshard.errors import ValidationError
from graphshard.store import GraphStore, as_store

KS = [1, 2, 4]


def _same_blocks(a, b):
    assert len(a.blocks) == len(b.blocks)
    for x, y in zip(a.blocks, b.blocks, strict=True):
        for t in y.src_nodes:
            np.testing.assert_array_equal(x.src_nodes[t], y.src_nodes[t])
        for et in y.src:
            np.testing.assert_array_equal(x.src[et], y.src[et])
            np.testing.assert_array_equal(x.dst[et], y.dst[et])
            np.testing.assert_array_equal(x.eids[et], y.eids[et])


@pytest.mark.parametrize("k", KS)
def test_schema_and_features_equal_original_under_id_maps(shop_parts, shop_dist, k):
    p, dg = shop_parts[k], shop_dist[k]
    assert isinstance(dg, GraphStore)
    assert dg.ntypes == p.whole.ntypes and dg.canonical_etypes == p.whole.canonical_etypes
    assert dg.num_nodes("u") == 90 and dg.num_edges("buys") == 400
    assert dg.get_partition_book().num_partitions() == k
    ids = np.array([5, 0, 89, 5, 44])
    np.testing.assert_array_equal(dg.nodes["u"].data["feat"][ids],
                                  p.graph.nodes["u"].data["feat"][p.nids["u"][ids]])
    eids = np.arange(0, 400, 9)[::-1]
    et = ("u", "buys", "i")
    np.testing.assert_array_equal(dg.edges["buys"].data["w"][eids],
                                  p.graph.edges["buys"].data["w"][p.eids[et][eids]])
    assert dg.nodes["i"].data["label"].shape == (50,)


@pytest.mark.parametrize("k", KS)
@pytest.mark.parametrize("edge_dir", ["in", "out"])
def test_structure_queries_equal_whole_graph(shop_parts, shop_dist, k, edge_dir):
    ref, dg = as_store(shop_parts[k].whole), shop_dist[k]
    for et in dg.canonical_etypes:
        ids = np.random.default_rng(1).integers(0, dg.num_nodes(et[2] if edge_dir == "in"
                                                               else et[0]), 70)
        a, b = dg.neighbors(ids, et, edge_dir=edge_dir), ref.neighbors(ids, et,
                                                                       edge_dir=edge_dir)
        for x, y in ((a.indptr, b.indptr), (a.indices, b.indices), (a.eids, b.eids)):
            np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(dg.degrees(ids, et, edge_dir=edge_dir),
                                      ref.degrees(ids, et, edge_dir=edge_dir))
        eids = np.arange(dg.num_edges(et))[::-3]
        for x, y in zip(dg.find_edges(eids, et), ref.find_edges(eids, et), strict=True):
            np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("k", KS)
def test_sampling_identical_to_local_engine(shop_parts, shop_dist, k):
    whole, dg = shop_parts[k].whole, shop_dist[k]
    seeds = {"i": np.arange(0, 50, 3), "u": np.array([7, 3, 7])}
    for opts in ({}, {"replace": True}, {"prob": "w"}):
        fan = [{"buys": 3, "follows": 2, "bought_by": 2}, {"buys": 2, "follows": 3,
                                                           "bought_by": 1}]
        if opts.get("prob"):
            fan = [{"buys": 3, "follows": 2}] * 2
        want = gs.sampling.sample_blocks(whole, seeds, fan, seed=11, **opts)
        _same_blocks(gs.sampling.sample_blocks(dg, seeds, fan, seed=11, **opts), want)
        _same_blocks(gs.sampling.sample_blocks(dg, seeds, fan, seed=11, **opts), want)
    excl = {"buys": np.arange(0, 400, 2)}
    a = gs.sampling.sample_neighbors(dg, {"i": np.arange(50)}, 4, exclude_edges=excl, seed=5)
    b = gs.sampling.sample_neighbors(whole, {"i": np.arange(50)}, 4, exclude_edges=excl,
                                     seed=5)
    for et in b.src:
        for x, y in zip(a.edges(et), b.edges(et), strict=True):
            np.testing.assert_array_equal(x, y)
    assert not np.isin(a.eids[("u", "buys", "i")], excl["buys"]).any()
    walk_args = ([0, 5, 9, 33], 7, "buys-bought_by")
    np.testing.assert_array_equal(
        gs.sampling.random_walk(dg, *walk_args, walk_times=2, seed=4).traces,
        gs.sampling.random_walk(whole, *walk_args, walk_times=2, seed=4).traces)
    n2v = {"p": 0.5, "q": 2.0, "walk_times": 2, "etype": "follows", "seed": 4}
    np.testing.assert_array_equal(
        gs.sampling.node2vec_walk(dg, [0, 5, 9, 33, 71], 8, **n2v).traces,
        gs.sampling.node2vec_walk(whole, [0, 5, 9, 33, 71], 8, **n2v).traces)
    np.testing.assert_array_equal(
        gs.sampling.negative_sample(dg, 40, ntype="i", distribution="degree", seed=2),
        gs.sampling.negative_sample(whole, 40, ntype="i", distribution="degree", seed=2))


def test_sampling_distribution_matches_exact_probabilities(shop_parts, shop_dist):
    """Many seeded one-edge draws around one node follow the edge weights (chi-square)."""
    scipy_stats = pytest.importorskip("scipy.stats")
    whole, dg = shop_parts[4].whole, shop_dist[4]
    deg = as_store(whole).degrees(np.arange(50), "buys")
    node = int(np.argmax(deg))
    nb = as_store(whole).neighbors([node], "buys")
    w = np.asarray(whole.edges["buys"].data["w"])[nb.eids].astype(np.float64)
    counts = dict.fromkeys(nb.eids.tolist(), 0)
    for s in range(600):
        e = gs.sampling.sample_neighbors(dg, {"i": [node]}, 1, prob="w", seed=s).eids[
            ("u", "buys", "i")]
        counts[int(e[0])] += 1
    obs = np.array([counts[e] for e in nb.eids.tolist()])
    res = scipy_stats.chisquare(obs, w / w.sum() * obs.sum())
    assert res.pvalue > 1e-3


def test_colocated_partitions_give_the_same_answers(ray_cluster, shop_parts, shop_dist):
    p = shop_parts[2]
    dg = gs.distributed.DistGraph(p.config, colocate=[0])
    assert dg.colocated == [0] and dg.handle is None  # servers shared with shop_dist[2]
    ids = np.arange(90)[::-1]
    np.testing.assert_array_equal(dg.nodes["u"].data["feat"][ids],
                                  p.whole.nodes["u"].data["feat"][ids])
    fan = [2, 3]
    _same_blocks(gs.sampling.sample_blocks(dg, {"i": [1, 2, 40]}, fan, seed=1),
                 gs.sampling.sample_blocks(p.whole, {"i": [1, 2, 40]}, fan, seed=1))


def test_bad_requests_raise_clear_errors(shop_dist):
    dg = shop_dist[2]
    with pytest.raises(ValidationError, match=r"'u' node IDs: ID 90 at position 1"):
        dg.node_features("u", "feat", [0, 90])
    with pytest.raises(ValidationError, match="no node feature 'u/nope'"):
        dg.nodes["u"].data["nope"]
    with pytest.raises(ValidationError, match="unknown node type 'x'"):
        dg.num_nodes("x")
