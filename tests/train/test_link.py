"""Link prediction: edge batches, training on a split graph, config and CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

import graphshard as gs

pytest.importorskip("torch", reason="needs torch (pip install 'graphshard[train]')")
from graphshard.sampling import reverse_edge_ids, sample_link_batch
from graphshard.train import LinkResult, split_edges, train_link

KW = dict(fanouts=[5, 5], hidden=16, batch_size=256, lr=1e-2, hits=(10,), seed=0)


def symmetric(g: gs.Graph) -> gs.Graph:
    s, d = (np.asarray(a) for a in g.edges())
    keep = s != d
    out = gs.graph((np.concatenate([s[keep], d[keep]]), np.concatenate([d[keep], s[keep]])),
                   num_nodes=g.num_nodes())
    out.ndata["feat"] = g.ndata["feat"]
    return out


@pytest.fixture(scope="module")
def sym_split(sbm_graph):
    return split_edges(symmetric(sbm_graph), num_negatives=50, seed=0)


def test_batch_excludes_its_edges_and_their_reverses(sym_split):
    g = sym_split.train_graph
    rev = reverse_edge_ids(g)
    src, dst = (np.asarray(a) for a in g.edges())
    assert (rev >= 0).all() and (src[rev] == dst).all() and (dst[rev] == src).all()
    eids = np.arange(0, 600, 7)
    for exclude, banned in (("self", eids), ("reverse", np.union1d(eids, rev[eids]))):
        b = sample_link_batch(g, eids, [-1, -1], num_negatives=3, exclude=exclude,
                              reverse_eids=rev, seed=5)
        nodes = b.blocks.output_nodes["_N"]
        np.testing.assert_array_equal(nodes[b.src], src[eids])
        np.testing.assert_array_equal(nodes[b.dst], dst[eids])
        assert b.neg_dst.shape == (len(eids), 3) and len(np.unique(nodes)) == len(nodes)
        used = np.concatenate([blk.eids[("_N", "_E", "_N")] for blk in b.blocks.blocks])
        assert not np.isin(used, banned).any()
        assert np.isin(rev[eids], used).any() == (exclude == "self")  # fanout -1: all others
    again = sample_link_batch(g, eids, [5], num_negatives=3, seed=5)
    np.testing.assert_array_equal(again.neg_dst, sample_link_batch(g, eids, [5], num_negatives=3,
                                                                   seed=5).neg_dst)
    with pytest.raises(gs.ValidationError, match="needs reverse_eids"):
        sample_link_batch(g, eids, [5], exclude="reverse")


def test_train_link_learns_and_reports_the_best_epoch(sym_split):
    seen = []
    res = train_link(sym_split, epochs=2, on_epoch=lambda e, m: seen.append(m), **KW)
    assert isinstance(res, LinkResult) and len(res.losses) == 2
    assert res.losses[-1] < res.losses[0]
    assert set(res.val) == {"auc", "mrr", "hits@10"} and res.monitor == "mrr"
    best = res.best_epoch
    assert res.val["mrr"][best] == max(res.val["mrr"])
    assert res.test_at_best_val["auc"] == res.test["auc"][best] > 0.7  # chance: 0.5
    assert res.summary()["test"]["mrr"] == res.test["mrr"][best]
    assert list(seen[0])[:4] == ["loss", "val_auc", "test_auc", "val_mrr"]
    assert res.samples == [sym_split.train_graph.num_edges()] * 2
    # the same seed gives the same run; an MLP decoder trains too
    again = train_link(sym_split, epochs=1, **KW)
    assert again.losses == pytest.approx(res.losses[:1], rel=1e-6)  # float sums
    mlp = train_link(sym_split, epochs=1, decoder="mlp", **KW)
    assert np.isfinite(mlp.losses[0]) and mlp.model.decoder is not None


def test_train_link_errors(sym_split, sbm_graph):
    with pytest.raises(gs.ValidationError, match="needs held-out edges"):
        train_link(sbm_graph)
    with pytest.raises(gs.ValidationError, match="monitor must be one of"):
        train_link(sym_split, monitor="hits@50", hits=(10,))
    with pytest.raises(gs.ValidationError, match="decoder must be one of"):
        train_link(sym_split, decoder="bilinear", epochs=1)
    with pytest.raises(gs.ValidationError, match="needs the path of a partition config"):
        train_link(sym_split, num_trainers=2)


def test_link_config_and_cli(tmp_path):
    pytest.importorskip("yaml", reason="needs pyyaml")
    from click.testing import CliRunner

    from graphshard.cli import cli

    cfg = tmp_path / "link.yaml"
    cfg.write_text("task: link\ngenerate: sbm:nodes=200,edges=1200,blocks=2,features=8\n"
                   "fanouts: [5]\nhidden_size: 8\nepochs: 6\nbatch_size: 256\nlr: 0.01\n"
                   "neg_num: 2\nhits: [5]\neval_negatives: 20\ntest_fraction: 0.2\n"
                   "patience: 1\nmin_delta: 1.0\nmonitor: auc\n")
    result = CliRunner().invoke(cli, ["-q", "train", str(cfg), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["result"] == "LinkResult" and len(doc["epochs"]) == 2
    assert doc["best"]["best_epoch"] == 0 and doc["best"]["stopped_early"] is True
    assert set(doc["best"]["test"]) == {"auc", "mrr", "hits@5"}
    assert set(doc["epochs"][0]) >= {"losses", "val_auc", "test_hits@5", "samples"}
    result = CliRunner().invoke(cli, ["-q", "train", str(cfg), "--plot",
                                      str(tmp_path / "c.png")])
    assert result.exit_code == 0, result.output
    assert "best validation epoch: 0 of epochs 0-1, by val auc" in result.output
    assert "  test at epoch 0: auc " in result.output
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"
