"""GraphSAGE link prediction trained from edge batches, on a graph or on its partitions.

The graph is split first (:func:`~graphshard.train.link_split.split_edges`, or
:func:`~graphshard.train.link_files.partition_for_link` for partitions): training
batches come from the training graph's edges
(:class:`~graphshard.train.link_trainer.LinkTrainer`), and the fixed validation and test
edges, with their negatives, are scored after each evaluated epoch by AUC, MRR and Hits@K.
The epoch loop is :func:`~graphshard.train.epochs.run_epochs` (best validation epoch on
``monitor``, early stopping with ``patience``, checkpoints and resume).  With
``num_trainers > 1`` the trainers are Ray actors with DDP, as for
:func:`~graphshard.train.sage.train_sage` (:mod:`~graphshard.train.ddp`).

On a heterogeneous graph (``etype`` names the predicted edge type; ``split_edges(g,
etype=..., reverse_etype=...)`` holds its pairs out) the encoder is R-GCN or HGT over every
node and edge type (:class:`~graphshard.train.hetero_link_trainer.HeteroLinkTrainer`), in
one process.

Unstable API (issue 26).

Example:
    >>> import graphshard as gs
    >>> from graphshard.train import split_edges, train_link
    >>> g = gs.datasets.sbm(200, 1200, num_blocks=2, num_features=4, seed=0)
    >>> res = train_link(split_edges(g, num_negatives=20), fanouts=[5], hidden=8,
    ...                  epochs=2)  # doctest: +SKIP
    >>> res.summary()["test"]["auc"] > 0.5  # doctest: +SKIP
    True
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ValidationError, check_choice
from ._common import open_store
from .checkpoint import resume_checkpoint
from .epochs import LocalTeam, ScoredEpochs, as_ints, check_stopping, run_epochs
from .link_split import EdgeSplit, LinkEval
from .link_trainer import LinkTrainer, link_metric_names

__all__ = ["LinkResult", "train_link"]


@dataclass(frozen=True)
class LinkResult(ScoredEpochs):
    """What :func:`train_link` returns.

    Epochs are counted from 0, as :class:`~graphshard.train.epochs.ScoredEpochs` says.

    Attributes:
        losses: Mean training loss (BCE, positive + negative side) per epoch.
        val: Per metric (``auc``, ``mrr``, ``hits@K``), the validation value of each epoch
            (NaN where not evaluated).
        test: The same on the test edges.
        seconds: Training seconds per epoch.
        eval_seconds: Evaluation seconds per epoch.
        samples: Training edges processed per epoch, all trainers together.
        best_epoch: Epoch (from 0) with the best validation ``monitor``; the test
            metrics there are :attr:`test_at_best_val`.
        monitor: The metric that picked it.
        stopped_early: Whether ``patience`` ended the run before ``epochs``.
        model: The ``LinkPredictor`` after the last epoch.
    """

    losses: list[float]
    val: dict[str, list[float]]
    test: dict[str, list[float]]
    seconds: list[float]
    eval_seconds: list[float]
    samples: list[int]
    best_epoch: int
    monitor: str
    stopped_early: bool
    model: Any = field(repr=False, compare=False)


    def __repr__(self) -> str:
        test = self.test_at_best_val
        return (f"LinkResult(epochs={len(self.losses)}, best_epoch={self.best_epoch}, "
                f"test_auc={test.get('auc', float('nan')):.4f}, "
                f"test_mrr={test.get('mrr', float('nan')):.4f}, "
                f"stopped_early={self.stopped_early}, seconds={sum(self.seconds):.1f})")




def _params(kw: dict[str, Any], num_trainers: int) -> dict[str, Any]:
    keep = ("feat", "fanouts", "hidden", "batch_size", "num_negatives", "lr", "dropout",
            "weight_decay", "decoder", "exclude", "hits", "seed", "etype", "reverse_etype",
            "model", "heads", "eval_fanouts")
    # only the keys this run has: a homogeneous run's checkpoints keep their old parameters
    out = {k: (list(kw[k]) if isinstance(kw[k], (list, tuple)) else kw[k])
           for k in keep if k in kw}
    out["num_trainers"] = int(num_trainers)
    return out


def _graph_and_edges(store_or_config: Any, eval_edges: LinkEval | None
                     ) -> tuple[Any, LinkEval | None]:
    """The training store (or config path) and the held-out edges in its IDs."""
    if isinstance(store_or_config, EdgeSplit):
        return store_or_config.train_graph, eval_edges or store_or_config.held_out
    if eval_edges is not None:
        return store_or_config, eval_edges
    from .link_files import load_link_split

    if isinstance(store_or_config, (str, os.PathLike)):
        return store_or_config, load_link_split(store_or_config)
    config = getattr(store_or_config, "config", None)  # a DistGraph knows its config
    if isinstance(config, str) and Path(config).exists():
        return store_or_config, load_link_split(config)
    raise ValidationError("train_link needs held-out edges: pass an EdgeSplit, a partition "
                          "config written by partition_for_link, or eval_edges=",
                          field="eval_edges")


def train_link(store_or_config: Any, *, feat: str = "feat", eval_edges: LinkEval | None = None,
               fanouts: Sequence[int] = (10, 10), hidden: int = 64, epochs: int = 10,
               batch_size: int = 512, num_negatives: int = 1, lr: float = 3e-3,
               dropout: float = 0.0, weight_decay: float = 0.0, decoder: str = "dot",
               exclude: str = "auto", hits: Sequence[int] = (10, 50), monitor: str = "mrr",
               eval_every: int = 1, patience: int | None = None, min_delta: float = 0.0,
               warmup: int = 0,
               seed: int = 0, num_trainers: int = 1, trainer_cpus: float = 1.0,
               checkpoint_dir: str | os.PathLike[str] | None = None, resume: bool = True,
               on_epoch: Callable[[int, dict[str, float]], None] | None = None,
               etype: Any = None, reverse_etype: Any = None, model: str = "rgcn",
               heads: int = 4, eval_fanouts: Sequence[int] | None = None,
               eval_batch_size: int = 1024) -> LinkResult:
    """Train a GraphSAGE link predictor from edge batches with negatives.

    Args:
        store_or_config: An :class:`~graphshard.train.link_split.EdgeSplit` (its training
            graph and held-out edges), a Graph or GraphStore of a training graph (with
            ``eval_edges``; a DistGraph of a :func:`partition_for_link` config finds them),
            or the path of such a partition config (a DistGraph is started and closed here).
        feat: Node feature with the inputs (float, ``(N, F)``).
        eval_edges: Validation and test edges in the store's node IDs (default: those of
            the EdgeSplit or stored beside the partition config).
        fanouts: Neighbours per layer, input layer first (one layer per entry).
        hidden: Width of the hidden layers and of the node embeddings.
        epochs: Passes over the training edges (in all, counting resumed ones).
        batch_size: Positive edges per step (per trainer).
        num_negatives: Uniform negatives per positive in training.
        lr: Adam learning rate.
        dropout: Dropout between layers.
        weight_decay: Adam weight decay.
        decoder: ``"dot"`` (dot product of the two embeddings) or ``"mlp"``.
        exclude: Edges kept out of a batch's message passing: ``"self"`` (the batch's
            edges), ``"reverse"`` (and their reverse edges), ``"none"``, or ``"auto"``
            (``"reverse"`` on a symmetric graph, else ``"self"``).
        hits: The K of each Hits@K metric.
        monitor: Metric that picks the best epoch (``auc``, ``mrr`` or ``hits@K``).
        eval_every: Evaluate every this many epochs (and after the last).
        patience: Stop early once an evaluation finds this many epochs since the best
            validation ``monitor`` (None: never).
        min_delta: A new best must beat the previous one by more than this.
        warmup: Epochs not monitored: the best epoch is one of the later ones, and
            ``patience`` stops no run before epoch ``warmup + patience``.
        seed: Seed of the model, dropout, batch order, negatives and sampling.
        num_trainers: Trainer processes (Ray actors, DDP on gloo); more than one needs a
            partition config path.  Trainer ``r`` takes the edges of partitions ``r, r +
            num_trainers, ...``.
        trainer_cpus: CPUs each trainer actor reserves in Ray.
        checkpoint_dir: Write a checkpoint here after every epoch.
        resume: Continue from the checkpoint in ``checkpoint_dir`` if there is one.
        on_epoch: Called after each epoch with ``(epoch, {"loss", "val_auc", "test_auc",
            ..., "seconds", "eval_seconds", "samples"})``.
        etype: The predicted edge type of a heterogeneous graph (None: an EdgeSplit's, or
            the graph's only one).  Given, or with several edge types, the trainer is the
            heterogeneous one (``decoder`` must be ``"dot"``).
        reverse_etype: The edge type holding each ``etype`` edge's reverse: with
            ``exclude`` ``"reverse"`` (or ``"auto"``) a batch's reverse edges are left out
            of its message passing too.
        model: Heterogeneous encoder: ``"rgcn"`` or ``"hgt"``.
        heads: Attention heads of HGT (``hidden`` must be a multiple).
        eval_fanouts: Heterogeneous evaluation fanouts, same order as ``fanouts`` (None:
            ``fanouts``); each held-out pair's ends are sampled with a fixed seed.
        eval_batch_size: Pairs per heterogeneous evaluation batch.

    Returns:
        LinkResult with per-epoch losses and metrics, the best epoch and the test metrics
        there, whether the run stopped early, and the model.

    Raises:
        ValidationError: several node or edge types, bad numbers or choices, no held-out
            edges, or a checkpoint written with other parameters.
        PartitionNotFoundError: a partition config without a stored link split.
        MissingDependencyError: torch (or, for several trainers, ray) is not installed.
    """
    fanouts = [int(f) for f in fanouts]
    hits = tuple(int(k) for k in hits)
    for name, v in (("epochs", epochs), ("batch_size", batch_size), ("hidden", hidden),
                    ("eval_every", eval_every), ("layers", len(fanouts)),
                    ("num_trainers", num_trainers), ("num_negatives", num_negatives),
                    *((f"hits@{k}", k) for k in hits)):
        if int(v) < 1:
            raise ValidationError(f"train_link: {name} must be >= 1, got {v!r}", field=name,
                                  value=v)
    names = link_metric_names(hits)
    check_choice(monitor, names, "monitor", where="train_link")
    check_stopping("train_link", patience, min_delta, warmup)
    graph, held_out = _graph_and_edges(store_or_config, eval_edges)
    if etype is None and isinstance(store_or_config, EdgeSplit):
        etype = store_or_config.etype
    if etype is None and held_out is not None:  # e.g. stored by partition_for_link
        etype = held_out.etype
    if etype is not None or _several_edge_types(graph):
        return _train_hetero_link(graph, held_out, dict(
            etype=etype, reverse_etype=reverse_etype, model=model, feat=feat,
            fanouts=fanouts[::-1], hidden=int(hidden), heads=int(heads),
            eval_fanouts=(fanouts if eval_fanouts is None else
                          [int(f) for f in eval_fanouts])[::-1],
            batch_size=int(batch_size), eval_batch_size=int(eval_batch_size),
            num_negatives=int(num_negatives), lr=float(lr), dropout=float(dropout),
            weight_decay=float(weight_decay), exclude=exclude, hits=hits, seed=int(seed)),
            decoder=decoder, num_trainers=int(num_trainers),
            trainer_cpus=float(trainer_cpus), checkpoint_dir=checkpoint_dir,
            resume=resume, run=dict(epochs=int(epochs), eval_every=int(eval_every),
                                    metrics=names, monitor=monitor, patience=patience,
                                    min_delta=float(min_delta), warmup=warmup,
                                    on_epoch=on_epoch))
    kw: dict[str, Any] = dict(
        feat=feat, held_out=held_out, fanouts=fanouts, hidden=int(hidden),
        batch_size=int(batch_size), num_negatives=int(num_negatives), lr=float(lr),
        dropout=float(dropout), weight_decay=float(weight_decay), decoder=decoder,
        exclude=exclude, hits=hits, seed=int(seed))
    params = _params(kw, int(num_trainers))
    ck = resume_checkpoint(checkpoint_dir, params) if checkpoint_dir and resume else None
    run: dict[str, Any] = dict(epochs=int(epochs), eval_every=int(eval_every),
                               metrics=names, monitor=monitor, patience=patience,
                               min_delta=float(min_delta), warmup=warmup,
                               checkpoint_dir=checkpoint_dir, checkpoint=ck, on_epoch=on_epoch,
                               params=params, what="train_link")
    if int(num_trainers) > 1:
        if not isinstance(graph, (str, os.PathLike)):
            raise ValidationError("train_link: num_trainers > 1 needs the path of a partition "
                                  "config JSON (each trainer connects to its servers)",
                                  field="store_or_config")
        from .ddp import RayTeam

        with RayTeam(graph, int(num_trainers), kw, trainer_cpus=float(trainer_cpus),
                     trainer="link") as team:
            return _result(run_epochs(team, **run))
    with open_store(graph) as store:
        return _result(run_epochs(LocalTeam(LinkTrainer(store, **kw)), **run))


def _several_edge_types(graph: Any) -> bool:
    """Whether a store (not a config path) has more than one edge type."""
    return not isinstance(graph, (str, os.PathLike)) and \
        len(getattr(graph, "canonical_etypes", ())) > 1


def _train_hetero_link(graph: Any, held_out: LinkEval | None, kw: dict[str, Any], *,
                       decoder: str, num_trainers: int, trainer_cpus: float,
                       checkpoint_dir: Any, resume: bool, run: dict[str, Any]) -> LinkResult:
    """:func:`train_link` on a heterogeneous graph: in this process, or on ``num_trainers``
    Ray actors over the servers of a partition config."""
    from .hetero_link_trainer import HeteroLinkTrainer

    if decoder != "dot":
        raise ValidationError(f"train_link: a heterogeneous graph is scored by the dot "
                              f"product; decoder {decoder!r} is for one node type",
                              field="decoder", value=decoder)
    if num_trainers > 1 and not isinstance(graph, (str, os.PathLike)):
        raise ValidationError("train_link: num_trainers > 1 needs the path of a partition "
                              "config JSON (each trainer connects to its servers)",
                              field="store_or_config")
    if kw["model"] == "hgt" and kw["hidden"] % kw["heads"]:
        raise ValidationError(f"train_link: hidden ({kw['hidden']}) must be a multiple of "
                              f"heads ({kw['heads']}) for HGT", field="heads")
    for name in ("eval_batch_size", "heads"):
        if kw[name] < 1:
            raise ValidationError(f"train_link: {name} must be >= 1, got {kw[name]}",
                                  field=name, value=kw[name])
    if len(kw["eval_fanouts"]) != len(kw["fanouts"]):
        raise ValidationError(f"train_link: eval_fanouts has {len(kw['eval_fanouts'])} "
                              f"layers, fanouts {len(kw['fanouts'])}", field="eval_fanouts")
    params = _params({**kw, "decoder": decoder}, num_trainers)
    ck = resume_checkpoint(checkpoint_dir, params) if checkpoint_dir and resume else None
    if num_trainers > 1:
        from .ddp import RayTeam

        with RayTeam(graph, num_trainers, {**kw, "held_out": held_out},
                     trainer_cpus=trainer_cpus, trainer="hetero_link") as team:
            return _result(run_epochs(team, **run, checkpoint_dir=checkpoint_dir,
                                      checkpoint=ck, params=params, what="train_link"))
    with open_store(graph) as store:
        trainer = HeteroLinkTrainer(store, held_out=held_out, **kw)
        return _result(run_epochs(LocalTeam(trainer), **run, checkpoint_dir=checkpoint_dir,
                                  checkpoint=ck, params=params, what="train_link"))


def _result(run: Any) -> LinkResult:
    h = run.history
    return LinkResult(h["losses"], {m: h[f"val_{m}"] for m in run.metrics},
                      {m: h[f"test_{m}"] for m in run.metrics}, h["seconds"],
                      h["eval_seconds"], as_ints(h["samples"]), run.best_epoch, run.monitor,
                      run.stopped_early, run.model)

