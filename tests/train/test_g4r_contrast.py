"""Graph4Rec's contrastive losses (issue 44 item 2): ``gcl_loss: simgcl_loss`` (SimGCL) and
``hcl`` change the trained embeddings, train to finite values, are reproducible by seed,
and are refused where they cannot act; off values are accepted."""

from __future__ import annotations

import numpy as np
import pytest

import graphshard as gs

pytest.importorskip("torch", reason="needs torch (pip install 'graphshard[train]')")
pytest.importorskip("yaml", reason="needs pyyaml")
import torch

from graphshard.errors import ConfigError, ValidationError
from graphshard.train import train_walk_embedding, validate_config
from graphshard.train._g4r_contrast import SIMGCL_WEIGHT, _info_nce, simgcl_loss
from graphshard.train.walk_options import WalkOptions

KW = dict(walk_len=5, walk_times=2, win_size=2, neg_num=3, emb_size=8, epochs=2,
          subsample=0.0, seed=0, batch_size=64, optimizer="adagrad")


@pytest.fixture(scope="module")
def small() -> gs.Graph:
    return gs.datasets.sbm(80, 400, num_blocks=2, seed=0)


@pytest.mark.parametrize(("base", "extra"), [
    ({"loss_type": "hinge"}, {"gcl_loss": "simgcl_loss"}),
    ({"sage_mode": True}, {"hcl": True}),
    ({"sage_mode": True}, {"hcl": True, "gcl_loss": "simgcl_loss"}),
])
def test_contrastive_losses_change_the_result_and_train_finite(small, base, extra):
    off = train_walk_embedding(small, **KW, **base)
    on = train_walk_embedding(small, **KW, **base, **extra)
    again = train_walk_embedding(small, **KW, **base, **extra)
    assert np.isfinite(on.losses).all() and np.isfinite(on.embeddings["_N"]).all()
    assert not np.allclose(on.embeddings["_N"], off.embeddings["_N"])
    # the first step sees the same tables and pairs: its loss is the pair loss plus the
    # contrastive terms (> 0)
    assert on.step_losses[0] > off.step_losses[0]
    np.testing.assert_array_equal(on.embeddings["_N"], again.embeddings["_N"])  # keyed


def test_simgcl_is_keyed_by_the_seed_and_has_gradients():
    h = torch.randn(12, 4, generator=torch.Generator().manual_seed(0), requires_grad=True)
    rows = np.arange(0, 12, 2)
    a, b = simgcl_loss(torch, h, rows, 3, seed=5), simgcl_loss(torch, h, rows, 3, seed=5)
    other = simgcl_loss(torch, h, rows, 3, seed=6)
    assert float(a.detach()) == float(b.detach()) != float(other.detach())
    a.backward()
    grad = h.grad.numpy()
    assert np.isfinite(grad).all() and np.abs(grad[rows]).sum() > 0
    assert not grad[1::2].any()  # rows outside the batch get nothing
    assert 0 < float(a.detach()) / SIMGCL_WEIGHT < 2 * np.log(4)


def test_info_nce_is_softmax_cross_entropy_of_the_positive():
    rng = np.random.default_rng(0)
    a, p = (torch.from_numpy(rng.random((5, 3), dtype=np.float32)) for _ in range(2))
    neg = np.array([[1, 2], [0, 3], [4, 0], [2, 1], [3, 4]])
    logits = np.stack([(a.numpy() * p.numpy()).sum(1)] + [
        (a.numpy() * p.numpy()[neg[:, j]]).sum(1) for j in range(2)], 1) * 5.0
    expect = np.mean(np.log(np.exp(logits).sum(1)) - logits[:, 0])
    assert float(_info_nce(torch, a, p, neg, 5.0)) == pytest.approx(expect, rel=1e-5)


def test_bad_or_idle_contrastive_options_are_refused():
    with pytest.raises(ValidationError, match="gcl_loss must be one of") as info:
        WalkOptions(gcl_loss="infonce")
    assert info.value.field == "gcl_loss"
    with pytest.raises(ValidationError, match=r"hcl=True acts only with sage_mode") as info:
        WalkOptions(hcl=True)
    assert info.value.field == "hcl"
    assert WalkOptions(gcl_loss="").gcl_loss is None is WalkOptions(gcl_loss=False).gcl_loss
    assert not WalkOptions(hcl=False).uses_model


@pytest.mark.parametrize(("extra", "field"), [
    ("gcl_loss: simgcl\n", "gcl_loss"), ("hcl: true\n", "hcl"), ("hcl: 'yes'\n", "hcl"),
    ('gcl_loss: ""\nhcl: false\n', None), ("gcl_loss: false\n", None),
    ("gcl_loss: simgcl_loss\n", None),
])
def test_config_keys(tmp_path, extra, field):
    cfg = tmp_path / "w.yaml"
    cfg.write_text("generate: sbm:nodes=40,edges=160\nwalk_len: 4\nsparse_type: adagrad\n"
                   + extra)
    if field is None:
        validate_config(cfg)
        return
    with pytest.raises(ConfigError) as info:
        validate_config(cfg)
    assert info.value.field == field
