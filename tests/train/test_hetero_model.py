"""The R-GCN layers of ``train/_hetero_model.py``: the sparse per-relation mean equals PyG's
``RGCNConv`` forward (outputs and gradients), and trimming layers by hop leaves the seeds'
outputs and the gradients unchanged."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch", reason="needs torch (pip install 'graphshard[train]')")
pytest.importorskip("torch_geometric", reason="needs torch_geometric (graphshard[pyg])")
import torch

from graphshard.train._hetero_model import hetero_class, mean_adjacency, mean_blocks
from graphshard.train.hetero_trainer import HeteroTrainer

ETYPES = [("u", "buys", "i"), ("i", "bought_by", "u"), ("t", "tags", "i"), ("u", "knows", "u"),
          ("i", "tagged", "t")]
SIZES = {"u": 40, "i": 30, "t": 5}


def _spec(**kw: object) -> dict:
    return {"model": "rgcn", "ntypes": list(SIZES), "etypes": [list(e) for e in ETYPES],
            "in_dims": {"u": 6, "i": 4}, "num_nodes": dict(SIZES), "hidden": 8,
            "num_layers": 2, "heads": 2, "dropout": 0.0, "num_classes": 3, "target": "i",
            **kw}


def _graph(seed: int) -> tuple[dict, dict, dict]:
    """Random features and edges: unsorted, with parallel edges, nodes without in-edges
    of some relation, and a relation ("i", "tagged", "t") left out of the batch."""
    g = torch.Generator().manual_seed(seed)
    x = {"u": torch.randn(SIZES["u"], 6, generator=g), "i": torch.randn(SIZES["i"], 4,
                                                                          generator=g)}
    n_id = {nt: torch.arange(n) for nt, n in SIZES.items()}
    edges = {}
    for s, r, d in ETYPES[:-1]:
        m = 3 * SIZES[d]
        src = torch.randint(0, SIZES[s], (m,), generator=g)
        dst = torch.randint(0, SIZES[d] - 3, (m,), generator=g)  # the last 3 get none
        edges[(s, r, d)] = torch.stack([src, dst])
    return x, n_id, edges


def _pyg_embed(model: object, x: dict, n_id: dict, edges: dict) -> dict:
    """The old path: every layer PyG's ``RGCNConv`` forward on the batch as one homogeneous
    graph with an edge-type vector, ReLU after each layer."""
    ntypes, etypes = model.ntypes, model.etypes
    sizes = [SIZES[nt] for nt in ntypes]
    offset = dict(zip(ntypes, np.cumsum([0, *sizes[:-1]]).tolist(), strict=True))
    eis, kinds = [], []
    for k, et in enumerate(etypes):
        if et in edges:
            eis.append(edges[et] + torch.tensor([[offset[et[0]]], [offset[et[2]]]]))
            kinds.append(torch.full((edges[et].shape[1],), k))
    ei, kind = torch.cat(eis, 1), torch.cat(kinds)
    h = model.encode(x, n_id)
    for conv in model.convs:
        out = torch.relu(conv(torch.cat([h[nt] for nt in ntypes]), ei, kind))
        h = dict(zip(ntypes, out.split(sizes), strict=True))
    return h


@pytest.mark.parametrize("seed", [0, 1])
def test_sparse_rgcn_equals_pyg_rgcnconv(seed):
    torch.manual_seed(seed)
    model = hetero_class(torch)(_spec())
    x, n_id, edges = _graph(seed)
    ours, ref = model.embed(x, n_id, edges), _pyg_embed(model, x, n_id, edges)
    for nt in SIZES:
        assert ours[nt].shape == ref[nt].shape
        torch.testing.assert_close(ours[nt], ref[nt], rtol=1e-5, atol=1e-5)
    grads = []
    for embed in (model.embed, lambda *a: _pyg_embed(model, *a)):
        model.zero_grad()
        h = embed(x, n_id, edges)
        sum((v * torch.linspace(-1, 1, v.shape[1])).sum() for v in h.values()).backward()
        grads.append({n: p.grad.clone() for n, p in model.named_parameters()
                      if p.grad is not None})
    assert grads[0].keys() == grads[1].keys() and "convs.0.weight" in grads[0]
    for name in grads[0]:
        torch.testing.assert_close(grads[0][name], grads[1][name], rtol=1e-4, atol=1e-5)


def test_mean_adjacency_is_the_mean_of_each_relation():
    ei = torch.tensor([[4, 0, 2, 2, 1], [1, 0, 1, 1, 3]])  # node 1: sources 4, 2, 2; 2: none
    a = mean_adjacency(torch, ei, 4, 5).to_dense()
    want = torch.zeros(4, 5)
    want[0, 0], want[1, 4], want[1, 2], want[3, 1] = 1, 1 / 3, 2 / 3, 1
    torch.testing.assert_close(a, want)


@pytest.fixture(scope="module")
def shop_trainer(shop_hetero):
    return HeteroTrainer(shop_hetero, target="i", model="rgcn", feat="feat", label="label",
                         train_mask="train_mask", val_mask="val_mask", test_mask="test_mask",
                         fanouts=[5, 3], eval_fanouts=[-1, -1], hidden=16, heads=2,
                         batch_size=16, eval_batch_size=64, lr=1e-2, dropout=0.0,
                         weight_decay=0.0, seed=0, multilabel=None)


@pytest.mark.parametrize("sampled", ["fanouts", "full"])
def test_trimmed_layers_give_the_seeds_the_same_logits(shop_trainer, sampled):
    """A loader batch: with the per-hop counts the layers compute fewer nodes, and the seeds'
    logits and every gradient are those of the untrimmed layers."""
    tr = shop_trainer
    sampler, ids = (tr.sampler, tr.train) if sampled == "fanouts" else (tr.eval_sampler,
                                                                          tr.val)
    batch = next(iter(tr._loader(sampler, ids, [np.arange(min(16, len(ids)))])))
    x = {nt: batch[nt].x for nt in tr.spec["in_dims"]}
    n_id = {nt: batch[nt].n_id for nt in batch.node_types}
    edges = {et: batch[et].edge_index for et in batch.edge_types}
    hops = ({nt: batch[nt].num_sampled_nodes for nt in batch.node_types},
            {et: batch[et].num_sampled_edges for et in batch.edge_types})
    seeds = int(batch["i"].batch_size)
    assert sum(hops[0]["i"]) > seeds  # something to trim
    model = tr.model
    out = []
    for h in (hops, None):
        model.zero_grad()
        logits = model(x, n_id, edges, seeds, h)
        (logits * torch.linspace(-1, 1, logits.shape[1])).sum().backward()
        out.append((logits.detach(), {n: p.grad.clone() for n, p in model.named_parameters()
                                      if p.grad is not None}))
    assert out[0][0].shape == (seeds, model.head.out_features)
    torch.testing.assert_close(out[0][0], out[1][0], rtol=1e-5, atol=1e-6)
    assert out[0][1].keys() == out[1][1].keys()
    for name in out[0][1]:
        torch.testing.assert_close(out[0][1][name], out[1][1][name], rtol=1e-4, atol=1e-6)
    trimmed = model.embed(x, n_id, edges, hops)
    assert {nt: v.shape[0] for nt, v in trimmed.items()} == {nt: c[0] for nt, c in
                                                             hops[0].items()}


def test_hop_counts_must_fit_the_layers():
    et = ("a", "r", "a")
    ei = torch.tensor([[1, 2], [0, 0]])
    with pytest.raises(ValueError, match=r"node type 'a' has per-hop counts \[1, 2\] for 3 "
                                         r"nodes; expected 3 counts"):
        mean_blocks(torch, [et], {"a": 3}, {et: ei}, 2, ({"a": [1, 2]}, {et: [2]}))
