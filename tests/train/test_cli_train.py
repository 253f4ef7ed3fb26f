"""``graphshard train``: metrics per epoch, the curve PNG, checkpoints and resume."""

from __future__ import annotations

import json
import re

import pytest

pytest.importorskip("torch", reason="needs torch (pip install 'graphshard[train]')")
pytest.importorskip("yaml", reason="needs pyyaml")
pytest.importorskip("matplotlib", reason="needs matplotlib (graphshard[plot])")
from click.testing import CliRunner

from graphshard.cli import cli
from graphshard.errors import ConfigError
from graphshard.train import load_checkpoint, train_from_config

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
    assert "epoch 0: loss" in result.output and "epoch 1: loss" in result.output  # from 0
    assert "epoch 2: loss" not in result.output
    assert "curve: " in result.output
    assert (tmp_path / "curve.png").read_bytes()[:4] == b"\x89PNG"
    assert load_checkpoint(tmp_path / "ck").epoch == 2
    cfg.write_text(SAGE.format(epochs=3))  # started again with more epochs: resumes
    result = runner.invoke(cli, ["-q", *args, "--json"])
    assert result.exit_code == 0, result.output
    assert "epoch 0: loss" not in result.output  # -q: no per-epoch lines
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
    # no validation split: no best epoch, the tables are the last epoch's (counted from 0)
    assert "WalkEmbeddingResult: epochs 0-1 (counted from 0)" in result.output
    assert "no validation split (WalkEmbeddingResult): the result is the last epoch's, " \
        "epoch 1" in result.output and "best validation epoch" not in result.output


def test_patience_key_and_best_epoch_in_table_and_json(tmp_path):
    cfg = tmp_path / "sage.yaml"
    cfg.write_text(SAGE.format(epochs=6) + "patience: 1\nmin_delta: 1.0\neval_every: 1\n"
                   "weight_decay: 0.0005\n")
    runner = CliRunner()
    result = runner.invoke(cli, ["-q", "train", str(cfg)])
    assert result.exit_code == 0, result.output
    assert "best validation epoch: 0 of epochs 0-1, by val acc (stopped early: patience)" \
        in result.output
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
    assert "best validation epoch: " in result.output and "by val macro_f1" in result.output
    assert "test at epoch " in result.output and "micro_f1 " in result.output
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"
    out = json.loads(runner.invoke(cli, ["-q", "train", str(cfg), "--json"]).output)
    assert out["result"] == "HeteroResult" and len(out["epochs"]) == 2
    best = out["best"]
    assert 0 <= best["best_epoch"] < 2 and 0 <= best["test"]["macro_f1"] <= 1
    assert set(out["epochs"][0]) >= {"losses", "val_micro_f1", "test_macro_f1", "seconds"}
    bad = runner.invoke(cli, ["train", str(cfg), "--checkpoint-dir", str(tmp_path / "ck")])
    assert isinstance(bad.exception, ConfigError)  # main() prints it on one line, exit 1
    assert "unknown key 'checkpoint_dir' for task 'hetero'" in str(bad.exception)


def test_epoch_numbers_agree_in_table_lines_json_and_api(tmp_path):
    """Epochs count from 0 in the stderr lines, the table (best row marked), the best-epoch
    lines, --json and the API; the test score printed is the best epoch's, not the last's."""
    cfg = tmp_path / "sage.yaml"
    # no accuracy improves by more than 1: epoch 0 stays the best and epoch 1 ends the run
    cfg.write_text(SAGE.format(epochs=4) + "patience: 1\nmin_delta: 1.0\n")
    runner = CliRunner()
    text = runner.invoke(cli, ["train", str(cfg)])
    assert text.exit_code == 0, text.output
    out = text.output
    assert "epoch 0: loss" in out and "epoch 1: loss" in out and "epoch 2: loss" not in out
    assert "TrainResult: epochs 0-1 (counted from 0); * = best validation epoch" in out
    assert re.search(r"\S 0 \*\s+\S", out) and not re.search(r"\S 1 \*\s+\S", out)
    doc = json.loads(runner.invoke(cli, ["-q", "train", str(cfg), "--json"]).output)
    assert [e["epoch"] for e in doc["epochs"]] == [0, 1]
    assert doc["best"]["best_epoch"] == 0 and doc["best"]["monitor"] == "acc"
    first, last = doc["epochs"][0], doc["epochs"][1]
    assert doc["best"]["test"]["acc"] == first["test_acc"]
    assert "best validation epoch: 0 of epochs 0-1, by val acc (stopped early: patience)" in out
    assert f"  val at epoch 0:  acc {first['val_acc']:.4f}\n" in out
    assert f"  test at epoch 0: acc {first['test_acc']:.4f}\n" in out
    assert last["test_acc"] != first["test_acc"]  # the line is the best epoch's, not the last
    api = train_from_config(cfg)
    assert api.best_epoch == 0 and api.test_at_best_val == first["test_acc"]
    assert api.test_acc == [e["test_acc"] for e in doc["epochs"]]


