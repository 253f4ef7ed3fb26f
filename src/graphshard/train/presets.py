"""Named training settings taken from the papers whose numbers people compare against.

A preset is a set of keyword arguments of one trainer, chosen from a paper's own settings
(its code's configuration files, cited with each preset) and checked against its published
accuracy on the graphs it names (``benchmarks/TUNING.md``).  The trainers' defaults are
unchanged: a preset is asked for by name, and any argument given beside it wins.

- ``shchur`` (``sage``): Shchur et al., *Pitfalls of Graph Neural Network Evaluation*
  (2018), for their gnn-benchmark graphs (Amazon Computers/Photo, Coauthor CS/Physics) and
  their split (20 training and 30 validation nodes per class).  Their training defaults
  (``config/train.conf.yaml`` of shchur/gnn-benchmark: Adam at lr 0.01, L2 5e-4) and their
  GraphSAGE-mean's per-layer L2 normalisation (``gnnbench/models/graphsage.py``), with 64
  hidden units, dropout 0.5 and early stopping on validation accuracy after 30 epochs
  without a better one, at most 200 epochs.  Their own early stopping waits 50 epochs on the
  validation loss for up to 100,000 epochs of full-batch training; here an epoch is one
  sampled step over the few training nodes.

- ``hgb`` (``rgcn``, ``hgt``: :func:`~graphshard.train.hetero.train_hetero`'s models): the
  Heterogeneous Graph Benchmark's baselines (Lv et al., *Are we really making much progress?*,
  KDD 2021; THUDM/HGB).  R-GCN as its ``NC/RGCN/entity_classify.py`` runs it: Adam at lr 0.01,
  16 hidden units, no dropout, no weight decay.  HGT as its
  ``NC/benchmark/methods/HGT/train_hgt.py`` does: 64 hidden units, 8 heads, dropout 0.5,
  weight decay 1e-4 at a peak lr of 1e-3 (theirs is AdamW on a one-cycle schedule; here Adam
  at that lr).  Both stop after 30 epochs without a better validation score, at most 300, and
  never before epoch 10 (``warmup``: an early epoch that happens to score well cannot end a
  run that has not learned yet).

In a YAML config, ``preset: shchur`` (``task: sage``) or ``preset: hgb`` (``task: hetero``,
the settings of its ``model``) sets the same values under the config's own keys.

Example:
    >>> preset("shchur", "sage")["normalize"]
    True
    >>> preset("shchur", "sage", lr=0.003)["lr"]
    0.003
    >>> preset("hgb", "hgt")["heads"], preset("hgb", "rgcn")["hidden"]
    (8, 16)
"""

from __future__ import annotations

from typing import Any

from ..errors import ValidationError

__all__ = ["PRESETS", "preset"]

#: ``{name: {task: keyword arguments of that task's trainer}}``; a task is a trainer
#: (``sage``) or a model of :func:`~graphshard.train.hetero.train_hetero` (``rgcn``, ``hgt``).
PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    "shchur": {"sage": {"hidden": 64, "lr": 0.01, "weight_decay": 5e-4, "dropout": 0.5,
                        "normalize": True, "epochs": 200, "patience": 30}},
    "hgb": {
        "rgcn": {"model": "rgcn", "hidden": 16, "lr": 0.01, "dropout": 0.0,
                 "weight_decay": 0.0, "epochs": 300, "patience": 30, "warmup": 10},
        "hgt": {"model": "hgt", "hidden": 64, "heads": 8, "lr": 1e-3, "dropout": 0.5,
                "weight_decay": 1e-4, "epochs": 300, "patience": 30, "warmup": 10},
    },
}


def preset(name: str, task: str, **overrides: Any) -> dict[str, Any]:
    """The keyword arguments of preset ``name`` for ``task`` (``"sage"``: :func:`train_sage
    <graphshard.train.sage.train_sage>`; ``"rgcn"``, ``"hgt"``: :func:`train_hetero
    <graphshard.train.hetero.train_hetero>` with that model), with ``overrides`` on top.

    Raises:
        ValidationError: an unknown preset, or one without settings for ``task``.
    """
    if name not in PRESETS:
        raise ValidationError(f"unknown preset {name!r}; presets: {sorted(PRESETS)}",
                              field="preset", value=name)
    tasks = PRESETS[name]
    if task not in tasks:
        raise ValidationError(f"preset {name!r} has settings for {sorted(tasks)}, not for "
                              f"task {task!r}", field="preset", value=name)
    return {**tasks[task], **overrides}
