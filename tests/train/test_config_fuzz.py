"""Issue 41 item 4: seeded mutations of a valid training config of each task (walk, sage,
link, hetero) are either refused by :func:`~graphshard.train.config.validate_config`
(one ConfigError naming the file) or, accepted, train on a tiny graph for one epoch
without a raw exception and with finite losses and embeddings: validation is complete,
nothing it lets through fails later.  (test_config_values.py fuzzes the validation alone,
against a partition config.)"""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fuzzing import mutate_json, run_fuzz
from graphshard.errors import ConfigError
from graphshard.train.config import train_from_config, validate_config
from shop import tiny_hgb

pytest.importorskip("torch", reason="needs torch (pip install 'graphshard[train]')")
yaml = pytest.importorskip("yaml", reason="needs pyyaml")

SBM = "sbm:nodes=40,edges=160,blocks=2,features=3"
BASE: dict[str, dict[str, Any]] = {
    "walk": {"generate": SBM, "walk_len": 4, "walk_times": 1, "win_size": 2, "neg_num": 2,
             "emb_size": 4, "epochs": 1, "batch_size": 64, "lr": 0.05, "sample": 0,
             "neg_distribution": "degree", "sparse_type": "adagrad", "random_window": True,
             "seed": 0},
    "sage": {"task": "sage", "generate": SBM, "fanouts": [3, 3], "hidden_size": 8,
             "epochs": 1, "batch_size": 32, "lr": 0.01, "dropout": 0.5, "weight_decay": 0.0,
             "feat": "feat", "label": "label", "train_mask": "train_mask", "patience": 2,
             "eval_every": 1, "min_delta": 0.0, "seed": 0},
    "link": {"task": "link", "generate": SBM, "fanouts": [3], "hidden_size": 8, "epochs": 1,
             "batch_size": 64, "lr": 0.01, "num_negatives": 1, "decoder": "dot",
             "exclude": "auto", "hits": [10], "monitor": "mrr", "val_fraction": 0.1,
             "test_fraction": 0.1, "eval_negatives": 5, "split_seed": 0, "feat": "feat"},
    "hetero": {"task": "hetero", "hgb": "HGB", "model": "hgt", "fanouts": [2, 2],
               "hidden_size": 8, "heads": 2, "epochs": 1, "batch_size": 32, "lr": 0.01,
               "dropout": 0.2, "monitor": "macro_f1", "eval_batch_size": 64,
               "label": "label", "train_mask": "train_mask", "hgb_val_ratio": 0.25,
               "seed": 0},
}


def _finite_problem(res: Any) -> str | None:
    """What is wrong with an accepted run's result (a loss or an embedding not finite)."""
    if res is None:
        return "no result"
    losses = [x for x in getattr(res, "losses", []) if x is not None]
    if not losses or not all(math.isfinite(float(x)) for x in losses):
        return f"losses {losses}"
    for t, e in (getattr(res, "embeddings", None) or {}).items():
        if not np.isfinite(e).all():
            return f"embeddings of {t} hold inf or NaN"
    return None


def _run(path: Path) -> Any:
    """Validate the mutant as it is; train an accepted one for one epoch (a mutant without
    ``epochs`` would take the task's default, e.g. 100, on the tiny graph)."""
    validate_config(path)  # refused here: the common, fast outcome
    return train_from_config(path, overrides={"epochs": 1})


@pytest.mark.parametrize("task", sorted(BASE))
def test_fuzz_config_then_train(tmp_path, task):
    if task == "hetero":
        pytest.importorskip("torch_geometric", reason="needs torch_geometric")
    base = dict(BASE[task])
    if task == "hetero":
        base["hgb"] = str(tiny_hgb(tmp_path / "HGB"))
    assert _finite_problem(_run(_write(tmp_path, base))) is None  # the base trains
    (tmp_path / "cases").mkdir()

    def case(rng: random.Random, folder: Path) -> Path | None:
        mutant = mutate_json(rng, base)
        return None if mutant == base else _write(folder, mutant)

    run_fuzz(f"train_config_run_{task}", case, _run, tmp_path / "cases", seed=411,
             check=_finite_problem)


def _write(folder: Path, cfg: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


@pytest.mark.parametrize(("task", "change", "key", "match"), [
    ("walk", {"sparse_type": {}}, "sparse_type", "sparse_type must be a non-empty string"),
    ("walk", {"hidden_size": "abc"}, "hidden_size", "hidden_size must be an integer"),
    ("walk", {"sample": 1e-4}, "sample", r"trained no pair: subsample 0\.0001"),
    ("sage", {"weight_decay": 1e308}, "weight_decay", r"weight_decay must be a number in"),
    ("link", {"lr": 1e308}, "lr", "training diverged"),
    ("hetero", {"label": "abc"}, "label", "label names no node feature of 'movie'"),
])
def test_what_the_fuzzing_found_is_one_line(tmp_path, task, change, key, match):
    """Before: TypeError unhashable 'dict' / ValueError from int('abc') (the Graph4Rec
    rules ran before the type checks), a ValidationError naming no file once training
    started, torch's RuntimeError on a float overflow, a link model of NaN weights
    returned, KeyError after an hgb: graph was built (its default target went unchecked)."""
    if task == "hetero":
        pytest.importorskip("torch_geometric", reason="needs torch_geometric")
    cfg = {**BASE[task], **change}
    if task == "hetero":
        cfg["hgb"] = str(tiny_hgb(tmp_path / "HGB"))
    path = _write(tmp_path, cfg)
    with pytest.raises(ConfigError, match=match) as info:
        _run(path)
    assert info.value.field == key and str(path) in str(info.value)
    assert "\n" not in str(info.value)
