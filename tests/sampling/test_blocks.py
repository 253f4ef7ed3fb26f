"""Multi-hop blocks, reindexing, the loader and torch output."""

from __future__ import annotations

import numpy as np
import pytest

import graphshard as gs
from graphshard.errors import ValidationError
from graphshard.sampling import NeighborLoader, sample_blocks, to_torch


def check_block(g, b):
    for t, dst in b.dst_nodes.items():
        src_nodes = b.src_nodes[t]
        assert np.array_equal(src_nodes[:len(dst)], dst)  # destination nodes first
        assert len(np.unique(src_nodes)) == len(src_nodes)
    for et, eids in b.eids.items():
        gsrc, gdst = g.find_edges(eids, et)
        assert np.array_equal(b.src_nodes[et[0]][b.src[et]], gsrc)
        assert np.array_equal(b.dst_nodes[et[2]][b.dst[et]], gdst)


def test_blocks_homogeneous_real_graph(blogcatalog):
    seeds = np.array([5, 17, 5, 300, 2])
    out = sample_blocks(blogcatalog, seeds, [4, 3], seed=0)
    assert out.output_nodes["_N"].tolist() == [5, 17, 300, 2]
    assert len(out.blocks) == 2
    last, first = out.blocks[1], out.blocks[0]
    assert np.array_equal(last.dst_nodes["_N"], out.output_nodes["_N"])
    assert np.array_equal(first.dst_nodes["_N"], last.src_nodes["_N"])
    assert np.array_equal(out.input_nodes["_N"], first.src_nodes["_N"])
    assert np.all(np.bincount(last.dst["_N", "_E", "_N"]) == 3)  # seeds get fanouts[-1]
    assert np.all(np.bincount(first.dst["_N", "_E", "_N"]) == 4)
    for b in out.blocks:
        check_block(blogcatalog, b)
    node_ids, edge_index = out.to_pyg()[1]
    assert edge_index.shape == (2, last.num_edges())
    assert np.array_equal(node_ids[edge_index[1]], np.repeat(out.output_nodes["_N"], 3))


def test_blocks_heterograph(dblp):
    seeds = {"author": np.arange(0, 400, 3)}
    out = sample_blocks(dblp, seeds, {"author2paper": [2, 0], "paper2author": [3, 5],
                                      "paper2term": [2, 0], "term2paper": [1, 0],
                                      "paper2venue": [1, 0], "venue2paper": [1, 0]}, seed=1)
    last = out.blocks[1]
    assert set(last.src_nodes) == {"author", "paper"}
    for b in out.blocks:
        check_block(dblp, b)
    assert out.blocks[0].num_edges() > 0


def test_blocks_reference_store_is_identical(pgl_toy, reference_store):
    seeds = {"u": np.arange(20)}
    a = sample_blocks(pgl_toy, seeds, [2, 3], seed=4)
    b = sample_blocks(reference_store(pgl_toy), seeds, [2, 3], seed=4)
    for x, y in zip(a.blocks, b.blocks, strict=True):
        for et in x.eids:
            assert np.array_equal(x.eids[et], y.eids[et])
            assert np.array_equal(x.src[et], y.src[et])


def test_fanout_list_errors():
    g = gs.heterograph({("u", "a", "i"): ([0], [0]), ("i", "b", "u"): ([0], [0])})
    with pytest.raises(ValidationError, match=r"fanouts: every edge type needs a list with one "
                       r"fanout per layer, all of the same length; got lengths"):
        sample_blocks(g, {"u": [0]}, {"a": [1, 2], "b": [1]})
    with pytest.raises(ValidationError, match=r"fanouts: expected a non-empty list"):
        sample_blocks(g, {"u": [0]}, [])
    with pytest.raises(ValidationError, match=r"unknown edge type 'c'"):
        sample_blocks(g, {"u": [0]}, [{"c": 1}])


def test_loader_matches_direct_calls_and_prefetch(blogcatalog):
    seeds = np.arange(0, 1000, 3)
    kw = {"batch_size": 64, "shuffle": True, "seed": 7}
    a = list(NeighborLoader(blogcatalog, seeds, [3, 2], prefetch=2, **kw))
    b = list(NeighborLoader(blogcatalog, seeds, [3, 2], prefetch=0, **kw))
    assert len(a) == len(b) == 6
    got = np.sort(np.concatenate([x.output_nodes["_N"] for x in a]))
    assert np.array_equal(got, seeds)
    for x, y in zip(a, b, strict=True):
        assert np.array_equal(x.input_nodes["_N"], y.input_nodes["_N"])
    loader = NeighborLoader(blogcatalog, seeds, [3, 2], batch_size=64, drop_last=True)
    assert len(list(loader)) == len(loader) == 5


