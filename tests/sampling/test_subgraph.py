"""sample_subgraph: PyG's hop semantics (each node's in-edges sampled once) on real graphs."""

from __future__ import annotations

import numpy as np
import pytest

from graphshard.errors import ValidationError
from graphshard.sampling import sample_blocks, sample_subgraph
from graphshard.sampling.subgraph import check_unique_seeds


def check_subgraph(g, sub):
    """Edges exist with their IDs; each destination's edges come from one hop only."""
    for et in sub.row:
        src, dst = g.find_edges(sub.eids[et], et)
        assert np.array_equal(sub.nodes[et[0]][sub.row[et]], src)
        assert np.array_equal(sub.nodes[et[2]][sub.col[et]], dst)
        hop_of_edge = np.repeat(np.arange(len(sub.num_sampled_edges[et])),
                                sub.num_sampled_edges[et])
        bounds = np.cumsum([0, *sub.num_sampled_nodes[et[2]]])
        hop_of_dst = np.searchsorted(bounds, sub.col[et], side="right") - 1
        assert np.array_equal(hop_of_edge, hop_of_dst), et  # hop h samples hop h's nodes


def test_subgraph_homogeneous_real_graph(blogcatalog):
    sub = sample_subgraph(blogcatalog, [5, 17, 5, 300], [3, 2], seed=0)
    et = ("_N", "_E", "_N")
    assert sub.nodes["_N"][:3].tolist() == [5, 17, 300]
    assert sub.num_sampled_nodes["_N"][0] == 3
    assert sum(sub.num_sampled_nodes["_N"]) == len(sub.nodes["_N"])
    assert sub.num_sampled_edges[et][0] == 9  # every seed has >= 3 in-edges here
    check_subgraph(blogcatalog, sub)
    # hop 1 draws are the blocks' draws for the seeds (same keys, same salt)
    blocks = sample_blocks(blogcatalog, [5, 17, 300], [2, 3], seed=0)
    assert np.array_equal(np.sort(blocks.blocks[-1].eids[et]),
                          np.sort(sub.eids[et][:sub.num_sampled_edges[et][0]]))


def test_subgraph_heterograph(dblp):
    sub = sample_subgraph(dblp, {"author": np.arange(0, 300, 7)},
                          {"paper2author": [3, 0, 0], "author2paper": [0, 2, 0],
                           "term2paper": [0, 2, 1], "paper2term": [0, 0, 1],
                           "venue2paper": [0, 1, 0], "paper2venue": [0, 0, 1]}, seed=2)
    assert set(sub.nodes) == set(dblp.ntypes)
    assert sub.num_sampled_nodes["paper"][0] == 0 and sub.num_sampled_nodes["paper"][1] > 0
    check_subgraph(dblp, sub)


def test_subgraph_reference_store_is_identical(pgl_toy, reference_store):
    a = sample_subgraph(pgl_toy, {"u": np.arange(20)}, [2, 3], seed=4)
    b = sample_subgraph(reference_store(pgl_toy), {"u": np.arange(20)}, [2, 3], seed=4)
    for et in a.eids:
        assert np.array_equal(a.eids[et], b.eids[et])
        assert np.array_equal(a.row[et], b.row[et])


def test_duplicate_seed_check():
    check_unique_seeds(np.array([3, 1, 2]), "seeds")
    with pytest.raises(ValidationError, match="seed node 1 appears more than once"):
        check_unique_seeds(np.array([1, 2, 1]), "seeds")
