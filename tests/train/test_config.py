"""``train_from_config``: PGL-style YAML keys, outputs, warm start."""

from __future__ import annotations

import numpy as np
import pytest

import graphshard as gs

pytest.importorskip("torch", reason="needs torch (pip install 'graphshard[train]')")
from graphshard.train import (
    TrainResult,
    WalkEmbeddingResult,
    train_from_config,
    validate_config,
)

pytest.importorskip("yaml", reason="needs pyyaml")

WALK = """\
task_name: deepwalk.test
generate: sbm:nodes=120,edges=600,blocks=2
walk_len: 6
walk_times: 2
win_size: 2
neg_num: 2
embed_size: 4
epochs: 2
batch_size: 128
lr: 0.1
seed: 0
output_path: out
"""


def test_walk_config_dumps_and_warm_starts(tmp_path, caplog):
    cfg = tmp_path / "walk.yaml"
    cfg.write_text(WALK)
    res = train_from_config(cfg)
    assert isinstance(res, WalkEmbeddingResult) and res.embeddings["_N"].shape == (120, 4)
    assert "ignoring keys ['task_name'] (a label of PGL's job scripts)" in caplog.text
    assert len((tmp_path / "out" / "_N.txt").read_text().splitlines()) == 120
    first = np.load(tmp_path / "out" / "_N.npy")
    # continue from the checkpoint: a second run starts from the saved tables
    cfg.write_text(WALK.replace("output_path: out", "output_path: out2\nwarm_start_from: out"))
    res2 = train_from_config(cfg)
    assert res2.losses[0] < res.losses[0]
    # dump only
    cfg.write_text(WALK.replace("output_path: out", "output_path: out3\nwarm_start_from: out\n"
                                "need_train: false"))
    assert train_from_config(cfg) is None
    np.testing.assert_array_equal(np.load(tmp_path / "out3" / "_N.npy"), first)


def test_sage_config(tmp_path):
    cfg = tmp_path / "sage.yaml"
    cfg.write_text("task: sage\ngenerate: sbm:nodes=300,edges=1800,blocks=3,features=8\n"
                   "fanouts: [5, 5]\nhidden_size: 8\nepochs: 2\nbatch_size: 64\nlr: 0.01\n")
    res = train_from_config(cfg)
    assert isinstance(res, TrainResult) and len(res.losses) == 2


@pytest.mark.parametrize(("text", "match"), [
    ("task: gcn\n", "task must be one of"),
    ("walk_len: 4\n", "name the graph"),
    ("- 1\n", "expected a mapping"),
])
def test_config_errors(tmp_path, text, match):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text(text)
    with pytest.raises(gs.ConfigError, match=match):
        train_from_config(cfg)


def test_walk_config_word2vec_keys(tmp_path):
    cfg = tmp_path / "w2v.yaml"
    cfg.write_text(WALK + "optimizer: pair_sgd\nlr_decay: linear\nend_lr: 0.001\n"
                   "random_window: true\n")
    res = train_from_config(cfg)
    assert res.embeddings["_N"].shape == (120, 4) and np.isfinite(res.losses).all()
    cfg.write_text(WALK + "lr_decay: sometimes\n")  # a ConfigError naming the key (issue 41)
    with pytest.raises(gs.ConfigError, match="lr_decay"):
        train_from_config(cfg)


def test_walk_config_sample_key(tmp_path):
    cfg = tmp_path / "sample.yaml"
    cfg.write_text(WALK + "sample: 1.0e-4\n")
    sub = train_from_config(cfg)
    cfg.write_text(WALK + "sample: 0\n")  # off (the default is 1e-4 since issue 27)
    full = train_from_config(cfg)
    assert sub.num_pairs[0] < 0.8 * full.num_pairs[0]
    cfg.write_text(WALK + "sample: 2\n")
    with pytest.raises(gs.ConfigError, match=r"sample must be a number in \[0, 1\), got 2"):
        train_from_config(cfg)


