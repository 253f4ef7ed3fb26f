"""One GraphSAGE trainer (model, optimizer, its share of the training nodes over a store).

:func:`~graphshard.train.sage.train_sage` drives one in-process; the multi-trainer run
(:mod:`~graphshard.train.ddp`) drives one per Ray actor.  Both import it from here, so
neither imports the other back.

Unstable API (issue 7).

Example:
    >>> import numpy as np
    >>> from graphshard.train.sage_trainer import trainer_share
    >>> trainer_share(None, np.arange(6), 1, 2).tolist()
    [3, 4, 5]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._util.optional import import_optional
from ..errors import ValidationError
from ..sampling import sample_blocks
from ..store import as_store
from ..typing import IdArray
from ._common import node_ids, read_rows, subseed, the_ntype
from ._sage_model import accuracy, dense, inference, mean_adjacency, sage_class
from .trainer_base import TrainerBase

__all__ = ["SageTrainer", "trainer_share"]

def trainer_share(book: Any, train: IdArray, rank: int, world: int, *,
                  edges: bool = False, ntype: str | None = None,
                  etype: Any = None) -> IdArray:
    """The training nodes of trainer ``rank`` of ``world``: those owned by its partitions
    (with ``edges``, training edge IDs: an edge belongs to its destination's partition;
    ``ntype`` names the nodes' type on a graph with several).

    With at least as many partitions as trainers, trainer ``r`` takes the nodes of parts
    ``r, r + world, ...``; with fewer, the trainers of one partition split its nodes into
    equal contiguous runs (``world`` must then be a multiple of the number of parts).
    ``book`` is a partition book, or None for an unpartitioned graph (equal runs);
    ``train`` holds per-type IDs of ``ntype`` (default: the graph's only node type), or
    with ``edges`` of ``etype`` (default: the only edge type).
    """
    if world == 1:
        return train
    if book is None:
        return np.array_split(train, world)[rank]
    parts = int(book.num_partitions())
    if edges:
        ets = book.canonical_etypes
        if etype is None:
            etype = ets[0] if len(ets) == 1 else None
        owner = np.asarray(book.eid2partid(train, etype))
    else:
        if ntype is None:
            ntype = book.ntypes[0] if len(book.ntypes) == 1 else None
        owner = np.asarray(book.nid2partid(train, ntype))
    if parts >= world:
        return train[owner % world == rank]
    if world % parts:
        raise ValidationError(f"{world} trainers cannot share {parts} partitions evenly: use a "
                              f"multiple of {parts} trainers, or at most {parts}",
                              field="num_trainers", value=world)
    own = train[owner == rank % parts]
    return np.array_split(own, world // parts)[rank // parts]


class SageTrainer(TrainerBase):
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
                 normalize: bool = False, rank: int = 0, world: int = 1) -> None:
        torch = import_optional("torch", "training")
        store = as_store(store)
        self.torch, self.store, self.feat = torch, store, feat
        self.fanouts, self.seed, self.rank = [int(f) for f in fanouts], int(seed), int(rank)
        self.batch_size = int(batch_size)
        self._adjacency: Any = None  # the mean adjacency evaluation reads once (evaluate)
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
        in_dim = dense(read_rows(store, nt, feat, all_ids[:1])).shape[1]
        spec = {"in_dim": int(in_dim), "hidden": int(hidden),
                "out_dim": int(self.labels.max()) + 1, "num_layers": len(self.fanouts),
                "dropout": float(dropout)}
        if normalize:  # a spec without it is the model every earlier checkpoint holds
            spec["normalize"] = True
        self.init_model(spec, seed=seed, lr=lr, weight_decay=weight_decay)

    @staticmethod
    def build_model(spec: dict[str, Any]) -> Any:
        """A new model of ``spec`` (:meth:`model_spec`)."""
        torch = import_optional("torch", "training")
        return sage_class(torch)(spec["in_dim"], spec["hidden"], spec["out_dim"],
                                 spec["num_layers"], spec["dropout"],
                                 bool(spec.get("normalize", False)))

    def train_epoch(self, epoch: int, steps: int | None = None) -> tuple[float, int]:
        """One pass over this trainer's nodes: (sum of loss x batch size, nodes seen)."""
        torch, store, nt = self.torch, self.store, self.nt
        torch.manual_seed(subseed(self.seed, 6, epoch, self.rank))  # dropout
        self.model.train()
        total, count = 0.0, 0
        for step, batch in enumerate(self.epoch_batches(epoch, steps)):
            sb = sample_blocks(store, batch, self.fanouts, seed=subseed(self.seed, 1, epoch, step))
            x = torch.from_numpy(dense(read_rows(store, nt, self.feat, sb.input_nodes[nt])))
            y = torch.from_numpy(self.labels[sb.output_nodes[nt]])
            loss = torch.nn.functional.cross_entropy(self.net(sb.blocks, x), y)
            total += self.step(loss) * len(batch)
            count += len(batch)
        return total, count

    def evaluate(self) -> dict[str, tuple[float, float]]:
        """``{"acc": (validation, test)}`` accuracy with full-neighbour layer-wise inference
        (:func:`~graphshard.train._sage_model.inference`); the graph's mean adjacency is
        read on the first call and kept (the structure does not change while training)."""
        if self._adjacency is None:
            self._adjacency = mean_adjacency(self.store, self.nt)
        pred = inference(self.torch, self.model, self.store, self.nt, self.feat,
                         adjacency=self._adjacency).argmax(1)
        return {"acc": (accuracy(pred, self.labels, self.val),
                        accuracy(pred, self.labels, self.test))}
