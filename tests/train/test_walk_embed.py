"""Skip-gram walk embeddings: training, heterogeneous metapaths, the embedding dump."""

from __future__ import annotations

import numpy as np
import pytest

import graphshard as gs

pytest.importorskip("torch", reason="needs torch (pip install 'graphshard[train]')")
from graphshard.train import (
    WalkEmbeddingResult,
    load_embeddings,
    save_embeddings,
    train_walk_embedding,
)

# Adagrad (the default before issue 27, and a DistGraph's): these tests check its path
KW = dict(walk_len=8, walk_times=2, win_size=2, neg_num=3, emb_size=8, lr=0.1, epochs=3,
          batch_size=256, seed=0, optimizer="adagrad", random_window=False,
          neg_distribution="uniform", subsample=0.0)


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


def test_curve_depends_on_the_ids(sbm_graph, tmp_path):
    """The README's claim is about reshuffled IDs: a local run on the partitioned graph
    (what a DistGraph's run equals, tests/train/test_dist_train.py) repeats itself, the
    original graph in its own IDs gives another curve."""
    gs.partition_graph(sbm_graph, "sbm", 2, tmp_path, part_method="random")
    whole = gs.distributed.assemble_graph(tmp_path / "sbm.json")
    kw = {**KW, "epochs": 1}
    shuffled = train_walk_embedding(whole, **kw).step_losses
    assert train_walk_embedding(gs.distributed.assemble_graph(tmp_path / "sbm.json"),
                                **kw).step_losses == shuffled
    assert train_walk_embedding(sbm_graph, **kw).step_losses != shuffled


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
        train_walk_embedding(sbm_graph, optimizer="ftrl")
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


def reference_pair_sgd(w_in, w_out, src, dst, neg, lr_first, lr_last):
    """word2vec's per-pair update, written plainly (float64) for the kernel test."""
    loss = 0.0
    for p in range(len(src)):
        lr = lr_first + (lr_last - lr_first) * p / max(len(src) - 1, 1)
        s, c = src[p], dst[p]
        acc = np.zeros(w_in.shape[1])
        for q, t in enumerate([c, *neg[p]]):
            if q > 0 and t == c:
                continue
            dot = float(w_in[s] @ w_out[t])
            label = 1.0 if q == 0 else 0.0
            prob = 1 / (1 + np.exp(-dot))
            loss -= np.log(prob if q == 0 else 1 - prob)
            g = lr * (label - prob)
            acc += g * w_out[t]
            w_out[t] += g * w_in[s]
        w_in[s] += acc
    return loss / len(src)


