"""Fused sampling + features, the pipelined loader, Ragged features and the embedding's
autograd hook, on real Ray servers: the same answers as the whole graph / a dense model."""

from __future__ import annotations

import numpy as np
import pytest

import graphshard as gs
from graphshard.errors import ValidationError
from graphshard.store import as_store

FAN = [{"buys": 3, "follows": 2, "bought_by": 2}, {"buys": 2, "follows": 3, "bought_by": 1}]


def _same(batch, want, whole, name):
    assert len(batch.blocks.blocks) == len(want.blocks)
    for x, y in zip(batch.blocks.blocks, want.blocks, strict=True):
        for t in y.src_nodes:
            np.testing.assert_array_equal(x.src_nodes[t], y.src_nodes[t])
        for et in y.src:
            for a, b in ((x.src, y.src), (x.dst, y.dst), (x.eids, y.eids)):
                np.testing.assert_array_equal(a[et], b[et])
    for t, ids in want.input_nodes.items():
        col = whole.nodes[t].data.get(name) if name in whole.nodes[t].data else None
        if col is None:
            assert t not in batch.features
        elif isinstance(col, (gs.Ragged, gs.SparseRows)):
            assert type(batch.features[t]) is type(col)
            assert batch.features[t].equals(col.take(ids))
        else:
            np.testing.assert_array_equal(batch.features[t], np.asarray(col)[ids])


@pytest.mark.parametrize("k", [2, 4])
def test_fused_sampling_and_loader_equal_the_local_engine(shop_parts, shop_dist, k):
    whole, dg = shop_parts[k].whole, shop_dist[k]
    rng = np.random.default_rng(k)
    seeds = [{"i": rng.integers(0, 50, 6), "u": rng.integers(0, 90, 4)} for _ in range(5)]
    for opts in ({}, {"replace": True}):
        want = [gs.sampling.sample_blocks(whole, s, FAN, seed=7 + b, **opts)
                for b, s in enumerate(seeds)]
        _same(gs.distributed.sample_blocks(dg, seeds[0], FAN, features="feat", seed=7, **opts),
              want[0], whole, "feat")
        got = list(gs.distributed.BlockLoader(dg, seeds, FAN, features="feat", prefetch=3, seed=7,
                                       **opts))
        assert len(got) == 5
        for batch, w in zip(got, want, strict=True):
            _same(batch, w, whole, "feat")
    # a Ragged feature (only "u" has it), and a trainer co-located with one server
    co = gs.distributed.DistGraph(shop_parts[k].config, colocate=[0])
    want = gs.sampling.sample_blocks(whole, seeds[1], FAN, seed=3)
    for g in (dg, co):
        _same(gs.distributed.sample_blocks(g, seeds[1], FAN, features="tags", seed=3), want, whole,
              "tags")
    # a feature cache of hub nodes owned by remote servers: same rows, fewer fetched
    cache = co.cache_node_features("feat", "u", fraction=0.3)
    remote = ~np.isin(co.get_partition_book().nid2partid(np.arange(90), "u"), co.colocated)
    kept = cache.slots >= 0
    assert kept.sum() == min(27, remote.sum()) and not (kept & ~remote).any()
    assert co.feature_cache("u", "feat") is cache
    deg = sum(as_store(whole).degrees(np.arange(90), et, edge_dir="out")
              for et in whole.canonical_etypes if et[0] == "u")
    assert deg[kept].min() >= deg[remote & ~kept].max(initial=0)  # the hubs are kept
    np.testing.assert_array_equal(cache.rows[cache.slots[kept]],
                                  whole.nodes["u"].data["feat"][kept])
    with pytest.raises(ValidationError, match="only fixed-size rows are cached"):
        co.cache_node_features("tags", "u", fraction=0.5)
    for b, batch in enumerate(gs.distributed.BlockLoader(co, seeds, FAN, features="feat",
                                                  prefetch=2, seed=1)):
        _same(batch, gs.sampling.sample_blocks(whole, seeds[b], FAN, seed=1 + b), whole,
              "feat")
    ids = np.array([3, 89, 3, 0, 50, 17])
    np.testing.assert_array_equal(co.nodes["u"].data["feat"][ids],
                                  whole.nodes["u"].data["feat"][ids])
    assert co.cache_node_features("feat", "u", fraction=0) is None
    assert co.feature_cache("u", "feat") is None
    with pytest.raises(ValidationError, match="no node type has a feature 'nope'"):
        gs.distributed.sample_blocks(dg, seeds[0], FAN, features="nope")
    with pytest.raises(ValidationError, match="prefetch must be an int >= 1"):
        gs.distributed.BlockLoader(dg, seeds, FAN, prefetch=0)