@pytest.mark.parametrize(("task", "extra", "match"), [
    ("sage", "epoch: 3\n", "unknown key 'epoch' for task 'sage'; did you mean 'epochs'?"),
    ("sage", "learning_rate: 0.1\n", "unknown key 'learning_rate' for task 'sage'"),
    ("sage", "meta_path: u2i-i2u\n", "unknown key 'meta_path' for task 'sage'"),
    ("link", "hidden_sise: 8\n", "did you mean 'hidden_size'?"),
    ("walk", "walk_lenght: 4\n", "did you mean 'walk_len'?"),
    ("walk", "e\u670d\u52a1pochs: 3\n", "did you mean 'epochs'?"),  # the seed's scrape noise
    ("walk", "hadoop_shard: true\n", "hadoop_shard is not supported: HDFS sharding"),
    ("walk", "sparse_type: ftrl\n", "sparse_type must be one of"),
    ("walk", "model_type: GATNE\n", "model_type must be one of"),
    ("walk", "emb_size: 8\nhidden_size: 16\n", "hidden_size 16 must equal emb_size 8"),
    ("walk", "lr: 0.1\nsparse_lr: 0.2\n", r"lr \(0.1\) and sparse_lr \(0.2\) name the same"),
    ("walk", "etype2files: u2i:e.txt\n", r"name the graph once; found \['generate', "),
])
def test_unknown_and_refused_keys_name_the_key(tmp_path, task, extra, match):
    """Every task refuses a key in no table (typos: issue 28), naming the closest one, and
    a walk config refuses what graphshard cannot honour, before any training."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"task: {task}\ngenerate: sbm:nodes=40,edges=160\noutput_path: out\n"
                   .replace("output_path: out\n", "" if task != "walk" else "output_path: out\n")
                   + extra)
    with pytest.raises(gs.ConfigError, match=match):
        train_from_config(cfg)
    assert not (tmp_path / "out").exists()


def test_sage_reads_weight_decay_and_eval_every(tmp_path):
    cfg = tmp_path / "sage.yaml"
    cfg.write_text("task: sage\ngenerate: sbm:nodes=120,edges=600,blocks=2,features=4\n"
                   "fanouts: [3]\nhidden_size: 4\nepochs: 2\nbatch_size: 64\n"
                   "weight_decay: 0.01\neval_every: 2\n")
    res = train_from_config(cfg)
    assert np.isnan(res.val_acc[0]) and not np.isnan(res.val_acc[1])  # evaluated every 2nd


HETERO = ("task: hetero\nhgb: {hgb}\nmodel: rgcn\nfanouts: [2, 2]\nhidden_size: 8\n"
          "epochs: 1\nbatch_size: 128\nlr: 0.01\n")


def test_hetero_config_reads_hgb(tmp_path, shared_file):
    pytest.importorskip("torch_geometric", reason="needs torch_geometric")
    from graphshard.train import HeteroResult

    cfg = tmp_path / "hetero.yaml"
    cfg.write_text(HETERO.format(hgb=shared_file("hgb", "ACM.zip")) + "patience: 3\n")
    res = train_from_config(cfg)
    assert isinstance(res, HeteroResult) and len(res.losses) == 1
    assert res.model.target == "paper" and res.samples == [726]


@pytest.mark.parametrize(("extra", "match"), [
    ("checkpoint_dir: ck\n", r"unknown key 'checkpoint_dir' for task 'hetero'; it reads \["),
    ("generate: sbm:nodes=50,edges=200\n", r"name the graph once; found \['generate', 'hgb'\]"),
    ("model: gat\n", "model must be one of"),
])
def test_hetero_config_errors(tmp_path, extra, match):
    pytest.importorskip("torch_geometric", reason="needs torch_geometric")
    cfg = tmp_path / "bad.yaml"
    text = HETERO.format(hgb="missing.zip") + extra
    if extra.startswith("model"):
        text = ("task: hetero\ngenerate: sbm:nodes=60,edges=300,blocks=2,features=3\n"
                + extra)
    cfg.write_text(text)
    with pytest.raises(gs.GraphshardError, match=match):
        train_from_config(cfg)


def test_warmup_reaches_the_trainer_and_is_checked(tmp_path):
    cfg = tmp_path / "sage.yaml"
    base = ("task: sage\ngenerate: sbm:nodes=120,edges=600,blocks=2,features=4\n"
            "fanouts: [3]\nhidden_size: 4\nepochs: 3\nbatch_size: 64\n")
    cfg.write_text(base + "warmup: 2\n")
    res = train_from_config(cfg)
    assert res.warmup == 2 and res.best_epoch == 2  # the only monitored epoch
    cfg.write_text(base + "warmup: -1\n")
    with pytest.raises(gs.ConfigError, match="warmup"):
        train_from_config(cfg)


def _shchur_npz(path, sizes: list[int]) -> None:
    """A gnn-benchmark-style .npz: a ring, 4 dense features, classes of the given sizes."""
    rng = np.random.default_rng(0)
    labels = rng.permutation(np.repeat(np.arange(len(sizes)), sizes))
    n = len(labels)
    np.savez(path, adj_data=np.ones(n), adj_indices=np.roll(np.arange(n), -1),
             adj_indptr=np.arange(n + 1), adj_shape=[n, n],
             attr_data=rng.random(4 * n).astype(np.float32),
             attr_indices=np.tile(np.arange(4), n), attr_indptr=np.arange(0, 4 * n + 1, 4),
             attr_shape=[n, 4], labels=labels)


def test_sage_config_reads_shchur_with_its_split(tmp_path):
    """Issue 43: ``shchur:`` names a gnn-benchmark file and trains on Shchur et al.'s split
    (20 training nodes per class), drawn with ``shchur_split_seed``."""
    from graphshard.datasets import load_shchur_npz

    _shchur_npz(tmp_path / "cs.npz", [60, 70, 55])
    cfg = tmp_path / "sage.yaml"
    cfg.write_text("task: sage\nshchur: cs.npz\nshchur_split_seed: 3\nfanouts: [3]\n"
                   "hidden_size: 4\nepochs: 2\nbatch_size: 16\n")
    res = train_from_config(cfg)
    assert isinstance(res, TrainResult) and res.samples == [60, 60]
    g = load_shchur_npz(tmp_path / "cs.npz", split_seed=3)
    assert res.test_acc and int(g.ndata["test_mask"].sum()) == 185 - 150
    _shchur_npz(tmp_path / "small.npz", [60, 30])
    cfg.write_text("task: sage\nshchur: small.npz\n")
    with pytest.raises(gs.ConfigError, match=r"sage\.yaml: shchur: .*small\.npz: shchur_split: "
                       r"class 1 has 30 nodes"):
        train_from_config(cfg)


HETERO_LINK = ("task: link\nhgb: TINY\netype: actor2movie\nreverse_etype: movie:movie2actor:actor\n"
               "fanouts: [3, 3]\nhidden_size: 8\nbatch_size: 32\neval_negatives: 5\nhits: [3]\n"
               "monitor: auc\nlr: 0.02\n")


def test_link_config_on_an_hgb_graph_trains_the_named_edge_type(tmp_path):
    """Issue 44 item 8 in YAML: ``task: link`` with ``hgb:`` and ``etype`` splits the named
    type's pairs here and trains the heterogeneous encoder on them, as train_link does."""
    pytest.importorskip("torch_geometric", reason="needs torch_geometric")
    from graphshard.datasets import load_hgb
    from graphshard.train import split_edges, train_link
    from shop import tiny_hgb

    tiny_hgb(tmp_path / "TINY")
    cfg = tmp_path / "link.yaml"
    cfg.write_text(HETERO_LINK + "epochs: 2\n")
    res = train_from_config(cfg)
    split = split_edges(load_hgb(tmp_path / "TINY").graph, etype="actor2movie",
                        reverse_etype=("movie", "movie2actor", "actor"), val_fraction=0.05,
                        test_fraction=0.1, num_negatives=5, seed=0)
    same = train_link(split, reverse_etype=("movie", "movie2actor", "actor"), fanouts=[3, 3],
                      hidden=8, batch_size=32, hits=(3,), monitor="auc", lr=0.02, epochs=2)
    assert split.etype == ("actor", "actor2movie", "movie")
    assert res.losses == same.losses and res.test == same.test