@pytest.mark.parametrize("shared", [False, True])
def test_pair_sgd_kernel_equals_reference(shared):
    from graphshard.train.kernels import sgns_pair_sgd

    rng = np.random.default_rng(1)
    w_in = rng.normal(size=(12, 6)).astype(np.float32)
    w_out = w_in if shared else rng.normal(size=(12, 6)).astype(np.float32)
    src, dst = rng.integers(0, 12, 40), rng.integers(0, 12, 40)
    neg = rng.integers(0, 12, (40, 3))
    neg[0, 1] = dst[0]  # a negative equal to the context is skipped
    ref_in = w_in.astype(np.float64)
    ref_out = ref_in if shared else w_out.astype(np.float64)
    want = reference_pair_sgd(ref_in, ref_out, src, dst, neg, 0.2, 0.01)
    got = sgns_pair_sgd(w_in, w_out, src, dst, neg, np.float32(0.2), np.float32(0.01))
    assert got == pytest.approx(want, rel=1e-4)
    np.testing.assert_allclose(w_in, ref_in, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(w_out, ref_out, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("context_table", [False, True])
def test_pair_sgd_with_linear_decay_learns(sbm_graph, context_table):
    kw = {**KW, "epochs": 3, "optimizer": "pair_sgd", "lr": 0.2, "lr_decay": "linear",
          "random_window": True}
    res = train_walk_embedding(sbm_graph, **kw, context_table=context_table)
    assert res.losses[-1] < res.losses[0]
    e = res.embeddings["_N"] / np.linalg.norm(res.embeddings["_N"], axis=1, keepdims=True)
    label = np.asarray(sbm_graph.ndata["label"])
    sim = e @ e.T
    assert sim[label[:, None] == label[None, :]].mean() > \
        sim[label[:, None] != label[None, :]].mean() + 0.1
    again = train_walk_embedding(sbm_graph, **kw, context_table=context_table)
    np.testing.assert_array_equal(again.embeddings["_N"], res.embeddings["_N"])


def test_linear_decay_schedule(sbm_graph, tmp_path):
    kw = {**KW, "epochs": 2, "optimizer": "pair_sgd", "lr": 0.05, "walk_times": 1}
    const = train_walk_embedding(sbm_graph, **kw, lr_decay="none")
    flat = train_walk_embedding(sbm_graph, **kw, lr_decay="linear", end_lr=0.05)
    np.testing.assert_array_equal(flat.embeddings["_N"], const.embeddings["_N"])
    dec = train_walk_embedding(sbm_graph, **kw, lr_decay="linear", end_lr=0.0)
    assert not np.array_equal(dec.embeddings["_N"], const.embeddings["_N"])

    def stop(epoch, metrics):
        raise KeyboardInterrupt  # after the first epoch's checkpoint

    with pytest.raises(KeyboardInterrupt):
        train_walk_embedding(sbm_graph, **kw, lr_decay="linear", end_lr=0.0,
                             checkpoint_dir=tmp_path, on_epoch=stop)
    # the second epoch resumes at the rate the whole run had there (half-way down)
    resumed = train_walk_embedding(sbm_graph, **kw, lr_decay="linear", end_lr=0.0,
                                   checkpoint_dir=tmp_path)
    np.testing.assert_array_equal(resumed.embeddings["_N"], dec.embeddings["_N"])


def test_pair_sgd_and_decay_errors(sbm_graph, tmp_path):
    with pytest.raises(gs.ValidationError, match="lr_decay must be one of"):
        train_walk_embedding(sbm_graph, **KW, lr_decay="cosine")
    with pytest.raises(gs.ValidationError, match="end_lr must be a finite number >= 0"):
        train_walk_embedding(sbm_graph, **KW, lr_decay="linear", end_lr=-1.0)
    with pytest.raises(gs.ValidationError, match="'pair_sgd' updates local tables"):
        train_walk_embedding(tmp_path / "parts.json", optimizer="pair_sgd")


def test_subsampling_keeps_nodes_at_word2vec_rate():
    from graphshard.sampling import WalkResult
    from graphshard.train._walk_corpus import apply_subsampling

    rng = np.random.default_rng(0)
    keep = np.array([0.05, 0.3, 0.8, 1.0, 0.0])
    traces = rng.integers(0, 5, (4000, 12))
    traces[:, -2:] = -1  # padding stays padding
    walks = WalkResult(traces, np.zeros(12, np.int64), ["_N"])
    out = apply_subsampling(walks, keep, np.array([0, 5]), seed=3).traces
    for node, p in enumerate(keep):  # per node, within 4.5 binomial sd of the law
        n, k = (traces == node).sum(), (out == node).sum()
        assert abs(k - n * p) <= 4.5 * np.sqrt(n * p * (1 - p)) + 1e-9, (node, k, n * p)
    for row_in, row_out in zip(traces[:50], out[:50], strict=True):
        kept = row_out[row_out >= 0]
        assert (row_out[len(kept):] == -1).all()  # compacted: kept entries first, in order
        it = iter(row_in.tolist())
        assert all(x in it for x in kept.tolist())  # a subsequence of the walk
    again = apply_subsampling(walks, keep, np.array([0, 5]), seed=3).traces
    np.testing.assert_array_equal(again, out)
    assert not np.array_equal(apply_subsampling(walks, keep, np.array([0, 5]), seed=4).traces,
                              out)
    # a metapath walk (two column types) keeps its columns: a dropped entry becomes -1
    het = WalkResult(traces, np.arange(12, dtype=np.int64) % 2, ["u", "i"])
    masked = apply_subsampling(het, np.tile(keep, 2), np.array([0, 5, 10]), seed=3).traces
    assert ((masked == traces) | (masked == -1)).all()
    assert (masked[traces == 4] == -1).all() and (masked[traces == 3] == 3).all()


def test_keep_probability_counts_the_walks():
    from graphshard.train._walk_corpus import epoch_walks, keep_probability

    hub = gs.graph((np.zeros(30, np.int64), np.arange(1, 31)), num_nodes=31)
    g = gs.graph((np.concatenate([hub.edges()[0], hub.edges()[1]]),
                  np.concatenate([hub.edges()[1], hub.edges()[0]])), num_nodes=31)  # a star
    plans = [(None, "_N")]
    keep = keep_probability(g, plans, 6, 4, 50, 0, 0.01)
    counts = np.zeros(31, np.int64)
    for _, _, _, w in epoch_walks(g, plans, 6, 4, 50, 0, 0):
        counts += np.bincount(w.traces[w.traces >= 0], minlength=31)
    thr = 0.01 * counts.sum()
    np.testing.assert_allclose(keep, np.minimum(1, (np.sqrt(counts / thr) + 1) * thr / counts))
    assert keep[0] < 0.3 and (keep[1:] == 1).all()  # only the hub (half the entries) drops


def test_subsample_in_training(sbm_graph, tmp_path):
    kw = {**KW, "epochs": 2, "optimizer": "pair_sgd", "lr": 0.2, "lr_decay": "linear"}
    full = train_walk_embedding(sbm_graph, **kw)
    sub = train_walk_embedding(sbm_graph, **{**kw, "subsample": 1e-4})
    assert sub.num_pairs[0] < 0.8 * full.num_pairs[0]  # each node keeps about 0.3
    assert sub.losses[-1] < sub.losses[0]
    again = train_walk_embedding(sbm_graph, **{**kw, "subsample": 1e-4})
    np.testing.assert_array_equal(again.embeddings["_N"], sub.embeddings["_N"])
    for bad in (1.5, -0.1, "often"):
        with pytest.raises(gs.ValidationError, match=r"subsample .*must be a number in") as e:
            train_walk_embedding(sbm_graph, **{**KW, "subsample": bad})
        assert e.value.field == "subsample"