def test_ragged_features_are_served(shop_parts, shop_dist):
    p, dg = shop_parts[4], shop_dist[4]
    col = dg.nodes["u"].data["tags"]
    assert col.ragged and col.shape == (90,)
    ids = np.array([5, 0, 89, 5, 44, 17])
    got = col[ids]
    orig = p.graph.nodes["u"].data["tags"]
    assert isinstance(got, gs.Ragged) and got.equals(orig.take(p.nids["u"][ids]))
    assert col[np.zeros(0, np.int64)].equals(orig.take(np.zeros(0, np.int64)))


def test_sparse_features_are_served(shop_parts, shop_dist):
    """Rows in the caller's order (repeats, every owner mixed), one SparseRows, from remote
    and co-located servers, in fused sample batches too; the feature cache refuses them."""
    ids = np.array([5, 0, 49, 5, 44, 17, 30, 1])
    for k in (1, 2, 4):
        p, dg = shop_parts[k], shop_dist[k]
        orig = p.graph.nodes["i"].data["bow"]
        col = dg.nodes["i"].data["bow"]
        assert col.layout == "sparse" and col.shape == (50, 12) and col.dtype == "float32"
        assert dg.feature_schema("node")["i/bow"] == ((12,), "float32")
        got = col[ids]
        assert isinstance(got, gs.SparseRows) and got.equals(orig.take(p.nids["i"][ids]))
        assert len(dg.node_features("i", "bow", np.zeros(0, np.int64))) == 0
    co = gs.distributed.DistGraph(shop_parts[4].config, colocate=[0, 2])
    whole = shop_parts[4].whole
    assert co.node_features("i", "bow", ids).equals(whole.nodes["i"].data["bow"].take(ids))
    seeds = {"i": np.array([3, 9, 41]), "u": np.array([2, 70])}
    want = gs.sampling.sample_blocks(whole, seeds, FAN, seed=5)
    for g in (shop_dist[4], co):
        _same(gs.distributed.sample_blocks(g, seeds, FAN, features="bow", seed=5), want, whole,
              "bow")
    with pytest.raises(ValidationError, match="is sparse: only fixed-size rows are cached"):
        co.cache_node_features("bow", "i", fraction=0.5)


def test_embedding_autograd_records_sparse_grads_like_a_dense_model(shop_dist):
    torch = pytest.importorskip("torch")
    dg = shop_dist[2]
    rng = np.random.default_rng(5)
    w0 = rng.normal(size=(50, 3)).astype(np.float32)
    embs = {}
    for cls in (gs.distributed.SparseSGD, gs.distributed.SparseAdagrad):
        emb = gs.distributed.DistEmbedding(50, 3, f"auto_{cls.__name__}", graph=dg)
        emb.weight[np.arange(50)] = w0
        embs[cls] = (emb, cls([emb], lr=0.1))
    dense = {cls: torch.nn.Parameter(torch.from_numpy(w0.copy())) for cls in embs}
    sgd, adagrad = gs.distributed.SparseSGD, gs.distributed.SparseAdagrad
    dense_opt = {sgd: torch.optim.SGD([dense[sgd]], lr=0.1),
                 adagrad: torch.optim.Adagrad([dense[adagrad]], lr=0.1, eps=1e-10)}
    proj = torch.from_numpy(rng.normal(size=(3,)).astype(np.float32))
    for _ in range(3):
        ids = torch.from_numpy(rng.integers(0, 50, (4, 5)))  # 2-D, with repeats
        for cls, (emb, opt) in embs.items():
            out = emb(ids)
            assert out.shape == (4, 5, 3)
            (torch.tanh(out @ proj) ** 2).sum().backward()
            opt.step()
            dense_opt[cls].zero_grad()
            (torch.tanh(dense[cls][ids] @ proj) ** 2).sum().backward()
            dense_opt[cls].step()
    for cls, (emb, opt) in embs.items():
        np.testing.assert_allclose(emb(np.arange(50)), dense[cls].detach().numpy(),
                                   rtol=1e-4, atol=1e-5)
        assert emb.pop_grads() is None  # step() consumed the recorded gradients
        with torch.no_grad():
            emb(torch.tensor([1, 2]))
        assert emb.pop_grads() is None
        for t in [emb.weight, *opt.state.values()]:
            t.delete()