def test_loader_propagates_errors_and_stops_early(blogcatalog):
    loader = NeighborLoader(blogcatalog, np.arange(500), [2], batch_size=10, prefetch=1)
    it = iter(loader)
    next(it)
    it.close()  # the worker thread must not hang on a full queue
    with pytest.raises(ValidationError, match="batch_size must be >= 1"):
        NeighborLoader(blogcatalog, np.arange(5), [2], batch_size=0)


def test_to_torch():
    torch = pytest.importorskip("torch")
    out = sample_blocks(gs.graph(([1, 2], [0, 0])), [0], [2], seed=0)
    t = to_torch(out)
    assert isinstance(t.blocks[0].src[("_N", "_E", "_N")], torch.Tensor)
    assert t.output_nodes["_N"].tolist() == [0]
    assert isinstance(t.blocks[0].edge_index(), torch.Tensor)
    loader = NeighborLoader(gs.graph(([1, 2], [0, 0])), [0], [2], as_torch=True, seed=0)
    assert isinstance(next(iter(loader)).input_nodes["_N"], torch.Tensor)


def test_to_block_of_a_sampled_frontier(dblp):
    """DGL's to_block on a frontier of sampled in-edges of DBLP papers: destination nodes
    first, every edge kept in frontier order, NID/EID columns, then the caller's columns."""
    seeds = np.array([7, 3, 1000, 52, 9])
    res = gs.sampling.sample_neighbors(dblp, {"paper": seeds}, 4, seed=1)
    frontier = gs.heterograph({et: (res.src[et], res.dst[et]) for et in res.src},
                              num_nodes_dict={t: dblp.num_nodes(t) for t in dblp.ntypes})
    block = gs.sampling.to_block(frontier, {"paper": seeds})
    # one destination type: a plain column, as DGL gives; several source types: per type
    assert block.dstdata[gs.sampling.NID].tolist() == seeds.tolist()
    assert block.num_edges() == res.num_edges() > 0
    for et in res.src:  # edges map back to the sampled ones, in order
        assert np.array_equal(block.src_nodes[et[0]][block.src[et]], res.src[et])
        assert np.array_equal(block.dst_nodes[et[2]][block.dst[et]], res.dst[et])
        assert block.edata[gs.sampling.EID][et].tolist() == list(range(len(res.src[et])))
    assert np.array_equal(block.src_nodes["paper"][:len(seeds)], seeds)
    for t, ids in block.srcdata[gs.sampling.NID].items():
        assert len(np.unique(ids)) == len(ids) and np.array_equal(ids, block.src_nodes[t])
    # homogeneous frontier, destinations inferred (ascending), then DGL-style data writes
    src, dst = res.src[("author", "author2paper", "paper")], res.dst[
        ("author", "author2paper", "paper")]
    homo = gs.graph((src + 20000, dst), num_nodes=30000)
    b = gs.sampling.to_block(homo)
    assert b.dstdata[gs.sampling.NID].tolist() == sorted(set(dst.tolist()))
    check_block(homo, b)
    b.srcdata["h"] = np.zeros((b.num_src_nodes(), 2))
    with pytest.raises(ValidationError, match="has 1 rows, expected"):
        b.edata["w"] = np.zeros(1)


def test_to_block_errors():
    g = gs.graph(([0, 1, 2], [1, 2, 2]))
    with pytest.raises(ValidationError, match=r"edge 0 of type \('_N', '_E', '_N'\) ends at "
                       "node 1, which is not in dst_nodes"):
        gs.sampling.to_block(g, [2])
    with pytest.raises(ValidationError, match="node 2 at position 2 is listed twice"):
        gs.sampling.to_block(g, [2, 1, 2])
    with pytest.raises(ValidationError, match="ID 3 at position 0 is out of range"):
        gs.sampling.to_block(g, [3])
    with pytest.raises(ValidationError, match="to_block takes a Graph"):
        gs.sampling.to_block(gs.sampling.in_subgraph(g, [2]), [2])
