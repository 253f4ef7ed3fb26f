"""One heterogeneous node-classification trainer over PyG's NodeLoader and graphshard's
PyG backend (:mod:`graphshard.pyg`).

:func:`~graphshard.train.hetero.train_hetero` drives one in-process; the multi-trainer run
(:class:`~graphshard.train.ddp.RayTeam`) drives one per Ray actor and wraps the model for
DDP.  Mini-batches come from PyG's ``NodeLoader`` over ``remote_backend(store)`` with
:class:`~graphshard.pyg.NeighborSampler`: the batches of an epoch are a permutation of the
trainer's training nodes seeded by ``(seed, epoch)``, and the sampler's draws are keyed by
``(seed, epoch, the batch's seeds)``, so a run is the same on a local graph and on a
DistGraph of the same (shuffled) IDs.  Evaluation samples the validation and test nodes
with ``eval_fanouts`` and a fixed seed: the same model always gets the same scores.

Unstable API (issue 26).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from .._util.optional import import_optional
from ..errors import ValidationError
from ..store import as_store, feature_key
from ..typing import IdArray
from ._common import node_ids, read_rows, subseed
from ._hetero_model import hetero_class
from .metrics import f1_scores
from .sage_trainer import trainer_share
from .trainer_base import TrainerBase

__all__ = ["HeteroTrainer", "body_spec", "label_kind"]

#: Metrics :meth:`HeteroTrainer.evaluate` returns, ``{name: (validation, test)}``.
METRICS = ("micro_f1", "macro_f1")


def label_kind(labels: np.ndarray, multilabel: bool | None, what: str) -> bool:
    """Whether ``labels`` are multi-label (a 0/1 matrix ``(N, C)``, C > 1) or class IDs;
    ``multilabel`` None infers it, True/False checks it."""
    two_d = labels.ndim == 2 and labels.shape[1] > 1
    if two_d and not np.isin(labels, (0, 1)).all():
        raise ValidationError(f"{what}: a 2-D label must hold 0/1 (multi-label), found other "
                              "values", field="label")
    if multilabel is None:
        return two_d
    if bool(multilabel) != two_d:
        raise ValidationError(f"{what}: multilabel={multilabel} but the label has shape "
                              f"{labels.shape} ({'a 0/1 matrix' if two_d else 'class IDs'})",
                              field="multilabel", value=multilabel)
    return two_d


def body_spec(store: Any, feat: str, model: str, hidden: int, num_layers: int, heads: int,
              dropout: float, where: str) -> dict[str, Any]:
    """The R-GCN / HGT body's part of a model spec (:func:`~graphshard.train._hetero_model.
    hetero_class`): PyG metadata, each featured type's input width, node counts, sizes.

    Raises:
        ValidationError: ``feat`` of a type is not one fixed-width row per node.
    """
    from ..pyg import metadata

    schema = store.feature_schema("node")
    in_dims = {}
    for nt in store.ntypes:
        info = schema.get(feature_key(nt, feat))
        if info is not None:
            if info[0] is None or len(info[0]) != 1:
                raise ValidationError(f"{where}: feature {feat!r} of {nt!r} must be one "
                                      f"fixed-width row per node, has shape {info[0]}",
                                      field="feat")
            in_dims[nt] = int(info[0][0])
    ntypes, etypes = metadata(store)
    return {"model": model, "ntypes": ntypes, "etypes": [list(e) for e in etypes],
            "in_dims": in_dims, "num_nodes": {nt: store.num_nodes(nt) for nt in ntypes},
            "hidden": int(hidden), "num_layers": int(num_layers), "heads": int(heads),
            "dropout": float(dropout)}


class HeteroTrainer(TrainerBase):
    """One R-GCN / HGT trainer: its store, loaders, model, optimizer and training nodes
    (its :func:`~graphshard.train.sage_trainer.trainer_share` of ``train_mask`` as rank
    ``rank`` of ``world``).  Arguments as :func:`~graphshard.train.hetero.train_hetero`;
    ``fanouts`` and ``eval_fanouts`` here are in PyG's order (hop 1 first)."""

    #: DDP options: a batch may miss a node or edge type, leaving parameters unused.
    ddp_options: ClassVar[dict[str, Any]] = {"find_unused_parameters": True}

    def __init__(self, store: Any, *, target: str, model: str, feat: str, label: str,
                 train_mask: Any, val_mask: Any, test_mask: Any, fanouts: Sequence[int],
                 eval_fanouts: Sequence[int], hidden: int, heads: int, batch_size: int,
                 eval_batch_size: int, lr: float, dropout: float, weight_decay: float,
                 seed: int, multilabel: bool | None, rank: int = 0, world: int = 1) -> None:
        torch = import_optional("torch", "training")
        import_optional("torch_geometric", "heterogeneous training (graphshard.pyg)")
        from ..pyg import NeighborSampler, remote_backend

        store = as_store(store)
        self.torch, self.store, self.target = torch, store, target
        self.seed, self.rank, self.batch_size = int(seed), int(rank), int(batch_size)
        self.eval_batch_size = int(eval_batch_size)
        if target not in store.ntypes:
            raise ValidationError(f"train_hetero: target {target!r} is not a node type; node "
                                  f"types are {store.ntypes}", field="target", value=target)
        n = store.num_nodes(target)
        labels = read_rows(store, target, label, np.arange(n, dtype=np.int64))
        labels = labels.reshape(n) if labels.ndim == 2 and labels.shape[1] == 1 else labels
        self.multilabel = label_kind(labels, multilabel, "train_hetero")
        train = node_ids(store, target, train_mask, "train_mask")
        self.val = node_ids(store, target, val_mask, "val_mask")
        self.test = node_ids(store, target, test_mask, "test_mask")
        if not len(train):
            raise ValidationError("train_hetero: no training nodes", field="train_mask")
        if self.multilabel:
            self.labels = labels.astype(np.float32)
            num_classes = labels.shape[1]
        else:
            self.labels = labels.astype(np.int64)
            for name, ids in (("train_mask", train), ("val_mask", self.val),
                              ("test_mask", self.test)):
                bad = np.flatnonzero(self.labels[ids] < 0)
                if bad.size:
                    raise ValidationError(f"train_hetero: {name} node {int(ids[bad[0]])} of "
                                          f"{target!r} has no label ({label} < 0)", field=name)
            num_classes = int(self.labels.max()) + 1
        book = store.get_partition_book() if hasattr(store, "get_partition_book") else None
        self.train = trainer_share(book, train, self.rank, int(world), ntype=target)
        spec = {**body_spec(store, feat, model, hidden, len(fanouts), heads, dropout,
                            "train_hetero"),
                "num_classes": int(num_classes), "target": target,
                "multilabel": self.multilabel}
        self.init_model(spec, seed=self.seed, lr=lr, weight_decay=weight_decay)
        self.data = remote_backend(store, node_attrs={"x": feat})
        self.sampler = NeighborSampler(store, list(fanouts), seed=self.seed)
        self.eval_sampler = NeighborSampler(store, list(eval_fanouts),
                                            seed=subseed(self.seed, 7))

    @staticmethod
    def build_model(spec: dict[str, Any]) -> Any:
        """A new model of ``spec`` (:meth:`model_spec`)."""
        torch = import_optional("torch", "training")
        return hetero_class(torch)(spec)

    def _loader(self, sampler: Any, ids: IdArray, batches: list[Any]) -> Any:
        from torch_geometric.loader import NodeLoader

        return NodeLoader(self.data, node_sampler=sampler,
                          input_nodes=(self.target, self.torch.from_numpy(ids)),
                          batch_sampler=[b.tolist() for b in batches])

    def _forward(self, net: Any, batch: Any) -> Any:
        x = {nt: batch[nt].x for nt in self.spec["in_dims"]}
        n_id = {nt: batch[nt].n_id for nt in self.spec["ntypes"]}
        edges = {et: batch[et].edge_index for et in batch.edge_types}
        # the sampler's per-hop counts: R-GCN computes each layer's nodes only
        hops = ({nt: batch[nt].num_sampled_nodes for nt in batch.node_types},
                {et: batch[et].num_sampled_edges for et in batch.edge_types})
        return net(x, n_id, edges, int(batch[self.target].batch_size), hops)

    def _loss(self, logits: Any, seeds: Any) -> Any:
        f = self.torch.nn.functional
        y = self.torch.from_numpy(self.labels[seeds.numpy()])
        if self.multilabel:
            return f.binary_cross_entropy_with_logits(logits, y)
        return f.cross_entropy(logits, y)

    def train_epoch(self, epoch: int, steps: int | None = None) -> tuple[float, int]:
        """One pass over this trainer's nodes: (sum of loss x batch size, nodes seen)."""
        torch = self.torch
        torch.manual_seed(subseed(self.seed, 6, epoch, self.rank))  # dropout
        self.sampler.set_epoch(epoch)
        self.model.train()
        total, count = 0.0, 0
        order = self.epoch_batches(epoch, steps, len(self.train))  # positions in self.train
        for batch in self._loader(self.sampler, self.train, order):
            bs = int(batch[self.target].batch_size)
            loss = self._loss(self._forward(self.net, batch), batch[self.target].n_id[:bs])
            total += self.step(loss) * bs
            count += bs
        return total, count

    def predict(self, ids: IdArray) -> np.ndarray:
        """Predictions for ``ids`` of the target type (class IDs, or a 0/1 matrix for
        multi-label: logit > 0, i.e. sigmoid > 0.5), with the evaluation sampler."""
        torch = self.torch
        b = self.eval_batch_size
        batches = [np.arange(i, min(i + b, len(ids))) for i in range(0, len(ids), b)]
        outs = []
        self.model.eval()
        with torch.no_grad():
            for batch in self._loader(self.eval_sampler, ids, batches):
                outs.append(self._forward(self.model, batch).numpy())
        self.model.train()
        if not outs:
            return np.zeros((0, self.spec["num_classes"]) if self.multilabel else 0, np.int64)
        logits = np.concatenate(outs)
        return (logits > 0).astype(np.int64) if self.multilabel else logits.argmax(1)

    def evaluate(self) -> dict[str, tuple[float, float]]:
        """``{"micro_f1": (val, test), "macro_f1": (val, test)}`` (NaN for an empty split)."""
        scores = []
        for ids in (self.val, self.test):
            truth = self.labels[ids].astype(np.int64)
            scores.append(f1_scores(truth, self.predict(ids)))
        return {"micro_f1": (scores[0].micro, scores[1].micro),
                "macro_f1": (scores[0].macro, scores[1].macro)}
