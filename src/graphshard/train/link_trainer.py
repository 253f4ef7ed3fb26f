"""One GraphSAGE link-prediction trainer (model, optimizer, its share of the training edges).

:func:`~graphshard.train.link.train_link` drives one in-process; the multi-trainer run
(:mod:`~graphshard.train.ddp`) drives one per Ray actor, as for GraphSAGE node
classification.  Every edge of the store's graph is a training positive; a batch of them
gets ``num_negatives`` uniform negatives each and blocks around all endpoints
(:func:`~graphshard.sampling.sample_link_batch`), with the batch's edges, and on a
symmetric graph their reverse edges, left out of message passing.  The loss is binary
cross-entropy on the positive and the negative scores (each side averaged).  Evaluation
scores the fixed validation and test edges with embeddings from full-neighbour inference
over the store (the training graph): AUC, MRR and Hits@K
(:mod:`~graphshard.train.link_metrics`).

Unstable API (issue 26).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._util.optional import import_optional
from ..errors import ValidationError, check_choice
from ..sampling import reverse_edge_ids, sample_link_batch
from ..store import as_store
from ._common import read_rows, subseed, the_ntype
from ._link_model import DECODERS, evaluate_link, link_class
from ._sage_model import dense
from .link_split import LinkEval
from .sage_trainer import trainer_share
from .trainer_base import TrainerBase

__all__ = ["EXCLUDE_CHOICES", "LinkTrainer", "link_metric_names"]

#: ``exclude`` choices: ``auto`` is ``reverse`` on a symmetric graph, else ``self``.
EXCLUDE_CHOICES = ("auto", "self", "reverse", "none")


def link_metric_names(hits: Sequence[int]) -> tuple[str, ...]:
    """Metric names a link trainer's ``evaluate()`` returns, in order."""
    return ("auc", "mrr", *(f"hits@{int(k)}" for k in hits))


class LinkTrainer(TrainerBase):
    """One link-prediction trainer over a store (a Graph or GraphStore of the training
    graph), with the held-out edges ``held_out`` in the store's node IDs (None: no
    evaluation; metrics are NaN).  Rank ``rank`` of ``world`` trains on the edges of its
    partitions (:func:`~graphshard.train.sage_trainer.trainer_share` of edges); each
    epoch's draws depend on ``(seed, epoch)`` (and the rank) only.
    """

    def __init__(self, store: Any, *, feat: str, held_out: LinkEval | None,
                 fanouts: Sequence[int], hidden: int, batch_size: int, num_negatives: int,
                 lr: float, dropout: float, weight_decay: float, decoder: str,
                 exclude: str, hits: Sequence[int], seed: int, rank: int = 0,
                 world: int = 1) -> None:
        torch = import_optional("torch", "training")
        store = as_store(store)
        self.torch, self.store, self.feat = torch, store, feat
        self.fanouts, self.seed, self.rank = [int(f) for f in fanouts], int(seed), int(rank)
        self.batch_size, self.num_negatives = int(batch_size), int(num_negatives)
        self.hits = tuple(int(k) for k in hits)
        self.nt = nt = the_ntype(store, "train_link")
        if len(store.canonical_etypes) != 1:
            raise ValidationError(f"train_link needs a graph with one edge type, got "
                                  f"{store.canonical_etypes}", field="store")
        check_choice(decoder, DECODERS, "decoder", where="train_link")
        check_choice(exclude, EXCLUDE_CHOICES, "exclude", where="train_link")
        self.held_out = held_out
        self._check_held_out(store.num_nodes(nt))
        m = store.num_edges()
        if m == 0:
            raise ValidationError("train_link: the graph has no training edges", field="store")
        self.reverse = reverse_edge_ids(store) if exclude in ("auto", "reverse") else None
        if exclude == "auto":
            exclude = "reverse" if self.reverse is not None and (self.reverse >= 0).all() \
                else "self"
        self.exclude = None if exclude == "none" else exclude
        book = store.get_partition_book() if hasattr(store, "get_partition_book") else None
        self.train = trainer_share(book, np.arange(m, dtype=np.int64), self.rank, int(world),
                                   edges=True)
        in_dim = dense(read_rows(store, nt, feat, np.zeros(1, np.int64))).shape[1]
        self.init_model({"in_dim": int(in_dim), "hidden": int(hidden),
                         "num_layers": len(self.fanouts), "dropout": float(dropout),
                         "decoder": decoder}, seed=seed, lr=lr, weight_decay=weight_decay)

    @staticmethod
    def build_model(spec: dict[str, Any]) -> Any:
        """A new model of ``spec`` (:meth:`model_spec`)."""
        torch = import_optional("torch", "training")
        return link_class(torch)(spec["in_dim"], spec["hidden"], spec["num_layers"],
                                 spec["dropout"], spec["decoder"])

    def _check_held_out(self, n: int) -> None:
        if self.held_out is None:
            return
        for name in ("val", "test"):
            ev = getattr(self.held_out, name)
            for arr in (ev.src, ev.dst, ev.neg_dst):
                if arr.size and (arr.min() < 0 or arr.max() >= n):
                    raise ValidationError(f"train_link: {name} edges have node IDs outside "
                                          f"[0, {n}): not in this graph's IDs",
                                          field="eval_edges")

    def train_epoch(self, epoch: int, steps: int | None = None) -> tuple[float, int]:
        """One pass over this trainer's edges: (sum of loss x batch size, edges seen)."""
        torch, store, nt = self.torch, self.store, self.nt
        bce = torch.nn.functional.binary_cross_entropy_with_logits
        torch.manual_seed(subseed(self.seed, 6, epoch, self.rank))  # dropout
        self.model.train()
        total, count = 0.0, 0
        for step, batch in enumerate(self.epoch_batches(epoch, steps)):
            lb = sample_link_batch(store, batch, self.fanouts, num_negatives=self.num_negatives,
                                   exclude=self.exclude, reverse_eids=self.reverse,
                                   seed=subseed(self.seed, 1, epoch, step, self.rank))
            x = torch.from_numpy(dense(store.node_features(nt, self.feat,
                                                           lb.blocks.input_nodes[nt])))
            pos, neg = self.net(lb.blocks.blocks, x, *(torch.from_numpy(a) for a in
                                                     (lb.src, lb.dst, lb.neg_dst)))
            loss = bce(pos, torch.ones_like(pos)) + bce(neg, torch.zeros_like(neg))
            total += self.step(loss) * len(batch)
            count += len(batch)
        return total, count

    def evaluate(self) -> dict[str, tuple[float, float]]:
        """``{metric: (validation, test)}``: AUC, MRR and Hits@K on the held-out edges."""
        names = link_metric_names(self.hits)
        if self.held_out is None:
            return {m: (math.nan, math.nan) for m in names}
        out = evaluate_link(self.torch, self.model, self.store, self.nt, self.feat,
                            {"val": self.held_out.val, "test": self.held_out.test}, self.hits)
        return {m: (out["val"][m], out["test"][m]) for m in names}
