"""Checkpoints: atomic, pickle-free, and a stopped run resumes exactly."""

from __future__ import annotations

import json

import numpy as np
import pytest

import graphshard as gs

pytest.importorskip("torch", reason="needs torch (pip install 'graphshard[train]')")
from graphshard.train import load_checkpoint, train_sage

KW = dict(fanouts=[5, 5], hidden=16, batch_size=64, lr=1e-2, seed=0)


class _Stop(Exception):
    pass


def test_stopped_run_resumes_as_if_uninterrupted(sbm_graph, tmp_path):
    whole = train_sage(sbm_graph, epochs=4, **KW)

    def stop_after_two(epoch, metrics):
        if epoch == 1:
            raise _Stop  # the process "dies" after epoch 2's checkpoint was written

    with pytest.raises(_Stop):
        train_sage(sbm_graph, epochs=4, checkpoint_dir=tmp_path, on_epoch=stop_after_two, **KW)
    ck = load_checkpoint(tmp_path)
    assert ck.epoch == 2 and ck.history["losses"] == whole.losses[:2]
    resumed = train_sage(sbm_graph, epochs=4, checkpoint_dir=tmp_path, **KW)
    assert resumed.losses == whole.losses and resumed.test_acc == whole.test_acc
    for (k, a), (_, b) in zip(resumed.model.state_dict().items(),
                              whole.model.state_dict().items(), strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=k)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint.json",
                                                          "state-4.safetensors"]
    ck = load_checkpoint(tmp_path)
    assert ck.epoch == 4 and isinstance(next(iter(ck.optimizer["state"])), int)
    assert ck.optimizer["state"][0]["exp_avg"].shape == ck.model["self_lins.0.weight"].shape
    # nothing left to train: the saved curve comes back
    again = train_sage(sbm_graph, epochs=4, checkpoint_dir=tmp_path, **KW)
    assert again.losses == whole.losses and again.seconds == resumed.seconds


def test_resume_checks_parameters_and_files(sbm_graph, tmp_path):
    train_sage(sbm_graph, epochs=1, checkpoint_dir=tmp_path, **KW)
    with pytest.raises(gs.ValidationError, match="written with hidden=16, this run has hidden=8"):
        train_sage(sbm_graph, epochs=2, checkpoint_dir=tmp_path, **{**KW, "hidden": 8})
    fresh = train_sage(sbm_graph, epochs=1, checkpoint_dir=tmp_path, resume=False,
                       **{**KW, "hidden": 8})
    assert load_checkpoint(tmp_path).params["hidden"] == 8 and len(fresh.losses) == 1
    tensors = tmp_path / "state-1.safetensors"
    raw = tensors.read_bytes()
    header = json.loads(raw[8:8 + int.from_bytes(raw[:8], "little")])
    assert "model.self_lins.0.weight" in header  # safetensors, not a pickle
    tensors.write_bytes(raw[:-4] + b"\0\0\0\0")
    with pytest.raises(gs.FormatError, match="SHA-256 differs"):
        load_checkpoint(tmp_path)
    assert load_checkpoint(tmp_path / "none") is None
