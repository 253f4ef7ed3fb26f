"""DistEmbedding and its sparse optimizers (SGD, Adagrad on the servers; Adam).

A batch's gradient rows go to the servers owning them; each server sums the rows of repeated
IDs and applies one update per row, as DGL's and PGL's sparse optimizers do (Adagrad:
``s += g * g``, ``w -= lr * g / (sqrt(s) + eps)``, element-wise state).  Weights and optimizer
state save to safetensors (or ``.npy``) files, rows in per-type ID order; never pickle.

Example:
    >>> import graphshard as gs
    >>> dg = gs.distributed.DistGraph("parts/shop.json")  # doctest: +SKIP
    >>> emb = DistEmbedding(dg.num_nodes("user"), 16, "user_emb", graph=dg)  # doctest: +SKIP
    >>> opt = SparseAdagrad([emb], lr=0.1)  # doctest: +SKIP
    >>> opt.step(ids, grads)  # doctest: +SKIP
    >>> loss = model(emb(torch.as_tensor(ids))).sum()  # doctest: +SKIP
    >>> loss.backward(); opt.step()  # recorded sparse gradients  # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._util.optional import import_optional
from ..errors import FormatError, ValidationError
from ..storage.tensorfile import load_tensors, save_tensors
from .graph import DistGraph
from .policy import PartitionPolicy
from .tensor import DistTensor

__all__ = ["DistEmbedding", "SparseAdagrad", "SparseAdam", "SparseSGD", "load_array",
           "save_array"]

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


_FN: dict[str, Any] = {}


def _record_fn(torch: Any) -> Any:
    """The autograd function of a lookup (defined once torch is imported): forward returns
    the fetched rows, backward appends ``(ids, grad rows)`` to the embedding's trace."""
    if "record" not in _FN:

        class RecordSparseGrad(torch.autograd.Function):
            @staticmethod
            def forward(ctx: Any, anchor: Any, rows: np.ndarray, ids: np.ndarray,
                        trace: list) -> Any:
                ctx.ids, ctx.trace = ids, trace
                return torch.from_numpy(rows)

            @staticmethod
            def backward(ctx: Any, grad: Any) -> tuple[None, None, None, None]:
                g = grad.detach().cpu().numpy().reshape(len(ctx.ids), -1)
                ctx.trace.append((ctx.ids, np.array(g, dtype=np.float32)))
                return None, None, None, None

        _FN["record"] = RecordSparseGrad
    return _FN["record"]


