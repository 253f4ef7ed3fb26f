"""DistEmbedding and its sparse optimizers (SGD, Adagrad), updated on the servers.

A batch's gradient rows go to the servers owning them; each server sums the rows of repeated
IDs and applies one update per row, as DGL's and PGL's sparse optimizers do (Adagrad:
``s += g * g``, ``w -= lr * g / (sqrt(s) + eps)``, element-wise state).  Weights and optimizer
state save to safetensors (or ``.npy``) files, rows in per-type ID order; never pickle.

Example:
    >>> import graphshard as gs
    >>> dg = gs.dist.DistGraph("parts/shop.json")  # doctest: +SKIP
    >>> emb = DistEmbedding(dg.num_nodes("user"), 16, "user_emb", graph=dg)  # doctest: +SKIP
    >>> opt = SparseAdagrad([emb], lr=0.1)  # doctest: +SKIP
    >>> opt.step(ids, grads)  # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._tensorfile import load_tensors, save_tensors
from ..errors import FormatError, ValidationError
from .graph import DistGraph
from .tensor import DistTensor

__all__ = ["DistEmbedding", "SparseAdagrad", "SparseSGD", "load_array", "save_array"]

_CHUNK = 1 << 16


def save_array(path: str | os.PathLike[str], arrays: dict[str, np.ndarray]) -> None:
    """Write ``arrays`` to a ``.npy`` file (one array) or a safetensors file (any number)."""
    p = Path(path)
    if p.suffix == ".npy":
        if len(arrays) != 1:
            raise ValidationError(f"{p}: a .npy file holds one array, got {sorted(arrays)}; "
                                  "use .safetensors", path=str(p))
        tmp = p.with_suffix(".tmp.npy")
        np.save(tmp, next(iter(arrays.values())), allow_pickle=False)
        os.replace(tmp, p)
    else:
        save_tensors(p, arrays, {"format": "graphshard-embedding"})


def load_array(path: str | os.PathLike[str], key: str) -> np.ndarray:
    """Array ``key`` of a safetensors file, or the array of a ``.npy`` file (memory-mapped)."""
    p = Path(path)
    if p.suffix == ".npy":
        return np.load(p, mmap_mode="r", allow_pickle=False)
    tensors, _ = load_tensors(p)
    if key not in tensors:
        raise FormatError(f"{p}: no tensor {key!r}; tensors are {sorted(tensors)}",
                          path=str(p), field=key)
    return tensors[key]


def _gather(t: DistTensor) -> np.ndarray:
    return np.concatenate([t[np.arange(i, min(i + _CHUNK, len(t)))]
                           for i in range(0, len(t), _CHUNK)] or [t[np.zeros(0, np.int64)]])


def _scatter(t: DistTensor, values: np.ndarray, what: str) -> None:
    if tuple(values.shape) != t.shape:
        raise FormatError(f"{what}: shape {tuple(values.shape)} does not match {t.shape}",
                          field="shape")
    for i in range(0, len(t), _CHUNK):
        rows = np.arange(i, min(i + _CHUNK, len(t)))
        t[rows] = values[rows]


class DistEmbedding:
    """A learnable embedding table partitioned like a node type (DGL's DistEmbedding).

    Args:
        num_embeddings: Rows (the node count of the type).
        embedding_dim: Columns.
        name: Table name (an existing table of that name is attached to).
        init_func: ``init_func(local_shape, dtype) -> array`` per partition (zeros: None).
        part_policy: ``"node:<ntype>"`` (None: inferred from ``num_embeddings``).
        graph: The DistGraph whose servers hold the rows.
        dtype: Weight dtype.
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, name: str | None = None,
                 init_func: Callable[[tuple[int, ...], Any], Any] | None = None,
                 part_policy: str | None = None, *, graph: DistGraph,
                 dtype: Any = np.float32) -> None:
        self.weight = DistTensor((num_embeddings, embedding_dim), dtype, name, init_func,
                                 part_policy, persistent=name is not None, graph=graph)
        self.name = self.weight.name
        self.num_embeddings, self.embedding_dim = int(num_embeddings), int(embedding_dim)

    def __call__(self, ids: Any) -> np.ndarray:
        """Rows ``ids`` of the table (a new array)."""
        return self.weight[ids]

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the whole table (rows in per-type ID order) to ``.safetensors`` or ``.npy``."""
        save_array(path, {"weight": _gather(self.weight)})

    def load(self, path: str | os.PathLike[str]) -> None:
        """Read the table back from :meth:`save`'s file.

        Raises:
            FormatError: the file's table has another shape.
        """
        _scatter(self.weight, load_array(path, "weight"), f"{path}: weight")

    def __repr__(self) -> str:
        return (f"DistEmbedding({self.name!r}, num_embeddings={self.num_embeddings}, "
                f"embedding_dim={self.embedding_dim})")


class _SparseOptimizer:
    """Applies sparse updates to DistEmbeddings on their servers."""

    optimizer = ""

    def __init__(self, params: Sequence[DistEmbedding], lr: float, *, eps: float = 1e-10
                 ) -> None:
        self.params = list(params)
        if not self.params or not all(isinstance(p, DistEmbedding) for p in self.params):
            raise ValidationError("a sparse optimizer needs a non-empty list of "
                                  "DistEmbedding", field="params")
        if not float(lr) > 0:
            raise ValidationError(f"lr must be > 0, got {lr!r}", field="lr", value=lr)
        self.lr, self.eps = float(lr), float(eps)
        self.state: dict[str, DistTensor] = {}

    def _emb(self, emb: DistEmbedding | None) -> DistEmbedding:
        if emb is None:
            if len(self.params) != 1:
                raise ValidationError(f"this optimizer has {len(self.params)} embeddings: pass "
                                      "emb=", field="emb")
            return self.params[0]
        if emb not in self.params:
            raise ValidationError(f"{emb!r} is not one of this optimizer's embeddings",
                                  field="emb")
        return emb

    def step(self, ids: Any, grads: Any, *, emb: DistEmbedding | None = None) -> None:
        """Update rows ``ids`` of ``emb`` (the only one when None) with gradient rows
        ``grads`` of shape ``(len(ids), embedding_dim)``; repeated IDs are summed."""
        e = self._emb(emb)
        st = self.state.get(e.name)
        e.weight.apply_sparse(ids, grads, self.optimizer, self.lr,
                              None if st is None else st.name, self.eps)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the optimizer state of every embedding (safetensors, keyed by name)."""
        save_tensors(path, {name: _gather(t) for name, t in self.state.items()},
                     {"optimizer": self.optimizer, "lr": str(self.lr)})

    def load(self, path: str | os.PathLike[str]) -> None:
        """Read the optimizer state written by :meth:`save`."""
        tensors, _ = load_tensors(path)
        for name, t in self.state.items():
            if name not in tensors:
                raise FormatError(f"{path}: no optimizer state for {name!r}", path=str(path),
                                  field=name)
            _scatter(t, tensors[name], f"{path}: {name}")


class SparseSGD(_SparseOptimizer):
    """Sparse SGD: ``w[i] -= lr * sum of the gradient rows of i``.

    Args:
        params: The DistEmbeddings to update.
        lr: Learning rate.
    """

    optimizer = "sgd"


class SparseAdagrad(_SparseOptimizer):
    """Sparse Adagrad (DGL's and PGL's): element-wise state ``s += g * g``, then
    ``w -= lr * g / (sqrt(s) + eps)``; the state is a DistTensor beside each table.

    Args:
        params: The DistEmbeddings to update.
        lr: Learning rate.
        eps: Added to the root of the state.
    """

    optimizer = "adagrad"

    def __init__(self, params: Sequence[DistEmbedding], lr: float, *, eps: float = 1e-10
                 ) -> None:
        super().__init__(params, lr, eps=eps)
        for e in self.params:
            w = e.weight
            self.state[e.name] = DistTensor(w.shape, np.float32, f"{e.name}.adagrad",
                                            part_policy=w.part_policy,
                                            persistent=w.persistent, graph=w.graph)
