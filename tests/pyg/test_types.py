"""How graphshard's types look to PyG (issue 46 items 1 and 2): a homogeneous graph has no
types, as in PyG's own stores, so PyG's loaders (with PyG's sampler or ours) give ``Data``
and take plain index tensors; a graph with a named type, even a single one, gives
``HeteroData``.  Written from the behaviour of PyG's own tests and examples
(``test_custom_neighbor_loader``, ``graph_sage_unsup``), not copied.  PyG's own sampler needs
pyg-lib or torch-sparse (not installed here: graphshard's sampler replaces them), so the
loaders run with graphshard's."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import graphshard as gs

pytest.importorskip("torch_geometric")

from torch_geometric.data import Data, HeteroData
from torch_geometric.loader import (
    LinkLoader,
    NodeLoader,
)

from graphshard.pyg import NeighborSampler, remote_backend


def _edges_are_real(batch: Data, g: gs.Graph) -> None:
    src, dst = g.edges()
    have = set(zip(src.tolist(), dst.tolist(), strict=True))
    got = zip(batch.n_id[batch.edge_index[0]].tolist(), batch.n_id[batch.edge_index[1]].tolist(),
              strict=True)
    assert all(pair in have for pair in got)


def test_homogeneous_stores_have_no_types(cora):
    """PyG's NeighborLoader over our remote backend crashed ('NeighborSampler' object has no
    attribute 'colptr'): the stores named the types ('_N', '_E', '_N'), so PyG took the graph
    for a typed one.  PyG's homogeneous stores have edge type and group None."""
    fs, gstore = remote_backend(cora, node_attrs={"x": "feat"})
    assert [a.edge_type for a in gstore.get_all_edge_attrs()] == [None]
    assert [(a.group_name, a.attr_name) for a in fs.get_all_tensor_attrs()] == [(None, "x")]
    src, dst = gstore[None, "coo"]
    want_src, want_dst = cora.edges()
    np.testing.assert_array_equal(src.numpy(), want_src)
    np.testing.assert_array_equal(dst.numpy(), want_dst)
    assert fs[None, "x", torch.tensor([3])].shape == (1, 1433)


def test_homogeneous_node_loader_takes_a_tensor_and_gives_data(cora):
    data = remote_backend(cora, node_attrs={"x": "feat", "y": "label"},
                          sparse_layout="dense")
    seeds = torch.arange(0, 2708, 13)
    loader = NodeLoader(data, node_sampler=NeighborSampler(cora, [5, 3], seed=1),
                        input_nodes=seeds, batch_size=50)
    batch = next(iter(loader))
    assert isinstance(batch, Data)
    assert batch.x.shape == (batch.num_nodes, 1433) and batch.batch_size == 50
    assert torch.equal(batch.n_id[:50], seeds[:50])
    np.testing.assert_array_equal(batch.y.numpy(), cora.ndata["label"][batch.n_id.numpy()])
    _edges_are_real(batch, cora)


def test_homogeneous_link_loader_gives_data_with_x(cora):
    """graph_sage_unsup's link loader returned HeteroData, so batch.x failed; users also
    had to name ('_N', '_E', '_N') to pass edge_label_index (a remote backend takes
    ``(edge type, index)``: now ``(None, index)``, as for PyG's homogeneous stores)."""
    data = remote_backend(cora, node_attrs={"x": "feat"}, sparse_layout="dense")
    src, dst = cora.edges()
    label_index = torch.from_numpy(np.stack([src[:64], dst[:64]]))
    loader = LinkLoader(data, link_sampler=NeighborSampler(cora, [4, 2], seed=2),
                        edge_label_index=(None, label_index), neg_sampling="binary",
                        batch_size=32)
    batch = next(iter(loader))
    assert isinstance(batch, Data)
    assert batch.x.shape == (batch.num_nodes, 1433)
    eli = batch.edge_label_index
    assert eli.shape == (2, 64) and batch.edge_label.tolist() == [1.0] * 32 + [0.0] * 32
    assert torch.equal(batch.n_id[eli[:, :32]], label_index[:, :32])
    _edges_are_real(batch, cora)


def test_one_named_type_gives_hetero_data():
    """A graph of ('paper', 'cites', 'paper') came back as Data, so batch['paper'] raised
    KeyError; PyG gives HeteroData for a typed graph."""
    rng = np.random.default_rng(0)
    src, dst = rng.integers(0, 60, 300), rng.integers(0, 60, 300)
    g = gs.heterograph({("paper", "cites", "paper"): (src, dst)}, {"paper": 60})
    g.nodes["paper"].data["feat"] = rng.normal(size=(60, 3)).astype(np.float32)
    data = remote_backend(g, node_attrs={"x": "feat"})
    seeds = torch.arange(0, 60, 4)
    loader = NodeLoader(data, node_sampler=NeighborSampler(g, [3], seed=0),
                        input_nodes=("paper", seeds), batch_size=8)
    batch = next(iter(loader))
    assert isinstance(batch, HeteroData)
    paper = batch["paper"]
    assert torch.equal(paper.n_id[:8], seeds[:8])
    np.testing.assert_array_equal(paper.x.numpy(), g.nodes["paper"].data["feat"][paper.n_id])
    with pytest.raises(Exception, match="give the loader input_nodes=\\(ntype, ids\\)"):
        next(iter(NodeLoader(data, node_sampler=NeighborSampler(g, [3], seed=0),
                             input_nodes=seeds, batch_size=8)))


def test_sparse_features_reach_a_pyg_model_dense_by_default():
    """Issue 46 item 5: our readers keep bag-of-words features sparse and the backend handed
    them out as sparse CSR tensors, which GraphSAGE refuses (index_select on SparseCsrCPU)."""
    from torch_geometric.nn import GraphSAGE

    rng = np.random.default_rng(3)
    n, dim = 200, 30
    g = gs.graph((rng.integers(0, n, 1200), rng.integers(0, n, 1200)), num_nodes=n)
    lengths = rng.integers(0, 4, n)
    g.ndata["bow"] = gs.SparseRows(np.concatenate([[0], np.cumsum(lengths)]),
                                   rng.integers(0, dim, int(lengths.sum())),
                                   np.ones(int(lengths.sum()), np.float32), dim)
    loader = NodeLoader(remote_backend(g, node_attrs={"x": "bow"}),
                        node_sampler=NeighborSampler(g, [4, 2], seed=0),
                        input_nodes=torch.arange(64), batch_size=32)
    batch = next(iter(loader))
    assert batch.x.layout == torch.strided and batch.x.shape == (batch.num_nodes, dim)
    np.testing.assert_array_equal(batch.x.numpy(),
                                  g.ndata["bow"].take(batch.n_id.numpy()).to_dense())
    out = GraphSAGE(dim, 8, num_layers=2)(batch.x, batch.edge_index)
    assert out.shape == (batch.num_nodes, 8)
