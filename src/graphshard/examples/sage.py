"""GraphSAGE (mean aggregator) node classification trained through block sampling.

Training samples blocks around each mini-batch of training nodes with
:func:`graphshard.sampling.sample_blocks` and reads features through the store protocol, so
the same code runs on a local :class:`~graphshard.graph.Graph` and on a
:class:`~graphshard.dist.DistGraph`.  Evaluation is exact full-neighbour inference, layer by
layer over all nodes (fanout -1, as DGL's ``SAGE.inference``), so it has no sampling noise.
With the same IDs and seed, a local graph and a DistGraph give the same loss curve, because
every sampling draw is keyed by node ID and batches come from a seeded permutation.

Unstable API (first pass of issue 7).

Example:
    >>> import graphshard as gs
    >>> from graphshard.examples import train_sage
    >>> g = gs.datasets.sbm(200, 1200, num_blocks=2, num_features=4, seed=0)
    >>> res = train_sage(g, fanouts=[5, 5], hidden=8, epochs=2, seed=0)  # doctest: +SKIP
    >>> len(res.losses), res.test_acc[-1] > 0.5  # doctest: +SKIP
    (2, True)
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._optional import import_optional
from ..errors import ValidationError
from ..sampling import sample_blocks
from ..store import GraphStore
from ..typing import IdArray
from ._common import node_ids, open_store, read_rows, subseed, the_ntype

__all__ = ["TrainResult", "train_sage"]

logger = logging.getLogger(__name__)

_INFER_CHUNK = 4096


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
    """

    losses: list[float]
    val_acc: list[float]
    test_acc: list[float]
    seconds: list[float]
    eval_seconds: list[float]
    model: Any = field(repr=False, compare=False)

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


def _sage_class(torch: Any) -> type:
    nn = torch.nn

    class SAGE(nn.Module):
        """GraphSAGE with the mean aggregator: ``W_self h_v + W_neigh mean(h_u, u -> v)``."""

        def __init__(self, in_dim: int, hidden: int, out_dim: int, num_layers: int,
                     dropout: float) -> None:
            super().__init__()
            dims = [in_dim] + [hidden] * (num_layers - 1) + [out_dim]
            self.self_lins = nn.ModuleList(nn.Linear(a, b) for a, b in itertools.pairwise(dims))
            self.neigh_lins = nn.ModuleList(nn.Linear(a, b, bias=False)
                                            for a, b in itertools.pairwise(dims))
            self.dropout = nn.Dropout(dropout)

        def layer(self, i: int, h_src: Any, src: Any, dst: Any, num_dst: int) -> Any:
            agg = h_src.new_zeros((num_dst, h_src.shape[1])).index_add_(0, dst, h_src[src])
            deg = torch.bincount(dst, minlength=num_dst).clamp_(min=1).to(h_src.dtype)
            out = self.self_lins[i](h_src[:num_dst]) + self.neigh_lins[i](agg / deg[:, None])
            if i < len(self.self_lins) - 1:
                out = self.dropout(torch.relu(out))
            return out

        def forward(self, blocks: Sequence[Any], x: Any) -> Any:
            h = x
            for i, b in enumerate(blocks):
                src, dst = (torch.from_numpy(next(iter(v.values()))) for v in (b.src, b.dst))
                h = self.layer(i, h, src, dst, b.num_dst_nodes())
            return h

    return SAGE


def _dense(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=np.float32).reshape(len(x), -1)


def _inference(torch: Any, model: Any, store: GraphStore, nt: str, feat: str) -> np.ndarray:
    """Logits of all nodes, layer by layer with all in-neighbours (no sampling)."""
    n = store.num_nodes(nt)
    ids = np.arange(n, dtype=np.int64)
    h = _dense(read_rows(store, nt, feat, ids))
    model.eval()
    with torch.no_grad():
        for i in range(len(model.self_lins)):
            outs = []
            for start in range(0, n, _INFER_CHUNK):
                b = sample_blocks(store, ids[start:start + _INFER_CHUNK], [-1], seed=0).blocks[0]
                src_nodes = b.src_nodes[nt]
                src, dst = (torch.from_numpy(next(iter(v.values()))) for v in (b.src, b.dst))
                outs.append(model.layer(i, torch.from_numpy(h[src_nodes]), src, dst,
                                        b.num_dst_nodes()).numpy())
            h = np.concatenate(outs) if outs else np.zeros((0, 1), np.float32)
    model.train()
    return h


def _accuracy(pred: np.ndarray, labels: np.ndarray, ids: IdArray) -> float:
    return float((pred[ids] == labels[ids]).mean()) if len(ids) else float("nan")


