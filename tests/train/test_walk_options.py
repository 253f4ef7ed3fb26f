"""WalkOptions: validation, overrides, and the checkpoint parameters old checkpoints match."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import graphshard as gs
from graphshard.train.walk_options import WalkOptions

DATA = Path(__file__).parent / "data" / "walk_checkpoints"

# The defaults of the first checkpoints, pinned (optimizer, lr, lr_decay, neg_distribution
# context_table, random_window and subsample have other defaults since issue 27)
BASE = dict(walk_len=6, walk_times=2, win_size=2, neg_num=2, emb_size=4, epochs=2,
            batch_size=64, seed=3, optimizer="adagrad", lr=0.1, lr_decay="none",
            neg_distribution="uniform", context_table=False, random_window=False,
            subsample=0.0)
WORD2VEC = {**BASE, "optimizer": "pair_sgd", "lr": 0.05, "lr_decay": "linear", "end_lr": 0.0,
            "random_window": True, "subsample": 0.01, "context_table": True,
            "neg_distribution": "degree", "walk_buffer": 16}
METAPATH = {**BASE, "optimizer": "sgd", "lr_decay": "linear", "metapath": ("u2i-i2u",),
            "exclude_pairs": [("u", "u")]}

# The params dicts the code before WalkOptions wrote for these options (read back from its
# checkpoint.json files): a checkpoint resumes only if they stay exactly these.
_SIZES = {"walk_len": 6, "walk_times": 2, "win_size": 2, "neg_num": 2, "emb_size": 4}
PINNED = [
    (BASE, {"metapath": None, **_SIZES, "lr": 0.1, "batch_size": 64, "seed": 3,
            "optimizer": "adagrad", "neg_distribution": "uniform", "context_table": False,
            "walk_buffer": 5000}),
    (WORD2VEC, {"metapath": None, **_SIZES, "lr": 0.05, "batch_size": 64, "seed": 3,
                "optimizer": "pair_sgd", "neg_distribution": "degree", "context_table": True,
                "walk_buffer": 16, "lr_decay": "linear", "end_lr": 0.0, "epochs": 2,
                "random_window": True, "subsample": 0.01}),
    (METAPATH, {"metapath": ["u2i-i2u"], **_SIZES, "lr": 0.1, "batch_size": 64, "seed": 3,
                "optimizer": "sgd", "neg_distribution": "uniform", "context_table": False,
                "walk_buffer": 5000, "lr_decay": "linear", "end_lr": 1e-05, "epochs": 2}),
]


@pytest.mark.parametrize(("kw", "params"), PINNED, ids=["adagrad", "word2vec", "metapath"])
def test_checkpoint_params_are_pinned(kw, params):
    got = WalkOptions(**kw).checkpoint_params()
    assert got == params
    assert list(got) == list(params)  # the key order of checkpoint.json too


def test_fixture_checkpoints_hold_the_pinned_params():
    for name, (_, params) in zip(("adagrad", "word2vec"), PINNED[:2], strict=True):
        written = json.loads((DATA / name / "checkpoint.json").read_text())["params"]
        assert written == params and list(written) == list(params), name


def test_sizes_and_flags_are_normalised():
    o = WalkOptions(win_size=2.0, epochs=np.int64(2), lr=1, random_window=1, seed=np.int32(4))
    assert (o.win_size, o.epochs, o.lr, o.random_window, o.seed) == (2, 2, 1.0, True, 4)
    assert type(o.epochs) is int and type(o.lr) is float
    assert o.final_lr == pytest.approx(1e-4) and o.sample == 1e-4  # the default (issue 27)
    assert WalkOptions(end_lr=0.5).final_lr == 0.5


@pytest.mark.parametrize(("kw", "field", "match"), [
    ({"optimizer": "ftrl"}, "optimizer", "optimizer must be one of"),
    ({"lr_decay": "cosine"}, "lr_decay", "lr_decay must be one of"),
    ({"walk_buffer": 0}, "walk_buffer", "walk_buffer must be an integer >= 1 .*, got 0"),
    ({"neg_num": -1}, "neg_num", "neg_num must be an integer >= 1 .*, got -1"),
    ({"lr": 0.0}, "lr", "lr must be a finite number > 0"),
    ({"end_lr": -1.0}, "end_lr", "end_lr must be a finite number >= 0"),
    ({"subsample": "often"}, "subsample", r"subsample .*must be a number in \[0, 1\)"),
])
def test_bad_options_name_the_field(kw, field, match):
    with pytest.raises(gs.ValidationError, match=match) as e:
        WalkOptions(**kw)
    assert e.value.field == field


def test_options_are_frozen_and_replaceable():
    import dataclasses

    o = WalkOptions(walk_len=8)
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.walk_len = 9  # type: ignore[misc]
    assert dataclasses.replace(o, win_size=5) == WalkOptions(walk_len=8, win_size=5)
    with pytest.raises(gs.ValidationError, match="epochs must be an integer >= 1"):
        dataclasses.replace(o, epochs=0)


# --- with torch: train_walk_embedding takes the options --------------------------------

def _ring() -> gs.Graph:
    n = 30
    s = np.arange(n)
    src = np.concatenate([s, s, (s + 1) % n, (s + 7) % n])
    dst = np.concatenate([(s + 1) % n, (s + 7) % n, s, s])
    return gs.graph((src, dst), num_nodes=n)


def test_options_object_and_overrides_give_the_same_run():
    pytest.importorskip("torch", reason="needs torch (pip install 'graphshard[train]')")
    from graphshard.train import train_walk_embedding

    g = _ring()
    kw = {**BASE, "epochs": 1}
    by_kwargs = train_walk_embedding(g, **kw)
    by_options = train_walk_embedding(g, WalkOptions(**kw))
    mixed = train_walk_embedding(g, WalkOptions(**{**kw, "win_size": 5}), win_size=2)
    for res in (by_options, mixed):
        assert res.step_losses == by_kwargs.step_losses
        np.testing.assert_array_equal(res.embeddings["_N"], by_kwargs.embeddings["_N"])
    with pytest.raises(gs.ValidationError, match=r"unknown option\(s\) \['walk_length'\]; "
                       r"the options are \['metapath', 'walk_len'") as e:
        train_walk_embedding(g, walk_length=4)
    assert e.value.field == "walk_length"


@pytest.mark.parametrize(("name", "kw"), [("adagrad", BASE), ("word2vec", WORD2VEC)])
def test_checkpoint_of_the_old_code_resumes(tmp_path, name, kw):
    """Checkpoints written after epoch 1 of 2 by the code before WalkOptions (same graph,
    same options) resume, and end as an uninterrupted run of today's code.

    The fixtures were written on another machine, where the promise is float rounding
    only (docs/train.md, Reproducibility: word2vec's dot products are summed in an order
    that depends on the CPU's vector width), so the floats are compared to float32
    rounding; the pairs, drawn by integer keyed hashes, exactly.  The bitwise promise on
    one machine is tests/train/test_walk_embed.py's resume test and test_reproducible.py.
    """
    pytest.importorskip("torch", reason="needs torch (pip install 'graphshard[train]')")
    from graphshard.train import train_walk_embedding

    g = _ring()
    whole = train_walk_embedding(g, **kw)
    shutil.copytree(DATA / name, tmp_path / name)
    resumed = train_walk_embedding(g, **kw, checkpoint_dir=tmp_path / name)
    assert resumed.num_pairs == whole.num_pairs
    assert len(resumed.step_losses) == len(whole.step_losses)
    np.testing.assert_allclose(resumed.step_losses, whole.step_losses, rtol=1e-5)
    np.testing.assert_allclose(resumed.embeddings["_N"], whole.embeddings["_N"], rtol=1e-4,
                               atol=1e-6)


def test_defaults_resolve_to_pair_sgd_locally_and_adagrad_with_a_model():
    """The defaults (issue 27): word2vec's pair_sgd with linear decay and a context table
    on a local graph; Adagrad without decay, one table, once a model option is set."""
    pytest.importorskip("torch", reason="needs torch (pip install 'graphshard[train]')")
    from graphshard.train import train_walk_embedding
    from graphshard.train.walk_options import DEFAULT_LR

    g = _ring()
    kw = dict(walk_len=5, walk_times=1, win_size=2, neg_num=2, emb_size=4, seed=0)
    default = train_walk_embedding(g, **kw)
    word2vec = train_walk_embedding(g, **kw, optimizer="pair_sgd", lr=DEFAULT_LR["pair_sgd"],
                                    lr_decay="linear", context_table=True)
    assert default.step_losses == word2vec.step_losses
    np.testing.assert_array_equal(default.embeddings["_N"], word2vec.embeddings["_N"])
    full = {**kw, "subsample": 0.0, "walk_times": 4}  # enough pairs to move the rows
    adagrad = train_walk_embedding(g, **full, optimizer="adagrad")
    assert not np.allclose(adagrad.embeddings["_N"],
                           train_walk_embedding(g, **full).embeddings["_N"])
    hinge = WalkOptions(**kw, loss_type="hinge").resolve()
    assert (hinge.optimizer, hinge.lr, hinge.lr_decay, hinge.context_table) == (
        "adagrad", 0.1, "none", False)
    dist = WalkOptions(**kw).resolve(distributed=True)
    assert (dist.optimizer, dist.lr, dist.lr_decay) == ("adagrad", 0.1, "none")
    assert WalkOptions(**kw, lr=0.5).resolve().lr == 0.5  # given values stay