def _refusal(capsys, args: list[str]) -> str:
    """The one stderr line of ``graphshard train`` refusing a config (exit 1)."""
    from graphshard.cli import main

    assert main(["train", *args]) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_help_example_with_two_trainers_is_refused_before_loading(tmp_path, capsys,
                                                                  monkeypatch):
    """Issue 43: ``graphshard train hetero.yaml --trainers 2`` with ``hgb: DBLP.zip`` (the
    --help example) read the dataset, then failed ("num_trainers > 1 needs the path of a
    partition config JSON"). Now it is refused before anything is read, with the commands
    that partition the dataset and train from the partition; the help shows them."""
    import graphshard.datasets as datasets

    def read(*_args, **_kw):
        raise AssertionError("the dataset was read")

    monkeypatch.setattr(datasets, "load_hgb", read)
    monkeypatch.setattr(datasets, "load_shchur_npz", read)
    cfg = tmp_path / "hetero.yaml"
    cfg.write_text("task: hetero\nhgb: DBLP.zip\nhgb_val_ratio: 0.25\n")
    line = _refusal(capsys, [str(cfg), "--trainers", "2"])
    assert line == (
        f"graphshard: error: {cfg}: num_trainers: 2 trainers need 'graph: <partition config "
        ".json>' (each trainer connects to the graph servers), but the graph comes from 'hgb:'; "
        f"partition it first, then train from the partition: graphshard partition "
        f"{tmp_path / 'DBLP.zip'} -O val_ratio=0.25 --parts 2 --out {tmp_path / 'parts'}/, "
        "set 'graph: parts/DBLP.json' in place of 'hgb:' in hetero.yaml, and run graphshard "
        f"train {cfg} --trainers 2")
    sage = tmp_path / "sage.yaml"
    sage.write_text("task: sage\nshchur: cs.zip\nnum_trainers: 3\n")
    line = _refusal(capsys, [str(sage)])
    assert f"graphshard partition {tmp_path / 'cs.zip'} -O split_seed=0 --parts 3" in line
    sage.write_text("task: sage\ngenerate: sbm:nodes=50,edges=200\n")
    line = _refusal(capsys, [str(sage), "--trainers", "2"])
    assert ("graphshard partition --generate sbm:nodes=50,edges=200 --parts 2" in line
            and "'graph: parts/sbm.json' in place of 'generate:'" in line)
    usage = CliRunner().invoke(cli, ["train", "--help"]).output
    assert usage.index("graphshard partition DBLP.zip --parts 2 --out parts/") < usage.index(
        "graphshard train hetero2.yaml --trainers 2    # the same with graph: parts/DBLP.json")


def test_the_two_commands_of_the_refusal_train_two_trainers(tmp_path, capsys, ray_cluster):
    """The commands the refusal gives, run as given on a tiny HGB dataset: partition, then
    two trainers train from the partition config."""
    pytest.importorskip("torch_geometric", reason="needs torch_geometric")
    import shlex

    from graphshard.cli import main
    from shop import tiny_hgb

    tiny_hgb(tmp_path / "TINY")
    cfg = tmp_path / "hetero.yaml"
    body = "model: rgcn\nfanouts: [2, 2]\nhidden_size: 8\nepochs: 2\nbatch_size: 8\nlr: 0.01\n"
    cfg.write_text(f"task: hetero\nhgb: TINY\n{body}")
    line = _refusal(capsys, [str(cfg), "--trainers", "2"])
    partition = line.split("train from the partition: ")[1].split(", set 'graph:")[0]
    graph = line.split("set '")[1].split("' in place of")[0]
    assert partition.startswith("graphshard partition ") and graph == "graph: parts/TINY.json"
    assert main(shlex.split(partition)[1:]) == 0
    capsys.readouterr()
    cfg.write_text(f"task: hetero\n{graph}\n{body}")
    assert main(["train", str(cfg), "--trainers", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["result"] == "HeteroResult" and len(out["epochs"]) == 2
    assert all(e["losses"] == e["losses"] for e in out["epochs"])  # finite, not NaN
