"""Skip-gram walk embeddings: training, heterogeneous metapaths, the embedding dump."""

from __future__ import annotations

import numpy as np
import pytest

import graphshard as gs

pytest.importorskip("torch", reason="needs torch (pip install 'graphshard[train]')")
from graphshard.examples import (
    WalkEmbeddingResult,
    load_embeddings,
    save_embeddings,
    train_walk_embedding,
)

KW = dict(walk_len=8, walk_times=2, win_size=2, neg_num=3, emb_size=8, lr=0.1, epochs=3,
          batch_size=256, seed=0)


@pytest.mark.parametrize("optimizer", ["adagrad", "sgd"])
def test_loss_falls(sbm_graph, optimizer):
    res = train_walk_embedding(sbm_graph, **{**KW, "optimizer": optimizer,
                                             "lr": 0.1 if optimizer == "adagrad" else 5.0})
    assert isinstance(res, WalkEmbeddingResult)
    assert res.embeddings["_N"].shape == (600, 8)
    assert res.losses[-1] < res.losses[0]
    first, last = np.mean(res.step_losses[:5]), np.mean(res.step_losses[-5:])
    assert last < first
    assert len(res.num_pairs) == 3 and all(n > 0 for n in res.num_pairs)


@pytest.mark.parametrize("context_table", [False, True])
def test_embeddings_separate_communities(sbm_graph, context_table):
    res = train_walk_embedding(sbm_graph, **{**KW, "epochs": 4}, context_table=context_table)
    assert res.losses[-1] < res.losses[0]
    e = res.embeddings["_N"] / np.linalg.norm(res.embeddings["_N"], axis=1, keepdims=True)
    label = np.asarray(sbm_graph.ndata["label"])
    sim = e @ e.T
    same = sim[label[:, None] == label[None, :]].mean()
    other = sim[label[:, None] != label[None, :]].mean()
    assert same > other + 0.1


def test_same_seed_same_tables(sbm_graph):
    a = train_walk_embedding(sbm_graph, **{**KW, "epochs": 1})
    b = train_walk_embedding(sbm_graph, **{**KW, "epochs": 1})
    np.testing.assert_array_equal(a.embeddings["_N"], b.embeddings["_N"])


def test_metapath_heterograph():
    rng = np.random.default_rng(0)
    u, i = rng.integers(0, 30, 200), rng.integers(0, 20, 200)
    g = gs.heterograph({("u", "u2click2i", "i"): (u, i), ("i", "i2click2u", "u"): (i, u)},
                       {"u": 30, "i": 20})
    res = train_walk_embedding(g, metapath="u2click2i-i2click2u;i2click2u-u2click2i",
                               **{**KW, "epochs": 4, "batch_size": 64})
    assert res.embeddings["u"].shape == (30, 8) and res.embeddings["i"].shape == (20, 8)
    assert res.losses[-1] < res.losses[0]


def test_dump_is_complete(sbm_graph, tmp_path):
    res = train_walk_embedding(sbm_graph, **{**KW, "epochs": 1})
    paths = save_embeddings(res, tmp_path)
    assert sorted(p.name for p in paths) == ["_N.npy", "_N.txt"]
    lines = (tmp_path / "_N.txt").read_text().splitlines()
    assert len(lines) == 600
    nid, vec = lines[7].split("\t")
    assert int(nid) == 7 and len(vec.split(" ")) == 8
    np.testing.assert_allclose([float(v) for v in vec.split(" ")], res.embeddings["_N"][7],
                               rtol=1e-5)
    np.testing.assert_array_equal(load_embeddings(tmp_path)["_N"], res.embeddings["_N"])


def test_warm_start_and_errors(sbm_graph):
    init = {"_N": np.zeros((600, 8), dtype=np.float32)}
    res = train_walk_embedding(sbm_graph, **{**KW, "epochs": 1}, init=init)
    assert res.losses[0] == pytest.approx(np.log(2) * 4, rel=0.2)  # all scores start at 0
    with pytest.raises(gs.ValidationError, match="optimizer must be one of"):
        train_walk_embedding(sbm_graph, optimizer="adam")
    with pytest.raises(gs.ValidationError, match="expected \\(600, 8\\)"):
        train_walk_embedding(sbm_graph, **KW, init={"_N": np.zeros((3, 8), np.float32)})


def test_stopped_run_resumes_from_checkpoint(sbm_graph, tmp_path):
    kw = {**KW, "epochs": 3, "walk_times": 1}
    whole = train_walk_embedding(sbm_graph, **kw)

    def stop(epoch, metrics):
        if epoch == 1:
            raise KeyboardInterrupt  # stopped after the second epoch's checkpoint

    with pytest.raises(KeyboardInterrupt):
        train_walk_embedding(sbm_graph, **kw, checkpoint_dir=tmp_path, on_epoch=stop)
    resumed = train_walk_embedding(sbm_graph, **kw, checkpoint_dir=tmp_path)
    assert resumed.step_losses == whole.step_losses and resumed.num_pairs == whole.num_pairs
    np.testing.assert_array_equal(resumed.embeddings["_N"], whole.embeddings["_N"])
    with pytest.raises(gs.ValidationError, match="written with win_size=2"):
        train_walk_embedding(sbm_graph, **{**kw, "win_size": 3}, checkpoint_dir=tmp_path)
