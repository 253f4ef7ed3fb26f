"""``graphshard train``: metrics per epoch, the curve PNG, checkpoints and resume."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch", reason="needs torch (pip install 'graphshard[train]')")
pytest.importorskip("yaml", reason="needs pyyaml")
pytest.importorskip("matplotlib", reason="needs matplotlib (graphshard[plot])")
from click.testing import CliRunner

from graphshard.cli import cli
from graphshard.errors import ConfigError
from graphshard.examples import load_checkpoint

SAGE = ("task: sage\ngenerate: sbm:nodes=300,edges=1800,blocks=3,features=8\n"
        "fanouts: [5, 5]\nhidden_size: 8\nepochs: {epochs}\nbatch_size: 64\nlr: 0.01\n")


def test_sage_metrics_curve_and_resume(tmp_path):
    cfg = tmp_path / "sage.yaml"
    cfg.write_text(SAGE.format(epochs=2))
    runner = CliRunner()
    args = ["train", str(cfg), "--checkpoint-dir", str(tmp_path / "ck"), "--plot",
            str(tmp_path / "curve.png")]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "epoch 1: loss" in result.output and "epoch 2: loss" in result.output
    assert "curve: " in result.output
    assert (tmp_path / "curve.png").read_bytes()[:4] == b"\x89PNG"
    assert load_checkpoint(tmp_path / "ck").epoch == 2
    cfg.write_text(SAGE.format(epochs=3))  # started again with more epochs: resumes
    result = runner.invoke(cli, ["-q", *args, "--json"])
    assert result.exit_code == 0, result.output
    assert "epoch 1: loss" not in result.output  # -q: no per-epoch lines
    epochs = json.loads(result.output)["epochs"]
    assert len(epochs) == 3 and load_checkpoint(tmp_path / "ck").epoch == 3
    restarted = json.loads(runner.invoke(cli, ["-q", *args, "--json", "--restart"]).output)
    # from scratch, the same 3 epochs: resuming changed nothing
    assert [e["losses"] for e in restarted["epochs"]] == [e["losses"] for e in epochs]


def test_walk_curve_goes_to_output_path(tmp_path):
    cfg = tmp_path / "walk.yaml"
    cfg.write_text("generate: sbm:nodes=120,edges=600,blocks=2\nwalk_len: 6\nwalk_times: 2\n"
                   "win_size: 2\nneg_num: 2\nembed_size: 4\nepochs: 2\nbatch_size: 128\n"
                   "output_path: out\n")
    result = CliRunner().invoke(cli, ["train", str(cfg)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "train_curve.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "out" / "_N.txt").exists() and "num_pairs" in result.output


def test_patience_key_and_best_epoch_in_table_and_json(tmp_path):
    cfg = tmp_path / "sage.yaml"
    cfg.write_text(SAGE.format(epochs=6) + "patience: 1\nmin_delta: 1.0\neval_every: 1\n"
                   "weight_decay: 0.0005\n")
    runner = CliRunner()
    result = runner.invoke(cli, ["-q", "train", str(cfg)])
    assert result.exit_code == 0, result.output
    assert "best epoch 1 of 2: val acc " in result.output
    assert "(stopped early: patience)" in result.output
    doc = json.loads(runner.invoke(cli, ["-q", "train", str(cfg), "--json"]).output)
    assert doc["best"]["best_epoch"] == 0 and doc["best"]["stopped_early"] is True
    assert doc["best"]["test"]["acc"] == doc["epochs"][0]["test_acc"] and len(doc["epochs"]) == 2


def test_hetero_table_json_and_curve(tmp_path, shared_file):
    pytest.importorskip("torch_geometric", reason="needs torch_geometric")
    cfg = tmp_path / "hetero.yaml"
    cfg.write_text(f"task: hetero\nhgb: {shared_file('hgb', 'ACM.zip')}\nmodel: hgt\n"
                   "fanouts: [2, 2]\nhidden_size: 8\nheads: 2\nepochs: 2\nbatch_size: 256\n"
                   "lr: 0.01\n")
    runner = CliRunner()
    result = runner.invoke(cli, ["train", str(cfg), "--plot", str(tmp_path / "c.png")])
    assert result.exit_code == 0, result.output
    assert "epoch 1: loss" in result.output and "val_macro_f1" in result.output
    assert "best epoch" in result.output and "test macro_f1" in result.output
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"
    out = json.loads(runner.invoke(cli, ["-q", "train", str(cfg), "--json"]).output)
    assert out["result"] == "HeteroResult" and len(out["epochs"]) == 2
    best = out["best"]
    assert 0 <= best["best_epoch"] < 2 and 0 <= best["test"]["macro_f1"] <= 1
    assert set(out["epochs"][0]) >= {"losses", "val_micro_f1", "test_macro_f1", "seconds"}
    bad = runner.invoke(cli, ["train", str(cfg), "--checkpoint-dir", str(tmp_path / "ck")])
    assert isinstance(bad.exception, ConfigError)  # main() prints it on one line, exit 1
    assert "unknown key 'checkpoint_dir' for task 'hetero'" in str(bad.exception)