def train_sage(store_or_config: Any, *, feat: str = "feat", label: str = "label",
               train_mask: Any = "train_mask", val_mask: Any = "val_mask",
               test_mask: Any = "test_mask", fanouts: Sequence[int] = (10, 25),
               hidden: int = 128, epochs: int = 10, batch_size: int = 512, lr: float = 3e-3,
               dropout: float = 0.5, weight_decay: float = 0.0, eval_every: int = 1,
               seed: int = 0) -> TrainResult:
    """Train GraphSAGE-mean for node classification from a store through block sampling.

    Args:
        store_or_config: A Graph, a GraphStore (a DistGraph), or the path of a partition
            config JSON (a DistGraph is started and closed here).
        feat: Node feature with the inputs (float, ``(N, F)``).
        label: Node feature with integer class labels (``(N,)``).
        train_mask: Training nodes: a node feature name (non-zero = in), a boolean mask
            or an ID array.
        val_mask: Validation nodes, as ``train_mask`` (None: none).
        test_mask: Test nodes, as ``train_mask`` (None: none).
        fanouts: Neighbours per layer, input layer first as in DGL (``[10, 25]``: 25 per
            seed, 10 per node of the next hop); one layer per entry.
        hidden: Hidden width.
        epochs: Passes over the training nodes.
        batch_size: Training nodes per step.
        lr: Adam learning rate.
        dropout: Dropout between layers.
        weight_decay: Adam weight decay.
        eval_every: Evaluate every this many epochs (and after the last); other epochs
            record NaN accuracies.
        seed: Seed of model initialisation, dropout, batch order and sampling.

    Returns:
        TrainResult with per-epoch losses, accuracies and timings, and the model.

    Raises:
        ValidationError: more than one node or edge type, no training nodes, or bad numbers.
        MissingDependencyError: torch is not installed.
    """
    torch = import_optional("torch", "training")
    fanouts = [int(f) for f in fanouts]
    for name, v in (("epochs", epochs), ("batch_size", batch_size), ("hidden", hidden),
                    ("eval_every", eval_every), ("layers", len(fanouts))):
        if int(v) < 1:
            raise ValidationError(f"train_sage: {name} must be >= 1, got {v!r}", field=name,
                                  value=v)
    with open_store(store_or_config) as store:
        nt = the_ntype(store, "train_sage")
        if len(store.canonical_etypes) != 1:
            raise ValidationError(f"train_sage needs a graph with one edge type, got "
                                  f"{store.canonical_etypes}", field="store")
        n = store.num_nodes(nt)
        all_ids = np.arange(n, dtype=np.int64)
        labels = read_rows(store, nt, label, all_ids).reshape(n).astype(np.int64)
        train = node_ids(store, nt, train_mask, "train_mask")
        val = node_ids(store, nt, val_mask, "val_mask")
        test = node_ids(store, nt, test_mask, "test_mask")
        if not len(train):
            raise ValidationError("train_sage: no training nodes", field="train_mask")
        in_dim = _dense(store.node_features(nt, feat, all_ids[:1])).shape[1]
        num_classes = int(labels.max()) + 1
        torch.manual_seed(seed)
        model = _sage_class(torch)(in_dim, int(hidden), num_classes, len(fanouts),
                                   float(dropout))
        opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
        rng = np.random.default_rng(subseed(seed, 0))
        losses: list[float] = []
        val_acc: list[float] = []
        test_acc: list[float] = []
        secs: list[float] = []
        eval_secs: list[float] = []
        for epoch in range(int(epochs)):
            t0 = time.perf_counter()
            perm = rng.permutation(train)
            total, count = 0.0, 0
            for step, start in enumerate(range(0, len(perm), int(batch_size))):
                batch = perm[start:start + int(batch_size)]
                sb = sample_blocks(store, batch, fanouts, seed=subseed(seed, 1, epoch, step))
                x = torch.from_numpy(_dense(store.node_features(nt, feat, sb.input_nodes[nt])))
                y = torch.from_numpy(labels[sb.output_nodes[nt]])
                loss = torch.nn.functional.cross_entropy(model(sb.blocks, x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                total += float(loss.detach()) * len(batch)
                count += len(batch)
            secs.append(time.perf_counter() - t0)
            losses.append(total / count)
            t1 = time.perf_counter()
            if (epoch + 1) % int(eval_every) == 0 or epoch + 1 == int(epochs):
                pred = _inference(torch, model, store, nt, feat).argmax(1)
                val_acc.append(_accuracy(pred, labels, val))
                test_acc.append(_accuracy(pred, labels, test))
            else:
                val_acc.append(float("nan"))
                test_acc.append(float("nan"))
            eval_secs.append(time.perf_counter() - t1)
            logger.info("train_sage epoch %d: loss %.4f, val %.4f, test %.4f, %.1f s train, "
                        "%.1f s eval", epoch, losses[-1], val_acc[-1], test_acc[-1], secs[-1],
                        eval_secs[-1])
    return TrainResult(losses, val_acc, test_acc, secs, eval_secs, model)
