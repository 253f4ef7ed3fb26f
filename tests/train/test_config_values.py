"""Issue 41 item 4: a training config is validated fully (types, ranges, names against the
graph) before any training; every problem is one line naming the file and the key, never
a traceback.  Seeded mutations of a valid config of each task give our error or pass."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import graphshard as gs
from fuzzing import mutate_json, run_fuzz
from graphshard.cli import main
from graphshard.errors import ConfigError
from graphshard.train.config import train_from_config, validate_config
from shop import hetero_graph

pytest.importorskip("torch", reason="needs torch (pip install 'graphshard[train]')")
yaml = pytest.importorskip("yaml", reason="needs pyyaml")

SBM = "sbm:nodes=60,edges=300,blocks=2,features=4"
BASE = {
    "walk": {"generate": SBM, "walk_len": 4, "walk_times": 1, "win_size": 2, "neg_num": 2,
             "emb_size": 4, "epochs": 1, "batch_size": 64, "lr": 0.05, "sample": 0,
             "neg_distribution": "degree", "optimizer": "adagrad", "random_window": True,
             "seed": 0},
    "sage": {"task": "sage", "generate": SBM, "fanouts": [3, 3], "hidden_size": 8,
             "epochs": 1, "batch_size": 32, "lr": 0.01, "dropout": 0.5, "weight_decay": 0.0,
             "feat": "feat", "label": "label", "train_mask": "train_mask", "patience": 2,
             "eval_every": 1, "min_delta": 0.0, "seed": 0},
    "link": {"task": "link", "generate": SBM, "fanouts": [3], "hidden_size": 8, "epochs": 1,
             "batch_size": 64, "lr": 0.01, "num_negatives": 1, "decoder": "dot",
             "exclude": "auto", "hits": [10], "monitor": "mrr", "val_fraction": 0.1,
             "test_fraction": 0.1, "eval_negatives": 5, "split_seed": 0, "feat": "feat"},
    "hetero": {"task": "hetero", "graph": "PARTS", "target": "i", "model": "hgt",
               "fanouts": [3, 3], "hidden_size": 8, "heads": 2, "epochs": 1, "lr": 0.01,
               "dropout": 0.2, "monitor": "macro_f1", "eval_batch_size": 64,
               "multilabel": False, "label": "label", "train_mask": "train_mask"},
}


@pytest.fixture(scope="module")
def shop_parts(tmp_path_factory) -> str:
    out = tmp_path_factory.mktemp("shop")
    gs.partition_graph(hetero_graph(0), "shop", 2, str(out), part_method="random")
    return str(out / "shop.json")


def _write(folder: Path, cfg: dict) -> Path:
    path = folder / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


@pytest.mark.parametrize(("task", "key", "value", "match"), [
    ("sage", "fanouts", "abc", "fanouts must be a non-empty list of integers >= 1, got 'abc'"),
    ("sage", "lr", "x", "lr must be a number > 0, got 'x'"),
    ("link", "split_seed", float("inf"), "split_seed must be an integer >= 0, got inf"),
    ("sage", "dropout", 2147483648, r"dropout must be a number in \[0, 1\), got 2147483648"),
    ("sage", "feat", "nope", "feat names no node feature of '_N': got 'nope'"),
    ("link", "feat", "nope", "feat names no node feature"),
    ("hetero", "model", "gat", r"model must be one of \['rgcn', 'hgt'\], got 'gat'"),
    ("hetero", "target", "x", r"target must be a node type of the graph shop\.json"),
    ("walk", "walk_len", "abc", "walk_len must be an integer >= 1"),
    ("walk", "neg_distribution", "/etc/passwd", "neg_distribution must be one of"),
    ("walk", "meta_path", "_N2x2_N", "meta_path: "),
    ("walk", "slots", ["nope"], "slots: slot 'nope' is no node feature"),
    ("link", "monitor", "hits@50", r"monitor must be one of \['auc', 'mrr', 'hits@10'\]"),
    ("hetero", "heads", 3, r"heads must divide hidden_size \(8\) for HGT"),
])
def test_bad_value_is_one_line_naming_the_key(tmp_path, shop_parts, capsys, task, key, value,
                                               match):
    cfg = {**BASE[task], key: value}
    if cfg.get("graph") == "PARTS":
        cfg["graph"] = shop_parts
    path = _write(tmp_path, cfg)
    with pytest.raises(ConfigError, match=match) as info:
        train_from_config(path)
    assert info.value.field == key and str(path) in str(info.value)
    assert "\n" not in str(info.value)
    capsys.readouterr()
    assert main(["train", str(path)]) == 1  # graphshard train: one line, exit 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err and key in err, err


def test_every_problem_is_listed(tmp_path):
    path = _write(tmp_path, {**BASE["sage"], "lr": "x", "fanouts": "abc", "dropout": 2})
    with pytest.raises(ConfigError) as info:
        validate_config(path)
    lines = str(info.value).splitlines()
    assert lines[0].endswith("3 bad values:") and len(lines) == 4
    assert [ln.split(": ")[1].split()[0] for ln in lines[1:]] == ["dropout", "fanouts", "lr"]


def test_hetero_on_a_generated_graph_is_refused_up_front(tmp_path):
    """Before: KeyError '_N' inside torch_geometric after the model was built."""
    path = _write(tmp_path, {"task": "hetero", "generate": SBM, "epochs": 1})
    with pytest.raises(ConfigError, match="task 'hetero' needs a heterograph") as info:
        train_from_config(path)
    assert info.value.field == "generate"


@pytest.mark.parametrize("task", sorted(BASE))
def test_base_configs_are_valid(tmp_path, shop_parts, task):
    cfg = {**BASE[task]}
    if cfg.get("graph") == "PARTS":
        cfg["graph"] = shop_parts
    validate_config(_write(tmp_path, cfg))


@pytest.mark.parametrize("task", sorted(BASE))
def test_fuzz_config(tmp_path, shop_parts, task):
    base = {**BASE[task]}
    if base.get("graph") == "PARTS":
        base["graph"] = shop_parts

    def case(rng: random.Random, folder: Path) -> Path | None:
        mutant = mutate_json(rng, base)
        return None if mutant == base else _write(folder, mutant)

    run_fuzz(f"train_config_{task}", case, validate_config, tmp_path, seed=41)