def _gather(t: DistTensor) -> np.ndarray:
    return np.concatenate([t.read(np.arange(i, min(i + _CHUNK, len(t))))
                           for i in range(0, len(t), _CHUNK)] or [t.read(np.zeros(0, np.int64))])


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
        part_policy: A :class:`~graphshard.distributed.PartitionPolicy`
            (``g.get_node_partition_policy(ntype)``) or ``"node:<ntype>"`` (None: inferred
            from ``num_embeddings``).
        graph: The DistGraph whose servers hold the rows (may be left out with a
            PartitionPolicy: its graph).
        dtype: Weight dtype (NumPy or torch).
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, name: str | None = None,
                 init_func: Callable[[tuple[int, ...], Any], Any] | None = None,
                 part_policy: str | PartitionPolicy | None = None, *,
                 graph: DistGraph | None = None, dtype: Any = np.float32) -> None:
        self.weight = DistTensor((num_embeddings, embedding_dim), dtype, name, init_func,
                                 part_policy, persistent=name is not None, graph=graph)
        self.name = self.weight.name
        self.num_embeddings, self.embedding_dim = int(num_embeddings), int(embedding_dim)
        self._trace: list[tuple[np.ndarray, np.ndarray]] = []
        self._anchor_t: Any = None

    def __call__(self, ids: Any) -> Any:
        """Rows ``ids`` of the table.

        With NumPy or list ``ids``: a new NumPy array.  With a torch tensor of IDs: a float
        torch tensor; when autograd is on, its backward records the sparse gradient
        ``(ids, rows of d loss / d output)`` here, and the sparse optimizer's ``step()``
        (no arguments) applies and clears it, as DGL's DistEmbedding does.  The rows
        themselves are a constant of the graph (no dense gradient of the table exists).

        Example:
            >>> out = emb(torch.tensor([0, 3, 0]))  # doctest: +SKIP
            >>> (out ** 2).sum().backward()  # doctest: +SKIP
            >>> opt.step()  # doctest: +SKIP
        """
        if type(ids).__module__.split(".")[0] != "torch":
            return self.weight.read(ids)
        torch = import_optional("torch", "DistEmbedding autograd")
        idx = np.asarray(ids.detach().cpu().numpy(), dtype=np.int64).reshape(-1)
        rows = self.weight.read(idx)
        if not torch.is_grad_enabled():
            return torch.from_numpy(rows).reshape(*ids.shape, self.embedding_dim)
        out = _record_fn(torch).apply(self._anchor(torch), rows, idx, self._trace)
        return out.reshape(*ids.shape, self.embedding_dim)

    def _anchor(self, torch: Any) -> Any:
        """An empty leaf that requires grad: it puts every lookup in the autograd graph."""
        if self._anchor_t is None:
            self._anchor_t = torch.zeros(0, requires_grad=True)
        return self._anchor_t

    def pop_grads(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``(ids, gradient rows)`` recorded by backward passes since the last call (None if
        nothing was recorded), and forget them."""
        trace, self._trace[:] = list(self._trace), []
        if not trace:
            return None
        return (np.concatenate([i for i, _ in trace]),
                np.concatenate([g for _, g in trace]).astype(np.float32, copy=False))

    def reset_grads(self) -> None:
        """Forget recorded gradients (``optimizer.zero_grad()`` calls this)."""
        self._trace.clear()

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

    def step(self, ids: Any = None, grads: Any = None, *, emb: DistEmbedding | None = None
             ) -> None:
        """Apply a sparse update; repeated IDs are summed.

        ``step()``: the gradients that backward passes recorded on every embedding (see
        :meth:`DistEmbedding.__call__`), then forgotten.  ``step(ids, grads)``: rows ``ids``
        of ``emb`` (the only one when None) with gradient rows ``grads`` of shape
        ``(len(ids), embedding_dim)``.
        """
        if ids is None and grads is None:
            for e in self.params:
                got = e.pop_grads()
                if got is not None:
                    self._apply(e, *got)
            return
        if ids is None or grads is None:
            raise ValidationError("step takes both ids and grads, or neither (recorded "
                                  "gradients)", field="grads" if grads is None else "ids")
        self._apply(self._emb(emb), ids, grads)

    def zero_grad(self) -> None:
        """Forget the gradients recorded on every embedding."""
        for e in self.params:
            e.reset_grads()

    def _apply(self, e: DistEmbedding, ids: Any, grads: Any) -> None:
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


class SparseAdam(_SparseOptimizer):
    """Lazy sparse Adam (PGL's ``shared_adam``): only the rows of a step move; the first
    and second moments are DistTensors beside each table, and the bias corrections use
    one step count per optimizer (shared by all rows, as PGL's shared beta powers).

    The update reads the rows and both moments, computes on the caller and writes them
    back (unique rows, repeated IDs summed first): exact for one trainer; concurrent
    trainers updating the same row may lose one of the updates (Hogwild-style).

    Args:
        params: The DistEmbeddings to update.
        lr: Learning rate.
        betas: Decay of the first and second moments.
        eps: Added to the root of the second moment.

    Example:
        >>> opt = SparseAdam([emb], lr=0.01)  # doctest: +SKIP
        >>> opt.step(np.array([0, 3, 0]), grads)  # rows 0 (summed) and 3  # doctest: +SKIP
    """

    optimizer = "adam"

    def __init__(self, params: Sequence[DistEmbedding], lr: float, *,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8) -> None:
        super().__init__(params, lr, eps=eps)
        self.betas = (float(betas[0]), float(betas[1]))
        self.steps = 0
        for e in self.params:
            w = e.weight
            for k in ("m", "v"):
                self.state[f"{e.name}.{k}"] = DistTensor(
                    w.shape, np.float32, f"{e.name}.adam_{k}", part_policy=w.part_policy,
                    persistent=w.persistent, graph=w.graph)

    def _apply(self, e: DistEmbedding, ids: Any, grads: Any) -> None:
        idx = np.asarray(ids, dtype=np.int64).reshape(-1)
        g = np.asarray(grads, dtype=np.float32).reshape(len(idx), -1)
        uniq, inv = np.unique(idx, return_inverse=True)
        summed = np.zeros((len(uniq), g.shape[1]), np.float32)
        np.add.at(summed, inv.ravel(), g)
        self.steps += 1
        b1, b2 = self.betas
        m_t, v_t = self.state[f"{e.name}.m"], self.state[f"{e.name}.v"]
        m = b1 * m_t[uniq] + (1 - b1) * summed
        v = b2 * v_t[uniq] + (1 - b2) * summed * summed
        rate = self.lr * np.sqrt(1 - b2 ** self.steps) / (1 - b1 ** self.steps)
        w = e.weight.read(uniq) - rate * m / (np.sqrt(v) + self.eps)
        m_t[uniq], v_t[uniq] = m.astype(np.float32), v.astype(np.float32)
        e.weight[uniq] = w.astype(np.float32)
