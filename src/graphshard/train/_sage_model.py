"""The GraphSAGE-mean model and its exact full-neighbour inference (torch built lazily).

Unstable API (issue 7).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..sparse import SparseRows
from ..store import GraphStore
from ..typing import IdArray
from ._common import read_rows

__all__ = ["accuracy", "dense", "inference", "mean_adjacency", "sage_class"]

_INFER_CHUNK = 4096  # rows per chunk of a layer's linear maps (features read per chunk)
_ADJ_CHUNK = 1 << 16  # destination nodes per neighbours request when reading the adjacency


def sage_class(torch: Any) -> type:
    """The ``SAGE`` module class, built on ``torch`` (imported by the caller)."""
    nn = torch.nn
    module: Any = nn.Module  # torch is imported lazily: the base class is known at run time

    class SAGE(module):
        """GraphSAGE with the mean aggregator: ``W_self h_v + W_neigh mean(h_u, u -> v)``;
        with ``normalize`` each layer's output row is divided by its L2 norm where that
        exceeds 1, before the activation (GraphSAGE's normalisation as Shchur et al.'s
        gnn-benchmark applies it, on every layer)."""

        def __init__(self, in_dim: int, hidden: int, out_dim: int, num_layers: int,
                     dropout: float, normalize: bool = False) -> None:
            super().__init__()
            self.normalize = bool(normalize)
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
            return self.finish(i, self.self_lins[i](h_src[:num_dst]) + (agg if first
                                                                       else lin(agg)))

        def finish(self, i: int, out: Any) -> Any:
            """Layer ``i``'s activation: ReLU and dropout after every layer but the last
            (after the normalisation, with ``normalize``)."""
            if self.normalize:
                out = out / out.norm(dim=1, keepdim=True).clamp(min=1.0)
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


def mean_adjacency(store: GraphStore, nt: str) -> Any:
    """The row-normalised in-adjacency of a one-type graph: a scipy CSR ``(N, N)`` float32
    matrix whose row ``v`` holds ``1 / in-degree(v)`` at each in-neighbour of ``v`` (an edge
    repeated counts twice; a row without in-edges is empty).  Read through the store in
    chunks of destination nodes, so it works on a DistGraph too; a new matrix (E entries)."""
    import scipy.sparse as sp

    et = store.canonical_etypes[0]
    n = store.num_nodes(nt)
    lengths, indices = [], []
    for start in range(0, n, _ADJ_CHUNK):
        csr = store.neighbors(np.arange(start, min(n, start + _ADJ_CHUNK), dtype=np.int64), et,
                              edge_dir="in")
        lengths.append(np.diff(csr.indptr))
        indices.append(np.asarray(csr.indices, dtype=np.int64))
    deg = np.concatenate(lengths) if lengths else np.zeros(0, np.int64)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(deg, out=indptr[1:])
    data = np.repeat((1.0 / np.maximum(deg, 1)).astype(np.float32), deg)
    cols = np.concatenate(indices) if indices else np.zeros(0, np.int64)
    return sp.csr_matrix((data, cols, indptr), shape=(n, n))


def inference(torch: Any, model: Any, store: GraphStore, nt: str, feat: str, *,
              adjacency: Any = None) -> np.ndarray:
    """Logits (or embeddings) ``(N, out_dim)`` float32 of all nodes with all in-neighbours
    (no sampling), layer-wise: each layer is computed once for every node, as DGL's
    ``SAGE.inference`` and PyG's ``layer-wise inference`` do, instead of once per batch over
    its multi-hop neighbourhood.

    Per layer, the two linear maps run over the nodes in chunks of rows (the input features
    are read chunk by chunk, so the dense ``(N, F)`` matrix of a wide sparse feature is never
    built) and the neighbour mean is one sparse product with :func:`mean_adjacency`.  As
    ``SAGE.layer`` it projects before averaging when that narrows the rows (``W mean(h) =
    mean(W h)``), so the result equals the model on full-neighbour blocks up to float rounding.
    ``adjacency``: a :func:`mean_adjacency` of this store to reuse (None: read it here).
    """
    n = store.num_nodes(nt)
    adj = mean_adjacency(store, nt) if adjacency is None else adjacency
    num_layers = len(model.self_lins)
    h: np.ndarray | None = None  # None: layer 0 reads the features chunk by chunk
    model.eval()
    try:
        with torch.no_grad():
            for i in range(num_layers):
                self_lin, neigh_lin = model.self_lins[i], model.neigh_lins[i]
                first = neigh_lin.in_features > neigh_lin.out_features
                out = np.empty((n, self_lin.out_features), np.float32)
                # projected rows when projecting first, else the layer's input rows
                rows = np.empty((n, neigh_lin.out_features if first else neigh_lin.in_features),
                                np.float32)
                for start in range(0, n, _INFER_CHUNK):
                    end = min(n, start + _INFER_CHUNK)
                    x = (_input_rows(store, nt, feat, np.arange(start, end, dtype=np.int64))
                         if h is None else h[start:end])
                    out[start:end] = _linear(torch, self_lin, x)
                    rows[start:end] = (_linear(torch, neigh_lin, x) if first
                                       else x.toarray() if hasattr(x, "toarray") else x)
                agg = np.asarray(adj @ rows, dtype=np.float32)
                if not first:
                    agg = neigh_lin(torch.from_numpy(agg)).numpy()
                out += agg
                h = model.finish(i, torch.from_numpy(out)).numpy()
    finally:
        model.train()
    return h if h is not None else np.zeros((0, 1), np.float32)


def _input_rows(store: GraphStore, nt: str, feat: str, ids: IdArray) -> Any:
    """Feature rows of ``ids``: a float32 scipy CSR matrix for a sparse feature (a
    :class:`~graphshard.sparse.SparseRows`: bag-of-words features stay sparse, and the
    product with a weight matrix costs their non-zeros), else a dense ``(len(ids), F)``
    float32 array."""
    raw = store.node_features(nt, feat, ids)
    if isinstance(raw, SparseRows):
        return raw.to_scipy().astype(np.float32, copy=False)
    if isinstance(raw, np.ndarray):
        return dense(raw)
    return dense(read_rows(store, nt, feat, ids))  # other rows (a Ragged): its checks


def _linear(torch: Any, lin: Any, x: Any) -> np.ndarray:
    """``lin(x)`` as a float32 array, for dense rows or a scipy sparse matrix."""
    if isinstance(x, np.ndarray):
        return lin(torch.from_numpy(x)).numpy()
    y = np.asarray(x @ lin.weight.detach().numpy().T, dtype=np.float32)
    if lin.bias is not None:
        y += lin.bias.detach().numpy()
    return y


def accuracy(pred: np.ndarray, labels: np.ndarray, ids: IdArray) -> float:
    """Share of ``ids`` whose predicted class is the label (NaN without IDs)."""
    return float((pred[ids] == labels[ids]).mean()) if len(ids) else float("nan")
