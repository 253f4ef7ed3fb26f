"""Heterogeneous node classification (R-GCN or HGT) from a graph or its partitions, trained
through PyG's ``NodeLoader`` over graphshard's PyG backend (:mod:`graphshard.pyg`).

The same code runs on a local :class:`~graphshard.graph.Graph`, on a
:class:`~graphshard.distributed.DistGraph`, or from the path of a partition config with one or
several trainers (Ray actors on the partitions' servers, gradients all-reduced by torch DDP
on gloo: :class:`~graphshard.train.ddp.RayTeam`).  The models are in
:mod:`~graphshard.train._hetero_model` (per-type input maps, R-GCN layers with PyG
``RGCNConv``'s parameters computed as per-relation sparse means, or PyG ``HGTConv`` layers,
a linear head); a trainer is
:class:`~graphshard.train.hetero_trainer.HeteroTrainer`.

Single-label data (class IDs) trains with softmax + cross-entropy; multi-label data (a 0/1
label matrix) with sigmoid + binary cross-entropy and predicts the classes whose sigmoid
exceeds 0.5.  Every evaluated epoch records validation and test Micro-F1 and Macro-F1
(:func:`~graphshard.train.metrics.f1_scores`); the result reports the test scores at the
epoch with the best validation ``monitor`` score.

Unstable API (issue 26).

Example:
    >>> import numpy as np, graphshard as gs
    >>> from graphshard.train import train_hetero
    >>> rng = np.random.default_rng(0)
    >>> u, i = rng.integers(0, 30, 200), rng.integers(0, 20, 200)
    >>> g = gs.heterograph({("u", "buys", "i"): (u, i), ("i", "bought_by", "u"): (i, u)},
    ...                    {"u": 30, "i": 20})
    >>> g.nodes["i"].data["feat"] = rng.normal(size=(20, 3)).astype(np.float32)
    >>> g.nodes["i"].data["label"] = np.arange(20) % 2
    >>> g.nodes["i"].data["train_mask"] = np.arange(20) < 12
    >>> res = train_hetero(g, model="hgt", fanouts=[3, 3], hidden=8, heads=2, epochs=2,
    ...                    val_mask=np.arange(12, 16), test_mask=np.arange(16, 20))
    >>> len(res.losses), res.model.embs["u"].num_embeddings  # "u" has no features
    (2, 30)
    >>> 0 <= res.test_macro_f1 <= 1
    True
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ValidationError, check_choice
from ..store import feature_key
from ._common import open_store
from ._hetero_model import MODELS
from .epochs import LocalTeam, ScoredEpochs, as_ints, check_stopping, run_epochs, value_at
from .hetero_trainer import METRICS, HeteroTrainer

__all__ = ["HeteroResult", "train_hetero"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class HeteroResult(ScoredEpochs):
    """What :func:`train_hetero` returns.

    Epochs are counted from 0, as :class:`~graphshard.train.epochs.ScoredEpochs` says.

    Attributes:
        losses: Mean training loss per epoch.
        val_micro_f1, val_macro_f1, test_micro_f1_history, test_macro_f1_history: Scores
            per epoch (NaN where not evaluated or the split is empty).
        seconds: Training seconds per epoch (sampling, feature reads, steps; no evaluation).
        eval_seconds: Evaluation seconds per epoch.
        samples: Training nodes processed per epoch, all trainers together.
        best_epoch: Epoch (from 0) with the best validation ``monitor`` score (the first
            of equal ones; the last epoch without validation scores); the test scores
            there are :attr:`test_micro_f1` and :attr:`test_macro_f1`.
        monitor: The metric that picked :attr:`best_epoch` (``micro_f1`` / ``macro_f1``).
        stopped_early: Whether ``patience`` ended the run before ``epochs``.
        multilabel: Whether the labels were multi-label.
        model: The trained ``torch.nn.Module`` after the last epoch.
    """

    losses: list[float]
    val_micro_f1: list[float]
    val_macro_f1: list[float]
    test_micro_f1_history: list[float]
    test_macro_f1_history: list[float]
    seconds: list[float]
    eval_seconds: list[float]
    samples: list[int]
    best_epoch: int
    monitor: str
    stopped_early: bool
    multilabel: bool
    model: Any = field(repr=False, compare=False)

    @property
    def test_micro_f1(self) -> float:
        """Test Micro-F1 at :attr:`best_epoch`."""
        return value_at(self.test_micro_f1_history, self.best_epoch)

    @property
    def test_macro_f1(self) -> float:
        """Test Macro-F1 at :attr:`best_epoch`."""
        return value_at(self.test_macro_f1_history, self.best_epoch)

    @property
    def val(self) -> dict[str, list[float]]:
        """Validation scores per epoch by metric (``micro_f1``, ``macro_f1``)."""
        return {"micro_f1": self.val_micro_f1, "macro_f1": self.val_macro_f1}

    @property
    def test(self) -> dict[str, list[float]]:
        """Test scores per epoch by metric."""
        return {"micro_f1": self.test_micro_f1_history,
                "macro_f1": self.test_macro_f1_history}

    @property
    def loss_name(self) -> str:
        """The training loss: ``BCE`` (multi-label) or ``cross-entropy``."""
        return "BCE" if self.multilabel else "cross-entropy"


    @property
    def epoch_seconds(self) -> float:
        """Mean training seconds per epoch."""
        return sum(self.seconds) / len(self.seconds) if self.seconds else float("nan")

    def __repr__(self) -> str:
        return (f"HeteroResult(epochs={len(self.losses)}, best_epoch={self.best_epoch}, "
                f"test_micro_f1={self.test_micro_f1:.4f}, "
                f"test_macro_f1={self.test_macro_f1:.4f}, seconds={sum(self.seconds):.1f})")




def _fanouts(name: str, values: Any, num_layers: int | None) -> list[int]:
    """Validated fanouts (DGL order, input layer first) as a list of ints."""
    try:
        out = [int(v) for v in values]
        ok = all(float(v) == o for v, o in zip(values, out, strict=True))
    except (TypeError, ValueError):
        ok, out = False, []
    if not ok or not out or any(f < 1 and f != -1 for f in out):
        raise ValidationError(f"train_hetero: {name} must be a non-empty list of ints >= 1 or "
                              f"-1 (all), one per layer, got {values!r}", field=name,
                              value=values)
    if num_layers is not None and len(out) != num_layers:
        raise ValidationError(f"train_hetero: {name} has {len(out)} entries but num_layers is "
                              f"{num_layers}", field=name, value=values)
    return out


def _target(store: Any, target: str | None, label: str) -> str:
    if target is not None:
        return target
    schema = store.feature_schema("node")
    have = [nt for nt in store.ntypes if feature_key(nt, label) in schema]
    if len(have) != 1:
        raise ValidationError(f"train_hetero: name the target node type; node types with "
                              f"{label!r} are {have}", field="target")
    return have[0]


def train_hetero(store_or_config: Any, *, target: str | None = None, model: str = "rgcn",
                 feat: str = "feat", label: str = "label", train_mask: Any = "train_mask",
                 val_mask: Any = "val_mask", test_mask: Any = "test_mask",
                 fanouts: Sequence[int] = (10, 10), num_layers: int | None = None,
                 eval_fanouts: Sequence[int] | None = None, hidden: int = 64, heads: int = 4,
                 epochs: int = 20, batch_size: int = 256, eval_batch_size: int = 1024,
                 lr: float = 1e-3, dropout: float = 0.5, weight_decay: float = 0.0,
                 multilabel: bool | None = None, monitor: str = "macro_f1",
                 patience: int | None = None, warmup: int = 0, eval_every: int = 1,
                 seed: int = 0, num_trainers: int = 1, trainer_cpus: float = 1.0,
                 on_epoch: Callable[[int, dict[str, float]], None] | None = None
                 ) -> HeteroResult:
    """Train R-GCN or HGT for node classification on one node type of a heterograph.

    Args:
        store_or_config: A Graph, a GraphStore (a DistGraph), or the path of a partition
            config JSON (a DistGraph is started and closed here).
        target: The node type to classify (default: the only node type holding ``label``).
        model: ``"rgcn"`` (R-GCN: PyG ``RGCNConv``'s parameters and math, each
            relation's mean one sparse product on the layer's trimmed block) or ``"hgt"``
            (PyG ``HGTConv``).
        feat: Node feature with the inputs, on any subset of node types (widths may differ:
            each type has its own linear map to ``hidden``); types without it get a
            learnable embedding per node.
        label: Feature of ``target`` with the labels: class IDs ``(N,)`` (-1 = none) or a 0/1
            matrix ``(N, C)`` (multi-label).
        train_mask: Training nodes of ``target``: a feature name (non-zero = in), a boolean
            mask or an ID array.
        val_mask: Validation nodes, as ``train_mask`` (None: none).
        test_mask: Test nodes, as ``train_mask`` (None: none).
        fanouts: Neighbours sampled per node and edge type, one entry per layer in DGL's
            order as in :func:`~graphshard.train.sage.train_sage`: input layer first,
            so the last entry is the hop from the seeds (``[5, 10]``: 10 per seed and edge
            type, then 5 per node of that hop); -1 takes all.
        num_layers: Message-passing layers; must equal ``len(fanouts)`` (None: that).
        eval_fanouts: Fanouts of the seeded evaluation sampler, same order (None: every
            training fanout doubled; -1 stays -1).
        hidden: Hidden width.
        heads: Attention heads of HGT (``hidden`` must be a multiple).
        epochs: Epochs at most.
        batch_size: Training nodes per step (per trainer).
        eval_batch_size: Nodes per evaluation batch.
        lr: Adam learning rate.
        dropout: Dropout on the inputs and after every layer.
        weight_decay: Adam weight decay.
        multilabel: True for a 0/1 label matrix (sigmoid + BCE, threshold 0.5), False for
            class IDs (softmax + cross-entropy); None infers it from the label's shape.
        monitor: Validation metric that picks the best epoch: ``"macro_f1"`` or
            ``"micro_f1"``.
        patience: Stop after this many evaluated epochs without a better ``monitor``
            score (None: run every epoch).
        warmup: Epochs not monitored: the best epoch is one of the later ones (a Macro-F1
            at epoch 0 that training first lowers cannot hold the run), and ``patience``
            stops no run before epoch ``warmup + patience``.
        eval_every: Evaluate every this many epochs (and after the last).
        seed: Seed of initialisation, dropout, batch order and sampling.
        num_trainers: Trainer processes (Ray actors, DDP on gloo); more than one needs a
            partition config path.  Trainer ``r`` takes the training nodes of partitions
            ``r, r + num_trainers, ...``.
        trainer_cpus: CPUs each trainer actor reserves in Ray.
        on_epoch: Called after each epoch with ``(epoch, {"loss", "val_micro_f1",
            "val_macro_f1", "test_micro_f1", "test_macro_f1", "seconds", "eval_seconds",
            "samples"})``.

    Returns:
        HeteroResult: per-epoch history, the best validation epoch and the test scores there.

    Raises:
        ValidationError: an unknown model, target or monitor, bad numbers or fanouts, no
            training nodes, unlabelled nodes in a split, or a label that is not what
            ``multilabel`` says.
        MissingDependencyError: torch or torch_geometric (or, for several trainers, ray) is
            not installed.
    """
    check_choice(model, MODELS, "model", where="train_hetero")
    check_choice(monitor, METRICS, "monitor", where="train_hetero")
    layers = _fanouts("fanouts", fanouts, num_layers)
    evals = (_fanouts("eval_fanouts", eval_fanouts, len(layers)) if eval_fanouts is not None
             else [f * 2 if f > 0 else f for f in layers])
    for name, v in (("epochs", epochs), ("batch_size", batch_size), ("hidden", hidden),
                    ("heads", heads), ("eval_batch_size", eval_batch_size),
                    ("eval_every", eval_every), ("num_trainers", num_trainers),
                    ("patience", 1 if patience is None else patience)):
        if int(v) < 1:
            raise ValidationError(f"train_hetero: {name} must be >= 1, got {v!r}", field=name,
                                  value=v)
    check_stopping("train_hetero", patience, 0.0, warmup)
    if model == "hgt" and int(hidden) % int(heads):
        raise ValidationError(f"train_hetero: hidden ({hidden}) must be a multiple of heads "
                              f"({heads}) for HGT", field="heads", value=heads)
    kw = dict(model=model, feat=feat, label=label, train_mask=train_mask, val_mask=val_mask,
              test_mask=test_mask, fanouts=layers[::-1], eval_fanouts=evals[::-1],
              hidden=int(hidden), heads=int(heads), batch_size=int(batch_size),
              eval_batch_size=int(eval_batch_size), lr=float(lr), dropout=float(dropout),
              weight_decay=float(weight_decay), seed=int(seed), multilabel=multilabel)
    run: dict[str, Any] = dict(epochs=int(epochs), eval_every=int(eval_every), monitor=monitor,
               patience=patience, warmup=warmup, on_epoch=on_epoch)
    if int(num_trainers) > 1:
        if not isinstance(store_or_config, (str, os.PathLike)):
            raise ValidationError("train_hetero: num_trainers > 1 needs the path of a "
                                  "partition config JSON (each trainer connects to its "
                                  "servers)", field="store_or_config")
        from ..distributed import DistGraph
        from .ddp import RayTeam

        if target is None:
            dg = DistGraph(store_or_config)
            try:
                target = _target(dg, None, label)
            finally:
                dg.close()
        with RayTeam(store_or_config, int(num_trainers), {**kw, "target": target},
                     trainer_cpus=float(trainer_cpus), trainer="hetero") as team:
            return _run(team, **run)
    with open_store(store_or_config) as store:
        trainer = HeteroTrainer(store, target=_target(store, target, label), **kw)
        return _run(LocalTeam(trainer), **run)


def _run(team: Any, *, epochs: int, eval_every: int, monitor: str, patience: int | None,
         on_epoch: Any, warmup: int = 0) -> HeteroResult:
    """The shared epoch loop (:func:`~graphshard.train.epochs.run_epochs`) and its
    history as a HeteroResult."""
    run = run_epochs(team, epochs=epochs, eval_every=eval_every, metrics=METRICS,
                     monitor=monitor, patience=patience, warmup=warmup, on_epoch=on_epoch,
                     what="train_hetero")
    h, net = run.history, run.model
    return HeteroResult(h["losses"], h["val_micro_f1"], h["val_macro_f1"], h["test_micro_f1"],
                        h["test_macro_f1"], h["seconds"], h["eval_seconds"],
                        as_ints(h["samples"]), run.best_epoch, monitor, run.stopped_early,
                        bool(net.spec["multilabel"]), net)
