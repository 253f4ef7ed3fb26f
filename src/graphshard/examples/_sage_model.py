"""The GraphSAGE-mean model and its exact full-neighbour inference (torch built lazily).

Unstable API (issue 7).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..sampling import sample_blocks
from ..store import GraphStore
from ..typing import IdArray
from ._common import read_rows

__all__ = ["accuracy", "dense", "inference", "sage_class"]

_INFER_CHUNK = 4096


def sage_class(torch: Any) -> type:
    """The ``SAGE`` module class, built on ``torch`` (imported by the caller)."""
    nn = torch.nn
    module: Any = nn.Module  # torch is imported lazily: the base class is known at run time

    class SAGE(module):
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
            lin = self.neigh_lins[i]
            # W mean(h) = mean(W h): project first when that narrows the rows gathered per edge
            first = lin.in_features > lin.out_features
            h = lin(h_src) if first else h_src
            agg = h.new_zeros((num_dst, h.shape[1])).index_add_(0, dst, h[src])
            deg = torch.bincount(dst, minlength=num_dst).clamp_(min=1).to(h.dtype)
            agg = agg / deg[:, None]
            out = self.self_lins[i](h_src[:num_dst]) + (agg if first else lin(agg))
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


def dense(x: np.ndarray) -> np.ndarray:
    """``x`` as a C-contiguous float32 ``(N, F)`` array."""
    return np.ascontiguousarray(x, dtype=np.float32).reshape(len(x), -1)


def inference(torch: Any, model: Any, store: GraphStore, nt: str, feat: str) -> np.ndarray:
    """Logits of all nodes, layer by layer with all in-neighbours (no sampling)."""
    n = store.num_nodes(nt)
    ids = np.arange(n, dtype=np.int64)
    h = dense(read_rows(store, nt, feat, ids))
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


def accuracy(pred: np.ndarray, labels: np.ndarray, ids: IdArray) -> float:
    """Share of ``ids`` whose predicted class is the label (NaN without IDs)."""
    return float((pred[ids] == labels[ids]).mean()) if len(ids) else float("nan")
