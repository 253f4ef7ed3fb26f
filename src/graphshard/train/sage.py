"""GraphSAGE (mean aggregator) node classification trained through block sampling.

Training samples blocks around each mini-batch of training nodes with
:func:`graphshard.sampling.sample_blocks` and reads features through the store protocol, so
the same code runs on a local :class:`~graphshard.graph.Graph` and on a
:class:`~graphshard.distributed.DistGraph`.  Evaluation is exact full-neighbour inference, layer by
layer over all nodes (as DGL's ``SAGE.inference``): each layer is computed once for every
node, its neighbour mean one sparse product with the graph's mean in-adjacency (read through
the store once and kept), so it has no sampling noise and costs about a training epoch or
less (sparse features stay sparse).
With the same seed, a DistGraph gives the loss curve of a local run on the same partitioned
graph in its reshuffled IDs (``gs.distributed.assemble_graph(config)``; equal up to float
rounding), because every sampling draw is keyed by node ID and batches come from a seeded
permutation of IDs.  A run on the original graph, whose IDs differ, draws other samples and
gives another curve (of the same kind, not the same numbers).

With ``num_trainers > 1`` the trainers are Ray actors on the partitions' servers, each taking
the training nodes of its own partitions, with gradients all-reduced by torch DDP on gloo
(:mod:`~graphshard.train.ddp`).  With ``checkpoint_dir`` the model, the optimizer state,
the epoch and the metrics are checkpointed after every epoch
(:mod:`~graphshard.train.checkpoint`); every epoch's draws (batch order, sampling,
dropout) depend on ``(seed, epoch)`` only, so a resumed run ends as an uninterrupted one.
The epoch loop is :func:`~graphshard.train.epochs.run_epochs`: the result names the best
validation epoch and the test accuracy there, and with ``patience`` the run stops early
once validation accuracy stops improving.

Unstable API (issue 7).

Example:
    >>> import graphshard as gs
    >>> from graphshard.train import train_sage
    >>> g = gs.datasets.sbm(200, 1200, num_blocks=2, num_features=4, seed=0)
    >>> res = train_sage(g, fanouts=[5, 5], hidden=8, epochs=2, seed=0)  # doctest: +SKIP
    >>> len(res.losses), res.test_acc[-1] > 0.5  # doctest: +SKIP
    (2, True)
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ValidationError
from ._common import open_store
from .checkpoint import resume_checkpoint
from .epochs import LocalTeam, as_ints, best_epoch, check_stopping, finite, run_epochs
from .sage_trainer import SageTrainer, trainer_share

__all__ = ["SageTrainer", "TrainResult", "train_sage", "trainer_share"]

logger = logging.getLogger(__name__)

@dataclass(frozen=True)
class TrainResult:
    """What :func:`train_sage` returns.

    Epochs are counted from 0: entry ``e`` of every per-epoch list is epoch ``e``, the
    number :attr:`best_epoch`, the ``on_epoch`` callback and ``graphshard train`` (its
    table, stderr lines and ``--json``) give it.

    Attributes:
        losses: Mean training cross-entropy per epoch.
        val_acc: Validation accuracy after each epoch (full-neighbour inference); empty
            entries are NaN when there are no validation nodes.
        test_acc: Test accuracy after each epoch (same inference).
        seconds: Training seconds per epoch (sampling, feature reads, steps; no evaluation).
        eval_seconds: Evaluation seconds per epoch.
        model: The trained ``torch.nn.Module`` (:class:`SAGE`), after the last epoch.
        samples: Training nodes (seeds) processed per epoch, all trainers together.
        stopped_early: Whether ``patience`` ended the run before ``epochs``.
        min_delta: The improvement a new best validation accuracy needed
            (:attr:`best_epoch`).
    """

    losses: list[float]
    val_acc: list[float]
    test_acc: list[float]
    seconds: list[float]
    eval_seconds: list[float]
    model: Any = field(repr=False, compare=False)
    samples: list[int] = field(default_factory=list)
    stopped_early: bool = False
    min_delta: float = 0.0
    warmup: int = 0

    @property
    def samples_per_second(self) -> float:
        """Training nodes per second of training time, over all epochs."""
        secs = sum(self.seconds)
        return sum(self.samples) / secs if secs > 0 else float("nan")

    @property
    def best_epoch(self) -> int:
        """Epoch (counted from 0, an index into the per-epoch lists) with the best
        validation accuracy: the first to beat every earlier one by more than
        :attr:`min_delta`, from epoch :attr:`warmup` on (the last epoch when none was
        measured; see :func:`~graphshard.train.epochs.best_epoch`)."""
        return best_epoch(self.val_acc, min_delta=self.min_delta, warmup=self.warmup)

    @property
    def val_at_best_val(self) -> float:
        """Validation accuracy at :attr:`best_epoch`."""
        return float(self.val_acc[self.best_epoch]) if self.val_acc else float("nan")

    @property
    def test_at_best_val(self) -> float:
        """Test accuracy at :attr:`best_epoch`."""
        return float(self.test_acc[self.best_epoch]) if self.test_acc else float("nan")

    def summary(self) -> dict[str, Any]:
        """JSON-able summary: epochs run, best epoch (from 0), the metric that picked it
        (``acc``), validation and test metrics there (None when not measured), whether the
        run stopped early."""
        return {"epochs": len(self.losses), "best_epoch": self.best_epoch, "monitor": "acc",
                "val": {"acc": finite(self.val_at_best_val)},
                "test": {"acc": finite(self.test_at_best_val)},
                "stopped_early": self.stopped_early}

    def __repr__(self) -> str:
        last = lambda xs: f"{xs[-1]:.4f}" if xs else "-"  # noqa: E731
        return (f"TrainResult(epochs={len(self.losses)}, loss={last(self.losses)}, "
                f"val_acc={last(self.val_acc)}, test_acc={last(self.test_acc)}, "
                f"best_epoch={self.best_epoch}, test_at_best_val={self.test_at_best_val:.4f}, "
                f"stopped_early={self.stopped_early}, seconds={sum(self.seconds):.1f})")


def _params(kw: dict[str, Any], num_trainers: int) -> dict[str, Any]:
    """JSON-able run parameters stored in a checkpoint and compared on resume."""
    keep = ("feat", "label", "fanouts", "hidden", "batch_size", "lr", "dropout",
            "weight_decay", "seed", "normalize")
    # only the keys this run has: a run without normalize keeps its old parameters
    out = {k: (list(kw[k]) if k == "fanouts" else kw[k]) for k in keep if k in kw}
    out["num_trainers"] = int(num_trainers)
    return out


def train_sage(store_or_config: Any, *, feat: str = "feat", label: str = "label",
               train_mask: Any = "train_mask", val_mask: Any = "val_mask",
               test_mask: Any = "test_mask", fanouts: Sequence[int] = (10, 25),
               hidden: int = 128, epochs: int = 10, batch_size: int = 512, lr: float = 3e-3,
               dropout: float = 0.5, weight_decay: float = 0.0, normalize: bool = False,
               eval_every: int = 1, patience: int | None = None, min_delta: float = 0.0,
               warmup: int = 0, seed: int = 0, num_trainers: int = 1,
               trainer_cpus: float = 1.0,
               checkpoint_dir: str | os.PathLike[str] | None = None, resume: bool = True,
               on_epoch: Callable[[int, dict[str, float]], None] | None = None
               ) -> TrainResult:
    """Train GraphSAGE-mean for node classification from a store through block sampling.

    Args:
        store_or_config: A Graph, a GraphStore (a DistGraph), or the path of a partition
            config JSON (a DistGraph is started and closed here; servers already running
            for it are used).
        feat: Node feature with the inputs (float, ``(N, F)``).
        label: Node feature with integer class labels (``(N,)``).
        train_mask: Training nodes: a node feature name (non-zero = in), a boolean mask
            or an ID array.
        val_mask: Validation nodes, as ``train_mask`` (None: none).
        test_mask: Test nodes, as ``train_mask`` (None: none).
        fanouts: Neighbours per layer, input layer first as in DGL (``[10, 25]``: 25 per
            seed, 10 per node of the next hop); one layer per entry.
        hidden: Hidden width.
        epochs: Passes over the training nodes (in all, counting resumed ones).
        batch_size: Training nodes per step (per trainer).
        lr: Adam learning rate.
        dropout: Dropout between layers.
        weight_decay: Adam weight decay.
        normalize: Divide each layer's output row by its L2 norm where that exceeds 1
            (before the activation), as Shchur et al.'s GraphSAGE does
            (``graphshard.train.preset("shchur", "sage")`` sets it).
        eval_every: Evaluate every this many epochs (and after the last); other epochs
            record NaN accuracies.
        patience: Stop early once an evaluation finds this many epochs since the best
            validation accuracy (None: run all ``epochs``); see
            :mod:`~graphshard.train.epochs`.
        min_delta: A new best validation accuracy must beat the previous best by more
            than this.
        warmup: Epochs not monitored: the best epoch is one of the later ones, and
            ``patience`` stops no run before epoch ``warmup + patience``.
        seed: Seed of model initialisation, dropout, batch order and sampling.
        num_trainers: Trainer processes (Ray actors, torch DDP on gloo); more than one needs
            a partition config path.  Trainer ``r`` takes the training nodes of partitions
            ``r, r + num_trainers, ...`` (see :func:`trainer_share`; partition with
            ``balance_ntypes=train_mask`` to even them out).
        trainer_cpus: CPUs each trainer actor reserves in Ray.
        checkpoint_dir: Write a checkpoint (model, optimizer, epoch, metrics) here after
            every epoch, atomically.
        resume: Continue from the checkpoint in ``checkpoint_dir`` if there is one.
        on_epoch: Called after each epoch with ``(epoch, {"loss", "val_acc", "test_acc",
            "seconds", "eval_seconds", "samples"})``.

    Returns:
        TrainResult with per-epoch losses, accuracies and timings (resumed epochs included),
        the best epoch and the test accuracy there, whether it stopped early, and the model.

    Raises:
        ValidationError: more than one node or edge type, no training nodes, bad numbers
            (``patience`` < 1, negative ``min_delta``), or a checkpoint written with other
            parameters.
        MissingDependencyError: torch (or, for several trainers, ray) is not installed.
    """
    fanouts = [int(f) for f in fanouts]
    for name, v in (("epochs", epochs), ("batch_size", batch_size), ("hidden", hidden),
                    ("eval_every", eval_every), ("layers", len(fanouts)),
                    ("num_trainers", num_trainers)):
        if int(v) < 1:
            raise ValidationError(f"train_sage: {name} must be >= 1, got {v!r}", field=name,
                                  value=v)
    check_stopping("train_sage", patience, min_delta, warmup)
    kw = dict(feat=feat, label=label, train_mask=train_mask, val_mask=val_mask,
              test_mask=test_mask, fanouts=fanouts, hidden=int(hidden),
              batch_size=int(batch_size), lr=float(lr), dropout=float(dropout),
              weight_decay=float(weight_decay), seed=int(seed))
    if normalize:
        kw["normalize"] = True
    params = _params(kw, int(num_trainers))
    ck = resume_checkpoint(checkpoint_dir, params) if checkpoint_dir and resume else None
    run: dict[str, Any] = dict(epochs=int(epochs), eval_every=int(eval_every),
                               checkpoint_dir=checkpoint_dir, checkpoint=ck,
                               on_epoch=on_epoch, params=params, patience=patience,
                               min_delta=float(min_delta), warmup=warmup)
    if int(num_trainers) > 1:
        if not isinstance(store_or_config, (str, os.PathLike)):
            raise ValidationError("train_sage: num_trainers > 1 needs the path of a partition "
                                  "config JSON (each trainer connects to its servers)",
                                  field="store_or_config")
        from .ddp import RayTeam

        with RayTeam(store_or_config, int(num_trainers), kw,
                     trainer_cpus=float(trainer_cpus)) as team:
            return _run(team, **run)
    with open_store(store_or_config) as store:
        return _run(LocalTeam(SageTrainer(store, **kw)), **run)


def _run(team: Any, *, epochs: int, eval_every: int, checkpoint_dir: Any, checkpoint: Any,
         on_epoch: Any, params: dict[str, Any], patience: int | None = None,
         min_delta: float = 0.0, warmup: int = 0) -> TrainResult:
    """The shared epoch loop (:func:`~graphshard.train.epochs.run_epochs`) on accuracy."""
    run = run_epochs(team, epochs=epochs, eval_every=eval_every, metrics=("acc",),
                     patience=patience, min_delta=min_delta, warmup=warmup,
                     checkpoint_dir=checkpoint_dir,
                     checkpoint=checkpoint, on_epoch=on_epoch, params=params, what="train_sage")
    h = run.history
    return TrainResult(h["losses"], h["val_acc"], h["test_acc"], h["seconds"],
                       h["eval_seconds"], run.model, as_ints(h["samples"]),
                       stopped_early=run.stopped_early, min_delta=min_delta, warmup=warmup)
