"""GraphSAGE (mean aggregator) node classification trained through block sampling.

Training samples blocks around each mini-batch of training nodes with
:func:`graphshard.sampling.sample_blocks` and reads features through the store protocol, so
the same code runs on a local :class:`~graphshard.graph.Graph` and on a
:class:`~graphshard.dist.DistGraph`.  Evaluation is exact full-neighbour inference, layer by
layer over all nodes (fanout -1, as DGL's ``SAGE.inference``), so it has no sampling noise.
With the same seed, a DistGraph gives the loss curve of a local run on the same partitioned
graph in its reshuffled IDs (``gs.dist.assemble_graph(config)``; equal up to float
rounding), because every sampling draw is keyed by node ID and batches come from a seeded
permutation of IDs.  A run on the original graph, whose IDs differ, draws other samples and
gives another curve (of the same kind, not the same numbers).

With ``num_trainers > 1`` the trainers are Ray actors on the partitions' servers, each taking
the training nodes of its own partitions, with gradients all-reduced by torch DDP on gloo
(:mod:`~graphshard.examples.ddp`).  With ``checkpoint_dir`` the model, the optimizer state,
the epoch and the metrics are checkpointed after every epoch
(:mod:`~graphshard.examples.checkpoint`); every epoch's draws (batch order, sampling,
dropout) depend on ``(seed, epoch)`` only, so a resumed run ends as an uninterrupted one.

Unstable API (issue 7).

Example:
    >>> import graphshard as gs
    >>> from graphshard.examples import train_sage
    >>> g = gs.datasets.sbm(200, 1200, num_blocks=2, num_features=4, seed=0)
    >>> res = train_sage(g, fanouts=[5, 5], hidden=8, epochs=2, seed=0)  # doctest: +SKIP
    >>> len(res.losses), res.test_acc[-1] > 0.5  # doctest: +SKIP
    (2, True)
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._util.optional import import_optional
from .._util.progress import progress
from ..errors import ValidationError
from ..sampling import sample_blocks
from ..store import as_store
from ..typing import IdArray
from ._common import node_ids, open_store, read_rows, subseed, the_ntype
from ._sage_model import accuracy, dense, inference, sage_class
from .checkpoint import resume_checkpoint

__all__ = ["SageTrainer", "TrainResult", "train_sage", "trainer_share"]

logger = logging.getLogger(__name__)

@dataclass(frozen=True)
class TrainResult:
    """What :func:`train_sage` returns.

    Attributes:
        losses: Mean training cross-entropy per epoch.
        val_acc: Validation accuracy after each epoch (full-neighbour inference); empty
            entries are NaN when there are no validation nodes.
        test_acc: Test accuracy after each epoch (same inference).
        seconds: Training seconds per epoch (sampling, feature reads, steps; no evaluation).
        eval_seconds: Evaluation seconds per epoch.
        model: The trained ``torch.nn.Module`` (:class:`SAGE`).
        samples: Training nodes (seeds) processed per epoch, all trainers together.
    """

    losses: list[float]
    val_acc: list[float]
    test_acc: list[float]
    seconds: list[float]
    eval_seconds: list[float]
    model: Any = field(repr=False, compare=False)
    samples: list[int] = field(default_factory=list)

    @property
    def samples_per_second(self) -> float:
        """Training nodes per second of training time, over all epochs."""
        secs = sum(self.seconds)
        return sum(self.samples) / secs if secs > 0 else float("nan")

    @property
    def best_epoch(self) -> int:
        """Epoch (0-based) with the best validation accuracy (the last when there is none)."""
        val = np.nan_to_num(np.asarray(self.val_acc, dtype=float), nan=-1.0)
        return int(np.argmax(val)) if len(val) and val.max() >= 0 else len(self.losses) - 1

    @property
    def test_at_best_val(self) -> float:
        """Test accuracy at :attr:`best_epoch`."""
        return float(self.test_acc[self.best_epoch]) if self.test_acc else float("nan")

    def __repr__(self) -> str:
        last = lambda xs: f"{xs[-1]:.4f}" if xs else "-"  # noqa: E731
        return (f"TrainResult(epochs={len(self.losses)}, loss={last(self.losses)}, "
                f"val_acc={last(self.val_acc)}, test_acc={last(self.test_acc)}, "
                f"seconds={sum(self.seconds):.1f})")


def trainer_share(book: Any, train: IdArray, rank: int, world: int) -> IdArray:
    """The training nodes of trainer ``rank`` of ``world``: those owned by its partitions.

    With at least as many partitions as trainers, trainer ``r`` takes the nodes of parts
    ``r, r + world, ...``; with fewer, the trainers of one partition split its nodes into
    equal contiguous runs (``world`` must then be a multiple of the number of parts).
    ``book`` is a partition book, or None for an unpartitioned graph (equal runs).
    """
    if world == 1:
        return train
    if book is None:
        return np.array_split(train, world)[rank]
    parts = int(book.num_partitions())
    owner = np.asarray(book.nid2partid(train, book.ntypes[0] if len(book.ntypes) == 1 else None))
    if parts >= world:
        return train[owner % world == rank]
    if world % parts:
        raise ValidationError(f"{world} trainers cannot share {parts} partitions evenly: use a "
                              f"multiple of {parts} trainers, or at most {parts}",
                              field="num_trainers", value=world)
    own = train[owner == rank % parts]
    return np.array_split(own, world // parts)[rank // parts]


class SageTrainer:
    """One GraphSAGE trainer: its store (a Graph or GraphStore), model, optimizer and
    training nodes (its :func:`trainer_share` of ``train_mask`` as rank ``rank`` of ``world``).

    ``train_sage`` drives one of these in-process; the multi-trainer run drives one per
    process (rank) and wraps the model for DDP (set :attr:`net`).  Each epoch is seeded by
    ``(seed, epoch)`` alone (batch order, sampling, dropout), so a run resumed from a
    checkpoint continues exactly as an uninterrupted one.
    """

    def __init__(self, store: Any, *, feat: str, label: str, train_mask: Any,
                 val_mask: Any, test_mask: Any, fanouts: Sequence[int], hidden: int,
                 batch_size: int, lr: float, dropout: float, weight_decay: float, seed: int,
                 rank: int = 0, world: int = 1) -> None:
        torch = import_optional("torch", "training")
        store = as_store(store)
        self.torch, self.store, self.feat = torch, store, feat
        self.fanouts, self.seed, self.rank = [int(f) for f in fanouts], int(seed), int(rank)
        self.batch_size = int(batch_size)
        self.nt = nt = the_ntype(store, "train_sage")
        if len(store.canonical_etypes) != 1:
            raise ValidationError(f"train_sage needs a graph with one edge type, got "
                                  f"{store.canonical_etypes}", field="store")
        n = store.num_nodes(nt)
        all_ids = np.arange(n, dtype=np.int64)
        self.labels = read_rows(store, nt, label, all_ids).reshape(n).astype(np.int64)
        train = node_ids(store, nt, train_mask, "train_mask")
        self.val = node_ids(store, nt, val_mask, "val_mask")
        self.test = node_ids(store, nt, test_mask, "test_mask")
        if not len(train):
            raise ValidationError("train_sage: no training nodes", field="train_mask")
        book = store.get_partition_book() if hasattr(store, "get_partition_book") else None
        self.train = trainer_share(book, train, self.rank, int(world))
        in_dim = dense(store.node_features(nt, feat, all_ids[:1])).shape[1]
        torch.manual_seed(seed)  # the same initial model on every rank
        self.model = sage_class(torch)(in_dim, int(hidden), int(self.labels.max()) + 1,
                                        len(self.fanouts), float(dropout))
        self.net = self.model
        self.opt = torch.optim.Adam(self.model.parameters(), lr=lr, weight_decay=weight_decay)

    def _batches(self, epoch: int, steps: int | None) -> list[IdArray]:
        perm = np.random.default_rng(subseed(self.seed, 0, epoch)).permutation(self.train)
        if steps is None:
            return [perm[i:i + self.batch_size] for i in range(0, len(perm), self.batch_size)]
        if len(perm) < steps:  # a small share repeats nodes: no rank may skip an all-reduce
            perm = np.resize(perm, steps)
        return np.array_split(perm, steps)  # every rank takes the same number of steps

    def train_epoch(self, epoch: int, steps: int | None = None) -> tuple[float, int]:
        """One pass over this trainer's nodes: (sum of loss x batch size, nodes seen)."""
        torch, store, nt = self.torch, self.store, self.nt
        torch.manual_seed(subseed(self.seed, 6, epoch, self.rank))  # dropout
        self.model.train()
        total, count = 0.0, 0
        for step, batch in enumerate(self._batches(epoch, steps)):
            sb = sample_blocks(store, batch, self.fanouts, seed=subseed(self.seed, 1, epoch, step))
            x = torch.from_numpy(dense(store.node_features(nt, self.feat, sb.input_nodes[nt])))
            y = torch.from_numpy(self.labels[sb.output_nodes[nt]])
            loss = torch.nn.functional.cross_entropy(self.net(sb.blocks, x), y)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            total += float(loss.detach()) * len(batch)
            count += len(batch)
        return total, count

    def evaluate(self) -> tuple[float, float]:
        """(validation, test) accuracy with full-neighbour inference."""
        pred = inference(self.torch, self.model, self.store, self.nt, self.feat).argmax(1)
        return accuracy(pred, self.labels, self.val), accuracy(pred, self.labels, self.test)

    def num_train(self) -> int:
        """Training nodes of this trainer."""
        return len(self.train)

    def state(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """(model, optimizer) state dicts."""
        return self.model.state_dict(), self.opt.state_dict()

    def load_state(self, model: dict[str, Any], optimizer: dict[str, Any]) -> None:
        """Load state dicts whose tensors may be NumPy arrays (from a checkpoint)."""
        self.model.load_state_dict(_to_torch(self.torch, model))
        self.opt.load_state_dict(_to_torch(self.torch, optimizer))


def _to_torch(torch: Any, obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        return torch.from_numpy(np.array(obj))
    if isinstance(obj, dict):
        return {k: _to_torch(torch, v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_to_torch(torch, v) for v in obj]
    return obj


class _LocalTeam:
    """One in-process trainer behind the interface the epoch loop drives."""

    def __init__(self, trainer: SageTrainer) -> None:
        self.trainer = trainer
        self.num_train = trainer.num_train()

    def train_epoch(self, epoch: int) -> tuple[float, int]:
        return self.trainer.train_epoch(epoch)

    def evaluate(self) -> tuple[float, float]:
        return self.trainer.evaluate()

    def state(self) -> tuple[dict[str, Any], dict[str, Any]]:
        return self.trainer.state()

    def load_state(self, model: dict[str, Any], optimizer: dict[str, Any]) -> None:
        self.trainer.load_state(model, optimizer)

    def model(self) -> Any:
        return self.trainer.model

    def close(self) -> None:
        pass


def _params(kw: dict[str, Any], num_trainers: int) -> dict[str, Any]:
    """JSON-able run parameters stored in a checkpoint and compared on resume."""
    keep = ("feat", "label", "fanouts", "hidden", "batch_size", "lr", "dropout",
            "weight_decay", "seed")
    out = {k: (list(kw[k]) if k == "fanouts" else kw[k]) for k in keep}
    out["num_trainers"] = int(num_trainers)
    return out


def train_sage(store_or_config: Any, *, feat: str = "feat", label: str = "label",
               train_mask: Any = "train_mask", val_mask: Any = "val_mask",
               test_mask: Any = "test_mask", fanouts: Sequence[int] = (10, 25),
               hidden: int = 128, epochs: int = 10, batch_size: int = 512, lr: float = 3e-3,
               dropout: float = 0.5, weight_decay: float = 0.0, eval_every: int = 1,
               seed: int = 0, num_trainers: int = 1, trainer_cpus: float = 1.0,
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
        eval_every: Evaluate every this many epochs (and after the last); other epochs
            record NaN accuracies.
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
        and the model.

    Raises:
        ValidationError: more than one node or edge type, no training nodes, bad numbers,
            or a checkpoint written with other parameters.
        MissingDependencyError: torch (or, for several trainers, ray) is not installed.
    """
    fanouts = [int(f) for f in fanouts]
    for name, v in (("epochs", epochs), ("batch_size", batch_size), ("hidden", hidden),
                    ("eval_every", eval_every), ("layers", len(fanouts)),
                    ("num_trainers", num_trainers)):
        if int(v) < 1:
            raise ValidationError(f"train_sage: {name} must be >= 1, got {v!r}", field=name,
                                  value=v)
    kw = dict(feat=feat, label=label, train_mask=train_mask, val_mask=val_mask,
              test_mask=test_mask, fanouts=fanouts, hidden=int(hidden),
              batch_size=int(batch_size), lr=float(lr), dropout=float(dropout),
              weight_decay=float(weight_decay), seed=int(seed))
    params = _params(kw, int(num_trainers))
    ck = resume_checkpoint(checkpoint_dir, params) if checkpoint_dir and resume else None
    run = dict(epochs=int(epochs), eval_every=int(eval_every), checkpoint_dir=checkpoint_dir,
               checkpoint=ck, on_epoch=on_epoch, params=params)
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
        team = _LocalTeam(SageTrainer(store, **kw))
        return _run(team, **run)


def _run(team: Any, *, epochs: int, eval_every: int, checkpoint_dir: Any, checkpoint: Any,
         on_epoch: Any, params: dict[str, Any]) -> TrainResult:
    """The epoch loop: (resume,) train, evaluate, report, checkpoint."""
    names = ("losses", "val_acc", "test_acc", "seconds", "eval_seconds", "samples")
    hist: dict[str, list[float]] = {k: [] for k in names}
    start = 0
    if checkpoint is not None:
        team.load_state(checkpoint.model, checkpoint.optimizer)
        start = checkpoint.epoch
        for name in names:
            hist[name].extend(checkpoint.history.get(name, [])[:start])
        logger.info("train_sage: resumed from %s after epoch %d", checkpoint_dir, start)
    for epoch in progress(range(start, epochs), desc="epochs", total=epochs - start,
                          unit="epoch"):
        t0 = time.perf_counter()
        total, count = team.train_epoch(epoch)
        hist["seconds"].append(time.perf_counter() - t0)
        hist["losses"].append(total / max(count, 1))
        hist["samples"].append(count)
        t1 = time.perf_counter()
        val, test = (team.evaluate() if (epoch + 1) % eval_every == 0 or epoch + 1 == epochs
                     else (float("nan"), float("nan")))
        hist["val_acc"].append(val)
        hist["test_acc"].append(test)
        hist["eval_seconds"].append(time.perf_counter() - t1)
        logger.info("train_sage epoch %d: loss %.4f, val %.4f, test %.4f, %.1f s train, "
                    "%.1f s eval", epoch, hist["losses"][-1], val, test, hist["seconds"][-1],
                    hist["eval_seconds"][-1])
        if checkpoint_dir is not None:
            from .checkpoint import save_checkpoint

            model_state, opt_state = team.state()
            save_checkpoint(checkpoint_dir, model_state, opt_state, epoch=epoch + 1,
                            history=hist, params=params)
        if on_epoch is not None:
            on_epoch(epoch, {"loss": hist["losses"][-1], "val_acc": val, "test_acc": test,
                             "seconds": hist["seconds"][-1],
                             "eval_seconds": hist["eval_seconds"][-1],
                             "samples": hist["samples"][-1]})
    return TrainResult(hist["losses"], hist["val_acc"], hist["test_acc"], hist["seconds"],
                       hist["eval_seconds"], team.model(), [int(s) for s in hist["samples"]])