@pytest.mark.parametrize(("body", "field", "match"), [
    ("task: link\nhgb: TINY\n", "etype", r"must name the edge type to predict: the graph has "
     r"edge types \['actor:actor2movie:movie', 'movie:movie2actor:actor'\]"),
    ("task: link\nhgb: TINY\netype: cites\n", "etype", "names no edge type of the graph"),
    ("task: link\nhgb: TINY\netype: actor2movie\nreverse_etype: [movie, x, actor]\n",
     "reverse_etype", r"got \['movie', 'x', 'actor'\]"),
    ("task: link\nhgb: TINY\netype: 'a:b'\n", "etype", "'src:relation:dst'"),
    ("task: link\nhgb: TINY\netype: actor2movie\nnum_trainers: 2\n", "num_trainers",
     r"g = graphshard.datasets.load_hgb\('\S+/TINY'\).graph; graphshard.train."
     r"partition_for_link\(g, 'name', 2, '\S+/parts', etype='actor2movie'\)"),
    ("task: link\nhgb: TINY\netype: actor2movie\nmodel: hgt\nhidden_size: 10\n", "heads",
     r"must divide hidden_size \(10\)"),
    ("task: link\nhgb: TINY\netype: actor2movie\neval_fanouts: [2]\n", "eval_fanouts",
     "has 1 entries, but the model has 2 layers"),
    ("task: link\ngenerate: sbm:nodes=50,edges=200,features=2\nmodel: hgt\n", "model",
     "is read on a heterogeneous graph only"),
])
def test_link_config_edge_types_are_checked_before_training(tmp_path, body, field, match):
    from shop import tiny_hgb

    tiny_hgb(tmp_path / "TINY")
    cfg = tmp_path / "bad.yaml"
    cfg.write_text(body)
    with pytest.raises(gs.ConfigError, match=match) as err:
        validate_config(cfg)
    assert err.value.field == field


