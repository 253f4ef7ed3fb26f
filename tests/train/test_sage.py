"""GraphSAGE training through block sampling on a local graph."""

from __future__ import annotations

import numpy as np
import pytest

import graphshard as gs

pytest.importorskip("torch", reason="needs torch (pip install 'graphshard[train]')")
from graphshard.train import TrainResult, train_sage

KW = dict(fanouts=[5, 5], hidden=16, epochs=4, batch_size=64, lr=1e-2, seed=0)


def test_loss_falls_and_beats_chance(sbm_graph):
    res = train_sage(sbm_graph, **KW)
    assert isinstance(res, TrainResult)
    assert len(res.losses) == len(res.val_acc) == len(res.test_acc) == len(res.seconds) == 4
    assert res.losses[-1] < 0.7 * res.losses[0]
    assert res.test_acc[-1] > 0.7  # chance is 1/3
    assert 0 <= res.best_epoch < 4 and res.test_at_best_val > 0.6
    assert "TrainResult(epochs=4" in repr(res)


def test_same_seed_same_curve(sbm_graph):
    a = train_sage(sbm_graph, **{**KW, "epochs": 2})
    b = train_sage(sbm_graph, **{**KW, "epochs": 2})
    assert a.losses == b.losses and a.test_acc == b.test_acc


def test_masks_as_arrays_and_ids(sbm_graph):
    mask = np.asarray(sbm_graph.ndata["train_mask"])
    a = train_sage(sbm_graph, **{**KW, "epochs": 1}, train_mask=mask)
    b = train_sage(sbm_graph, **{**KW, "epochs": 1}, train_mask=np.flatnonzero(mask))
    assert a.losses == b.losses


def test_eval_every_skips_epochs(sbm_graph):
    res = train_sage(sbm_graph, **{**KW, "epochs": 3}, eval_every=2)
    assert np.isnan(res.val_acc[0]) and not np.isnan(res.val_acc[1])
    assert not np.isnan(res.test_acc[2])  # the last epoch is always evaluated


def test_errors_name_the_problem(sbm_graph):
    with pytest.raises(gs.ValidationError, match="epochs must be >= 1"):
        train_sage(sbm_graph, epochs=0)
    with pytest.raises(gs.ValidationError, match="no training nodes"):
        train_sage(sbm_graph, train_mask=np.zeros(0, dtype=np.int64))
    h = gs.heterograph({("u", "r", "i"): ([0], [0])})
    with pytest.raises(gs.ValidationError, match="one node type"):
        train_sage(h)


def test_patience_stops_early_and_reports_the_best_epoch(sbm_graph):
    # no accuracy can improve by more than 1: epoch 0 stays the best, epoch 1 ends the run
    res = train_sage(sbm_graph, **{**KW, "epochs": 5}, patience=1, min_delta=1.0)
    assert len(res.losses) == 2 and res.stopped_early and res.best_epoch == 0
    assert res.test_at_best_val == res.test_acc[0] and res.val_at_best_val == res.val_acc[0]
    assert res.summary() == {"epochs": 2, "best_epoch": 0, "monitor": "acc",
                             "val": {"acc": res.val_acc[0]},
                             "test": {"acc": res.test_acc[0]}, "stopped_early": True}
    full = train_sage(sbm_graph, **{**KW, "epochs": 2})
    assert full.losses == res.losses and not full.stopped_early  # the same first epochs
    with pytest.raises(gs.ValidationError, match="patience must be None or an int >= 1"):
        train_sage(sbm_graph, patience=0)
