"""One link-prediction trainer on a heterogeneous graph: R-GCN or HGT embeddings of every
node type, a link of the predicted edge type scored by the dot product of its ends.

:func:`~graphshard.train.link.train_link` drives one in-process when it is given ``etype``
(or a graph with several edge types), or one per Ray actor
(:class:`~graphshard.train.ddp.RayTeam`) over a partition config of
:func:`~graphshard.train.link_files.partition_for_link`: each trainer then takes the
``etype`` edges of its own partitions.  Batches come from PyG's ``LinkLoader`` over
``remote_backend(store)`` with :class:`~graphshard.pyg.NeighborSampler`: an epoch's batches
are a permutation of the trainer's training edges of ``etype`` seeded by ``(seed, epoch)``;
each positive gets ``num_negatives`` uniform negative destinations (PyG's binary
``NegativeSampling``, drawn with graphshard's keyed draws), and the batch's own links, with
``exclude="reverse"`` their reverses too (``reverse_etype``), are left out of its message
passing at every hop.  The loss is binary cross-entropy over positives and negatives.
Evaluation scores the fixed validation and test edges and their negatives (each pair's ends
sampled with ``eval_fanouts`` and a fixed seed, so the same model always gets the same
scores): AUC, MRR and Hits@K (:mod:`~graphshard.train.link_metrics`).

Unstable API (issue 26).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from .._util.optional import import_optional
from ..errors import ValidationError, check_choice
from ..store import as_store
from ..typing import EdgeTypeLike
from ._common import subseed
from ._hetero_model import MODELS, hetero_link_class
from .hetero_trainer import body_spec
from .link_metrics import link_metrics
from .link_split import EvalEdges, LinkEval
from .link_trainer import EXCLUDE_CHOICES, link_metric_names
from .sage_trainer import trainer_share
from .trainer_base import TrainerBase

__all__ = ["HeteroLinkTrainer"]


class HeteroLinkTrainer(TrainerBase):
    """One trainer over a store (a Graph or GraphStore of the training graph) predicting
    links of ``etype``, with held-out edges ``held_out`` in the store's node IDs (None: no
    evaluation, metrics NaN).  Arguments as :func:`~graphshard.train.link.train_link`;
    ``fanouts`` and ``eval_fanouts`` are in PyG's order (hop 1 first)."""

    #: DDP options: a batch may miss a node or edge type, leaving parameters unused.
    ddp_options: ClassVar[dict[str, Any]] = {"find_unused_parameters": True}

    def __init__(self, store: Any, *, etype: EdgeTypeLike, reverse_etype: EdgeTypeLike | None,
                 model: str, feat: str, held_out: LinkEval | None, fanouts: Sequence[int],
                 eval_fanouts: Sequence[int], hidden: int, heads: int, batch_size: int,
                 eval_batch_size: int, num_negatives: int, lr: float, dropout: float,
                 weight_decay: float, exclude: str, hits: Sequence[int], seed: int,
                 rank: int = 0, world: int = 1) -> None:
        torch = import_optional("torch", "training")
        import_optional("torch_geometric", "heterogeneous training (graphshard.pyg)")
        from ..pyg import NeighborSampler, remote_backend

        store = as_store(store)
        self.torch, self.store = torch, store
        self.seed, self.rank, self.batch_size = int(seed), int(rank), int(batch_size)
        self.eval_batch_size, self.hits = int(eval_batch_size), tuple(int(k) for k in hits)
        check_choice(model, MODELS, "model", where="train_link")
        check_choice(exclude, EXCLUDE_CHOICES, "exclude", where="train_link")
        self.etype = et = store.to_canonical_etype(etype)
        rev = None if reverse_etype is None else store.to_canonical_etype(reverse_etype)
        if rev is not None and (rev[0], rev[2]) != (et[2], et[0]):
            raise ValidationError(f"train_link: reverse_etype {rev} does not join {et[2]!r} "
                                  f"back to {et[0]!r}", field="reverse_etype")
        if exclude == "auto":
            exclude = "reverse" if rev is not None else "self"
        if exclude == "reverse" and rev is None and et[0] != et[2]:
            raise ValidationError(f"train_link: exclude='reverse' on {et} needs reverse_etype "
                                  "(the edge type holding each edge's reverse)",
                                  field="exclude")
        self.held_out = held_out
        self._check_held_out()
        m = store.num_edges(et)
        if m == 0:
            raise ValidationError(f"train_link: no training edges of {et}", field="store")
        book = store.get_partition_book() if hasattr(store, "get_partition_book") else None
        self.train = trainer_share(book, np.arange(m, dtype=np.int64), self.rank, int(world),
                                   edges=True, etype=et)
        src, dst = store.find_edges(self.train, et)
        self.pairs = torch.from_numpy(np.stack([src, dst]).astype(np.int64))
        spec = {**body_spec(store, feat, model, hidden, len(fanouts), heads, dropout,
                            "train_link"), "etype": list(et)}
        self.init_model(spec, seed=self.seed, lr=lr, weight_decay=weight_decay)
        self.data = remote_backend(store, node_attrs={"x": feat})
        excl = None if exclude == "none" else exclude
        reverse = {et: rev} if rev is not None else None
        self.sampler = NeighborSampler(store, list(fanouts), seed=self.seed, exclude=excl,
                                       reverse_etypes=reverse)
        self.eval_sampler = NeighborSampler(store, list(eval_fanouts),
                                            seed=subseed(self.seed, 7))
        self.num_negatives = int(num_negatives)

    @staticmethod
    def build_model(spec: dict[str, Any]) -> Any:
        """A new model of ``spec`` (:meth:`model_spec`)."""
        torch = import_optional("torch", "training")
        return hetero_link_class(torch)(spec)

    def _check_held_out(self) -> None:
        if self.held_out is None:
            return
        stored = self.held_out.etype
        if stored is not None and tuple(stored) != tuple(self.etype):
            raise ValidationError(f"train_link: the held-out edges are of {tuple(stored)}, "
                                  f"but etype is {self.etype}", field="etype")
        n_src, n_dst = self.store.num_nodes(self.etype[0]), self.store.num_nodes(self.etype[2])
        for name in ("val", "test"):
            ev = getattr(self.held_out, name)
            for arr, n in ((ev.src, n_src), (ev.dst, n_dst), (ev.neg_dst, n_dst)):
                if arr.size and (arr.min() < 0 or arr.max() >= n):
                    raise ValidationError(f"train_link: {name} edges have node IDs outside "
                                          f"[0, {n}): not in this graph's IDs of {self.etype}",
                                          field="eval_edges")

    def _loader(self, sampler: Any, pairs: Any, batches: list[Any], negatives: int) -> Any:
        from torch_geometric.loader import LinkLoader
        from torch_geometric.sampler import NegativeSampling

        neg = NegativeSampling("binary", negatives) if negatives else None
        return LinkLoader(self.data, link_sampler=sampler,
                          edge_label_index=(self.etype, pairs), neg_sampling=neg,
                          batch_sampler=[b.tolist() for b in batches])

    def _forward(self, net: Any, batch: Any) -> Any:
        x = {nt: batch[nt].x for nt in self.spec["in_dims"]}
        n_id = {nt: batch[nt].n_id for nt in self.spec["ntypes"]}
        edges = {et: batch[et].edge_index for et in batch.edge_types
                 if "edge_index" in batch[et]}
        return net(x, n_id, edges, batch[self.etype].edge_label_index)

    def train_epoch(self, epoch: int, steps: int | None = None) -> tuple[float, int]:
        """One pass over this trainer's edges: (sum of loss x batch size, edges seen)."""
        torch = self.torch
        bce = torch.nn.functional.binary_cross_entropy_with_logits
        torch.manual_seed(subseed(self.seed, 6, epoch, self.rank))  # dropout
        self.sampler.set_epoch(epoch)
        self.model.train()
        total, count = 0.0, 0
        order = self.epoch_batches(epoch, steps, len(self.train))  # positions in self.train
        for batch in self._loader(self.sampler, self.pairs, order, self.num_negatives):
            label = batch[self.etype].edge_label
            scores = self._forward(self.net, batch)
            pos = label > 0
            loss = bce(scores[pos], label[pos]) + bce(scores[~pos], label[~pos])
            b = int(pos.sum())
            total += self.step(loss) * b
            count += b
        return total, count

    def scores(self, edges: EvalEdges) -> tuple[np.ndarray, np.ndarray]:
        """Scores of ``edges``' positives ``(n,)`` and negatives ``(n, k)``, with the
        evaluation sampler (each pair's ends sampled; a fixed seed)."""
        torch = self.torch
        n, k = len(edges), edges.neg_dst.shape[1]
        src = np.repeat(edges.src, k + 1)
        dst = np.concatenate([edges.dst[:, None], edges.neg_dst], axis=1).reshape(-1)
        pairs = torch.from_numpy(np.stack([src, dst]).astype(np.int64))
        b = self.eval_batch_size
        batches = [np.arange(i, min(i + b, len(src))) for i in range(0, len(src), b)]
        out = np.zeros(len(src), dtype=np.float32)
        self.model.eval()
        with torch.no_grad():
            for batch in self._loader(self.eval_sampler, pairs, batches, 0):
                out[batch[self.etype].input_id.numpy()] = self._forward(self.model,
                                                                        batch).numpy()
        self.model.train()
        table = out.reshape(n, k + 1)
        return table[:, 0], table[:, 1:]

    def evaluate(self) -> dict[str, tuple[float, float]]:
        """``{metric: (validation, test)}``: AUC, MRR and Hits@K on the held-out edges."""
        names = link_metric_names(self.hits)
        if self.held_out is None:
            return {m: (math.nan, math.nan) for m in names}
        got = [link_metrics(*self.scores(ev), hits=self.hits)
               for ev in (self.held_out.val, self.held_out.test)]
        return {m: (got[0][m], got[1][m]) for m in names}
