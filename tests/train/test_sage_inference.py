"""Layer-wise full-neighbour inference of the GraphSAGE examples (evaluation)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import graphshard as gs
from graphshard.sparse import SparseRows
from graphshard.store import as_store

pytest.importorskip("torch", reason="needs torch (pip install 'graphshard[train]')")
import torch

from graphshard.train._sage_model import inference, mean_adjacency, sage_class


def _blocks_reference(model, g, ids, num_layers):
    """Logits of ``ids`` through the training forward pass on full-neighbour blocks."""
    sb = gs.sampling.sample_blocks(g, ids, [-1] * num_layers, seed=0)
    x = np.asarray(g.ndata["feat"])[sb.input_nodes["_N"]].astype(np.float32)
    model.eval()
    with torch.no_grad():
        return model(sb.blocks, torch.from_numpy(x)).numpy()


def _model(in_dim, hidden, out_dim, layers, normalize=False):
    torch.manual_seed(0)
    return sage_class(torch)(in_dim, hidden, out_dim, layers, 0.5, normalize)


def test_mean_adjacency_rows_average_in_neighbours():
    # node 3 has no in-edges; the edge 0 -> 2 is listed twice and counts twice
    g = gs.graph((np.array([0, 0, 1, 2, 3]), np.array([2, 2, 2, 0, 1])), num_nodes=4)
    a = mean_adjacency(as_store(g), "_N").toarray()
    expected = np.zeros((4, 4), np.float32)
    expected[2, 0], expected[2, 1] = 2 / 3, 1 / 3
    expected[0, 2] = expected[1, 3] = 1.0
    np.testing.assert_allclose(a, expected, rtol=1e-6)


@pytest.mark.parametrize(("hidden", "normalize"), [(16, False), (4, False), (16, True)])
def test_layerwise_equals_forward_on_full_blocks(sbm_graph, hidden, normalize):
    """(8 features: aggregate first with 16 hidden units, project first with 4.)"""
    model = _model(8, hidden, 3, 3, normalize)
    logits = inference(torch, model, as_store(sbm_graph), "_N", "feat")
    assert logits.shape == (600, 3) and logits.dtype == np.float32
    assert model.training  # inference leaves the model in training mode
    ids = np.arange(0, 600, 7, dtype=np.int64)
    np.testing.assert_allclose(logits[ids], _blocks_reference(model, sbm_graph, ids, 3),
                               rtol=1e-4, atol=1e-5)


def test_cora_sparse_features_give_the_dense_result(cora):
    """Real data (Cora, 1433 bag-of-words features): the same logits from a dense feature,
    a SparseRows feature, and the blocks forward pass; nodes without in-edges included."""
    model = _model(1433, 16, 7, 2)
    dense_logits = inference(torch, model, as_store(cora), "_N", "feat")
    ids = np.arange(0, cora.num_nodes(), 11, dtype=np.int64)
    np.testing.assert_allclose(dense_logits[ids], _blocks_reference(model, cora, ids, 2),
                               rtol=1e-4, atol=1e-5)
    g = gs.graph(cora.edges(), num_nodes=cora.num_nodes())
    g.ndata["feat"] = SparseRows.from_scipy(sp.csr_matrix(np.asarray(cora.ndata["feat"])))
    sparse_logits = inference(torch, model, as_store(g), "_N", "feat")
    np.testing.assert_allclose(sparse_logits, dense_logits, rtol=1e-4, atol=1e-5)
    assert (dense_logits.argmax(1) == sparse_logits.argmax(1)).mean() > 0.999


def test_normalize_shrinks_rows_longer_than_one_before_the_activation():
    """Shchur et al.'s GraphSAGE normalisation: a row is divided by its L2 norm where that
    exceeds 1 (a shorter row is kept), then ReLU; the last layer is normalised too."""
    model = _model(3, 4, 2, 2, normalize=True).eval()
    out = torch.tensor([[3.0, -4.0, 0.0, 0.0], [0.3, -0.4, 0.0, 0.0]])
    np.testing.assert_allclose(model.finish(0, out).numpy(),
                               [[0.6, 0.0, 0.0, 0.0], [0.3, 0.0, 0.0, 0.0]], rtol=1e-6)
    np.testing.assert_allclose(model.finish(1, torch.tensor([[6.0, 8.0]])).numpy(),
                               [[0.6, 0.8]], rtol=1e-6)
    plain = _model(3, 4, 2, 2).eval()
    np.testing.assert_allclose(plain.finish(1, torch.tensor([[6.0, 8.0]])).numpy(),
                               [[6.0, 8.0]])
