"""Issue 41 item 9: every walk option either changes the result or is refused, naming it.

``neg_distribution`` reached the negative sampler on every path already (the reported
"ignored" case was a run that trained no pair, refused since); what was left: values of the
wrong type cast silently (``random_window="false"`` was True, ``win_size=1.5`` was 1) or
raised raw errors (``int("abc")``), options set where they do nothing (``end_lr`` without
a decay, ``margin`` without the hinge loss, ``sage_*`` without ``sage_mode``) were
ignored, and a diverging rate returned NaN tables."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

import graphshard as gs
from graphshard.errors import ConfigError, ValidationError
from graphshard.train.walk_embed import check_walk_options
from graphshard.train.walk_options import WalkOptions

pytest.importorskip("torch", reason="needs torch (pip install 'graphshard[train]')")

KW = dict(walk_len=6, walk_times=2, win_size=2, neg_num=3, emb_size=8, epochs=1,
          subsample=0.0, seed=0, batch_size=64)
#: The training paths: word2vec's pair SGD, Adagrad tables, the torch model (hinge), and
#: the GNN encoder (sage_mode).
PATHS = {"pair_sgd": {"optimizer": "pair_sgd"}, "adagrad": {"optimizer": "adagrad"},
         "hinge": {"optimizer": "adagrad", "loss_type": "hinge"},
         "sage": {"optimizer": "adagrad", "sage_mode": True},
         "graphsage": {"optimizer": "adagrad", "sage_mode": True,
                       "sage_layer_type": "GraphSAGE"},
         "slots": {"optimizer": "adagrad", "slots": ["s_1"]}}


@pytest.fixture(scope="module")
def skewed() -> gs.Graph:
    """A hub joined to 59 leaves plus a path over the leaves (degrees 59 vs 2-3), with an
    edge weight and a slot feature."""
    hub, leaves = np.zeros(59, dtype=np.int64), np.arange(1, 60)
    src = np.concatenate([hub, leaves, leaves[:-1], leaves[1:]])
    dst = np.concatenate([leaves, hub, leaves[1:], leaves[:-1]])
    g = gs.graph((src, dst), num_nodes=60)
    g.edata["weight"] = (np.random.default_rng(0).random(len(src)) ** 4).astype(np.float32)
    g.ndata["s_1"] = (np.arange(60) % 5).astype(np.int64).reshape(-1, 1)
    return g


def _emb(g: gs.Graph, **kw) -> np.ndarray:
    from graphshard.train import train_walk_embedding

    return train_walk_embedding(g, **{**KW, **kw}).embeddings["_N"]


@pytest.mark.parametrize("path", ["hinge", "sage"])
def test_neg_distribution_changes_the_model_paths(skewed, path):
    """Uniform vs degree ** 0.75 negatives on a hub graph (the table paths:
    test_walk_neg_distribution.py)."""
    uni = _emb(skewed, **PATHS[path], neg_distribution="uniform")
    deg = _emb(skewed, **PATHS[path], neg_distribution="degree")
    assert not np.allclose(uni, deg)


# (path, field, value other than the default): every field acts on that path
EFFECTS = [
    ("pair_sgd", "walk_len", 5), ("pair_sgd", "walk_times", 3), ("pair_sgd", "win_size", 3),
    ("pair_sgd", "neg_num", 2), ("pair_sgd", "lr", 0.2), ("pair_sgd", "epochs", 2),
    ("pair_sgd", "batch_size", 16), ("pair_sgd", "seed", 1), ("pair_sgd", "end_lr", 0.01),
    ("pair_sgd", "lr_decay", "none"), ("adagrad", "lr_decay", "linear"),
    ("pair_sgd", "random_window", False), ("pair_sgd", "subsample", 0.01),
    ("pair_sgd", "neg_distribution", "uniform"), ("adagrad", "neg_distribution", "uniform"),
    ("pair_sgd", "walk_buffer", 7), ("pair_sgd", "context_table", False),
    ("adagrad", "loss_type", "nce"), ("hinge", "margin", 0.5), ("pair_sgd", "init_range", 0.3),
    ("adagrad", "softsign", True), ("adagrad", "sage_mode", True),
    ("sage", "sage_layer_type", "GraphSAGE"), ("sage", "sage_alpha", 0.3),
    ("sage", "samples", [2, 1]), ("sage", "infer_samples", [2, 2]),
    ("graphsage", "sage_act", "tanh"), ("sage", "use_degree_norm", True),
    ("adagrad", "weighted_sample", True), ("sage", "return_weight", True),
    ("graphsage", "dense_lr", 0.05), ("slots", "slot_feature_lr", 0.1),
    ("adagrad", "slots", ["s_1"]), ("adagrad", "optimizer", "sgd"),
    ("hinge", "gcl_loss", "simgcl_loss"), ("sage", "hcl", True),
]


@pytest.mark.parametrize(("path", "field", "value"), EFFECTS, ids=[
    f"{p}-{f}" for p, f, _ in EFFECTS])
def test_each_option_changes_the_result_where_it_acts(skewed, path, field, value):
    assert not np.allclose(_emb(skewed, **PATHS[path]),
                           _emb(skewed, **{**PATHS[path], field: value}))


def test_the_audit_covers_every_option():
    """Each field is in EFFECTS, or is the one with a documented no-effect contract
    (infer_batch_size bounds memory only: test_graph4rec.py) or the metapath/pair names
    (checked against the graph's types: test_walk_embed.py)."""
    covered = {f for _, f, _ in EFFECTS} | {"emb_size", "infer_batch_size", "metapath",
                                            "exclude_pairs"}
    assert set(WalkOptions.names()) == covered


@pytest.mark.parametrize(("field", "value"), [
    ("random_window", "false"), ("softsign", "no"), ("sage_mode", 2), ("context_table", "x"),
    ("win_size", 1.5), ("walk_len", "8"), ("walk_len", 0), ("neg_num", float("inf")),
    ("emb_size", 2**63), ("epochs", "abc"), ("seed", -1), ("batch_size", None),
    ("lr", float("inf")), ("lr", "x"), ("end_lr", float("nan")), ("margin", float("nan")),
    ("init_range", True), ("sage_alpha", "0.5"), ("samples", [1.5, 2]), ("samples", 3),
    ("slots", [1]), ("slots", [""]), ("metapath", 3), ("exclude_pairs", 5),
    ("infer_batch_size", 0.5), ("walk_buffer", []), ("dense_lr", None),
    ("gcl_loss", "simgcl"), ("gcl_loss", True), ("gcl_loss", 0), ("hcl", "yes"),
])
def test_a_value_of_the_wrong_type_or_range_is_refused(field, value):
    with pytest.raises(ValidationError, match=rf"{field} must be ") as info:
        WalkOptions(**{field: value})
    assert info.value.field == field


@pytest.mark.parametrize(("kw", "field", "needs"), [
    ({"optimizer": "adagrad", "end_lr": 0.01}, "end_lr", "lr_decay 'linear'"),
    ({"lr_decay": "none", "end_lr": 0.0}, "end_lr", "lr_decay 'linear'"),
    ({"margin": 1.0}, "margin", "loss_type 'hinge'"),
    ({"loss_type": "nce", "margin": 1.0}, "margin", "loss_type 'hinge'"),
    ({"sage_alpha": 0.5}, "sage_alpha", "sage_mode"),
    ({"samples": [5, 5], "infer_samples": [5, 5]}, "samples", "sage_mode"),
    ({"infer_samples": [5, 5]}, "infer_samples", "sage_mode"),
    ({"sage_layer_type": "GraphSAGE"}, "sage_layer_type", "sage_mode"),
    ({"return_weight": True}, "return_weight", "sage_mode"),
    ({"sage_mode": True, "sage_act": "tanh"}, "sage_act", "sage_layer_type 'GraphSAGE'"),
    ({"sage_mode": True, "dense_lr": 0.01}, "dense_lr", "sage_layer_type 'GraphSAGE'"),
    ({"sage_mode": True, "sage_layer_type": "GraphSAGE", "use_degree_norm": True},
     "use_degree_norm", "sage_layer_type 'LightGCN'"),
    ({"slot_feature_lr": 0.01}, "slot_feature_lr", "slots"),
    ({"hcl": True}, "hcl", "sage_mode"),
])
def test_an_option_that_would_do_nothing_is_refused(kw, field, needs):
    with pytest.raises(ValidationError, match=rf"{field}=.* acts only with .*{needs}") as info:
        WalkOptions(**kw)
    assert info.value.field == field


def test_end_lr_is_refused_where_auto_resolves_to_no_decay():
    """``lr_decay='auto'`` decays linearly with pair_sgd (a local graph) and not at all with
    Adagrad (a DistGraph, a partition config): end_lr is refused there, before serving."""
    assert WalkOptions(end_lr=0.01).final_lr == 0.01  # local: pair_sgd, linear
    with pytest.raises(ValidationError, match=r"end_lr=0\.01 acts only with") as info:
        check_walk_options("parts/g.json", {"end_lr": 0.01})
    assert info.value.field == "end_lr"


def test_a_diverging_run_is_refused_not_returned_as_nan(skewed):
    for path in ("pair_sgd", "adagrad"):
        with pytest.raises(ValidationError, match="training diverged; lower lr") as info:
            _emb(skewed, **PATHS[path], lr=1e30)
        assert info.value.field == "lr"


@pytest.mark.parametrize(("extra", "key"), [
    ({"sparse_type": "adagrad", "end_lr": 0.01}, "end_lr"),
    ({"margin": 1.0}, "margin"),
    ({"sage_alpha": 0.5}, "sage_alpha"),
])
def test_a_config_key_that_would_do_nothing_is_one_line(tmp_path, extra, key):
    from graphshard.train.config import validate_config

    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump({"generate": "sbm:nodes=60,edges=300", "walk_len": 4,
                                    "sample": 0, **extra}))
    with pytest.raises(ConfigError, match=rf"w\.yaml: {key}: .*acts only with") as info:
        validate_config(path)
    assert info.value.field == key and "\n" not in str(info.value)