def test_preset_sets_the_papers_values_under_the_configs_own(tmp_path):
    """``preset: shchur`` brings Shchur et al.'s settings (64 hidden units, normalisation,
    patience 30, ...); a key the config gives wins (epochs: 2)."""
    from graphshard.train import preset

    cfg = tmp_path / "sage.yaml"
    cfg.write_text("task: sage\ngenerate: sbm:nodes=120,edges=600,blocks=2,features=4\n"
                   "fanouts: [3]\npreset: shchur\nepochs: 2\n")
    res = train_from_config(cfg)
    assert len(res.losses) == 2 and res.model.normalize
    two = train_from_config(cfg, overrides={"fanouts": [3, 3]})
    assert two.model.self_lins[0].out_features == preset("shchur", "sage")["hidden"] == 64
    cfg.write_text("task: sage\ngenerate: sbm:nodes=120,edges=600\npreset: shcur\n")
    with pytest.raises(gs.ConfigError, match=r"preset must be one of \['shchur'\], got "
                                             r"'shcur'") as err:
        validate_config(cfg)
    assert err.value.field == "preset"
    with pytest.raises(gs.ValidationError, match="has settings for \\['sage'\\], not for "
                                                 "task 'hetero'"):
        preset("shchur", "hetero")


def test_hgb_preset_sets_the_settings_of_the_configs_model(tmp_path, shared_file):
    """``preset: hgb`` in a hetero config brings HGB's settings for the config's own model
    (HGT: 8 heads, 64 hidden; R-GCN: 16 hidden); the config's keys win; a sage config cannot
    name it and a hetero config cannot name ``shchur``."""
    pytest.importorskip("torch_geometric", reason="needs torch_geometric")
    from graphshard.train import preset
    from graphshard.train.config import _prepare

    base = f"task: hetero\nhgb: {shared_file('hgb', 'ACM.zip')}\n"
    cfg = tmp_path / "h.yaml"
    cfg.write_text(base + "model: hgt\npreset: hgb\nepochs: 2\n")
    kw = _prepare(cfg, None).kwargs
    keys = ("heads", "hidden", "lr", "dropout", "weight_decay", "warmup", "patience")
    assert {k: kw[k] for k in keys} == {k: preset("hgb", "hgt")[k] for k in keys}
    assert kw["epochs"] == 2 and kw["model"] == "hgt" and kw["heads"] == 8
    cfg.write_text(base + "preset: hgb\nhidden: 8\n")
    kw = _prepare(cfg, None).kwargs
    assert kw["hidden"] == 8 and kw["lr"] == preset("hgb", "rgcn")["lr"] == 0.01
    assert kw["model"] == "rgcn" and kw["dropout"] == 0.0
    cfg.write_text(base + "preset: shchur\n")
    with pytest.raises(gs.ConfigError, match=r"preset must be one of \['hgb'\], got 'shchur'"):
        validate_config(cfg)
    cfg.write_text("task: sage\ngenerate: sbm:nodes=60,edges=300\npreset: hgb\n")
    with pytest.raises(gs.ConfigError, match=r"preset must be one of \['shchur'\], got 'hgb'"):
        validate_config(cfg)
