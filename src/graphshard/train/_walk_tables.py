"""Embedding tables of the walk-embedding trainer: one table per node type, local (a torch
tensor on a NumPy row block, updated in place by the numba row optimisers) or distributed
(a :class:`~graphshard.distributed.DistEmbedding` with a server-side sparse optimizer).

Both kinds offer the same small interface: ``set_lr``, ``rows(ids)``, ``step(ids, grads)``
(unique rows), ``all()`` (a copy of the table), ``snapshot()`` / ``restore(snap)`` (table and
Adagrad state, for checkpoints).  ``save_tables`` / ``resume_tables`` write and read them
as a training checkpoint (:mod:`~graphshard.train.checkpoint`).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import FormatError, ValidationError
from ..store import GraphStore
from ..typing import IdArray
from ._common import subseed
from .kernels import adagrad_rows, adam_rows, sgd_rows

__all__ = ["DistTable", "TorchTable", "WarmRows", "init_tables", "resume_tables",
           "save_tables"]

logger = logging.getLogger(__name__)

_CHUNK = 1 << 16  # rows per server request when a whole DistEmbedding is read or written


@dataclass(frozen=True, repr=False)
class WarmRows:
    """Initial values of some rows of one node type's table (routine training: the nodes
    of the previous period); the other rows keep the trainer's random initialisation.

    Attributes:
        rows: ``(k,)`` int64 row IDs of the table, unique.
        values: ``(k, emb_size)`` float32, their initial values.
    """

    rows: IdArray
    values: np.ndarray

    def __repr__(self) -> str:
        return f"WarmRows(rows={len(self.rows)}, width={np.shape(self.values)[-1]})"


class TorchTable:
    """A local embedding table: a torch tensor (on a NumPy row block, no copy) updated
    row-wise by sparse Adagrad, Adam or SGD (the updates of
    :class:`~graphshard.distributed.SparseAdagrad` and
    :class:`~graphshard.distributed.SparseAdam`, done in place on the rows)."""

    def __init__(self, torch: Any, init: np.ndarray, optimizer: str, lr: float) -> None:
        self.torch = torch
        self.weight = torch.from_numpy(init)
        self.state = torch.zeros_like(self.weight) if optimizer in ("adagrad", "adam") else None
        self.second = torch.zeros_like(self.weight) if optimizer == "adam" else None
        self.steps = 0
        self.lr, self.eps = float(lr), (1e-8 if optimizer == "adam" else 1e-10)

    def set_lr(self, lr: float) -> None:
        self.lr = float(lr)

    def rows(self, ids: IdArray) -> np.ndarray:
        return np.take(self.weight.numpy(), ids, axis=0)

    def step(self, ids: IdArray, grads: np.ndarray) -> None:
        """Update unique rows ``ids`` with gradient rows ``grads`` (in place, numba)."""
        w = self.weight.numpy()
        if self.second is not None and self.state is not None:
            self.steps += 1
            adam_rows(w, self.state.numpy(), self.second.numpy(), ids, grads,
                      np.float32(self.lr), np.float32(0.9), np.float32(0.999),
                      np.float32(self.eps), np.float32(self.steps))
        elif self.state is not None:
            adagrad_rows(w, self.state.numpy(), ids, grads, np.float32(self.lr),
                         np.float32(self.eps))
        else:
            sgd_rows(w, ids, grads, np.float32(self.lr))

    def all(self) -> np.ndarray:
        return self.weight.numpy().copy()

    def snapshot(self) -> dict[str, np.ndarray]:
        """The table and its Adagrad state (copies), for a checkpoint."""
        out = {"weight": self.all()}
        if self.second is not None and self.state is not None:
            out["adam_m"] = self.state.numpy().copy()
            out["adam_v"] = self.second.numpy().copy()
            out["adam_step"] = np.array([self.steps], np.int64)
        elif self.state is not None:
            out["adagrad"] = self.state.numpy().copy()
        return out

    def restore(self, snap: dict[str, np.ndarray]) -> None:
        self.weight.copy_(self.torch.from_numpy(np.asarray(snap["weight"])))
        if self.second is not None and self.state is not None:
            self.state.copy_(self.torch.from_numpy(np.asarray(snap["adam_m"])))
            self.second.copy_(self.torch.from_numpy(np.asarray(snap["adam_v"])))
            self.steps = int(np.asarray(snap["adam_step"])[0])
        elif self.state is not None:
            self.state.copy_(self.torch.from_numpy(np.asarray(snap["adagrad"])))


class DistTable:
    """A DistEmbedding on the graph servers with a server-side sparse optimizer."""

    def __init__(self, dg: Any, ntype: str, init: np.ndarray, optimizer: str, lr: float
                 ) -> None:
        from ..distributed import DistEmbedding, SparseAdagrad, SparseAdam, SparseSGD

        self.emb = DistEmbedding(init.shape[0], init.shape[1], part_policy=f"node:{ntype}",
                                 graph=dg)
        for i in range(0, len(init), _CHUNK):
            self.emb.weight[np.arange(i, min(i + _CHUNK, len(init)))] = init[i:i + _CHUNK]
        kind = {"adagrad": SparseAdagrad, "adam": SparseAdam}.get(optimizer, SparseSGD)
        self.opt = kind([self.emb], lr)

    def set_lr(self, lr: float) -> None:
        self.opt.lr = float(lr)

    def rows(self, ids: IdArray) -> np.ndarray:
        return self.emb(ids)

    def step(self, ids: IdArray, grads: np.ndarray) -> None:
        self.opt.step(ids, grads)

    def all(self) -> np.ndarray:
        n = self.emb.num_embeddings
        return np.concatenate([self.emb(np.arange(i, min(i + _CHUNK, n)))
                               for i in range(0, n, _CHUNK)])

    def _tensors(self) -> dict[str, Any]:
        n = self.emb.name
        if f"{n}.m" in self.opt.state:
            return {"weight": self.emb.weight, "adam_m": self.opt.state[f"{n}.m"],
                    "adam_v": self.opt.state[f"{n}.v"]}
        st = self.opt.state.get(n)
        return {"weight": self.emb.weight, **({"adagrad": st} if st is not None else {})}

    def snapshot(self) -> dict[str, np.ndarray]:
        """The table and its Adagrad state, read from the servers, for a checkpoint."""
        out = {k: np.concatenate([t[np.arange(i, min(i + _CHUNK, len(t)))]
                                  for i in range(0, len(t), _CHUNK)])
               for k, t in self._tensors().items()}
        if "adam_m" in out:
            out["adam_step"] = np.array([self.opt.steps], np.int64)
        return out

    def restore(self, snap: dict[str, np.ndarray]) -> None:
        if "adam_step" in snap:
            self.opt.steps = int(np.asarray(snap["adam_step"])[0])
        for k, t in self._tensors().items():
            for i in range(0, len(t), _CHUNK):
                rows = np.arange(i, min(i + _CHUNK, len(t)))
                t[rows] = np.asarray(snap[k][i:i + _CHUNK])


def init_tables(torch: Any, store: GraphStore, emb_size: int, optimizer: str, lr: float,
                seed: int, init: dict[str, np.ndarray] | None, context: bool,
                init_range: float | None = None) -> tuple[list[Any], list[np.ndarray]]:
    """One table per node type, then (``context``) one zero context table per node type.

    Node tables start uniform in ``[-0.5, 0.5) / sqrt(emb_size)`` (keyed by ``seed``), in
    ``[-init_range, init_range)`` when given (Graph4Rec's ``init_range``), or at
    ``init[ntype]`` (a whole table, or a :class:`WarmRows` setting some rows of the random
    one).  Local tables are row blocks (views) of one array for the node tables
    and one for the context tables, returned too (``[nodes]`` or ``[nodes, contexts]``;
    empty for a DistGraph): the per-pair kernel indexes them by global ID.

    Raises:
        ValidationError: an ``init`` table of the wrong shape (field ``init``).
    """
    from ..distributed import DistGraph  # no Ray import until a DistGraph connects

    rng = np.random.default_rng(subseed(seed, 2))
    dist = isinstance(store, DistGraph)
    counts = [store.num_nodes(t) for t in store.ntypes]
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    blocks = [] if dist else [np.empty((int(offsets[-1]), emb_size), np.float32)
                              for _ in range(2 if context else 1)]
    tables: list[Any] = []
    kinds = [(i, False) for i in range(len(counts))] + [(i, True) for i in range(len(counts))
                                                          if context]
    for i, is_ctx in kinds:
        t, n = store.ntypes[i], counts[i]
        w = (np.zeros((n, emb_size), np.float32) if is_ctx else
             (rng.random((n, emb_size), dtype=np.float32) - 0.5) / np.float32(emb_size ** 0.5)
             if init_range is None else
             (rng.random((n, emb_size), dtype=np.float32) - 0.5) * np.float32(2 * init_range))
        if init is not None and t in init and not is_ctx:
            w = _initial(init[t], t, w, n, emb_size)
        if dist:
            tables.append(DistTable(store, t, w, optimizer, lr))
            continue
        view = blocks[int(is_ctx)][offsets[i]:offsets[i + 1]]
        view[:] = w
        tables.append(TorchTable(torch, view, optimizer, lr))
    return tables, blocks


def _initial(init: Any, ntype: str, w: np.ndarray, n: int, emb_size: int) -> np.ndarray:
    """The initial table of ``ntype``: ``init`` (a whole table) or ``w`` (the random one)
    with the rows of a :class:`WarmRows` set."""
    if isinstance(init, WarmRows):
        rows = np.asarray(init.rows, np.int64)
        values = np.asarray(init.values, np.float32)
        if values.shape != (len(rows), emb_size) or (
                len(rows) and (rows.min() < 0 or rows.max() >= n)):
            raise ValidationError(f"initial rows of {ntype!r}: {values.shape} values for "
                                  f"{len(rows)} rows of a ({n}, {emb_size}) table",
                                  field="init")
        w[rows] = values
        return w
    full = np.ascontiguousarray(init, dtype=np.float32)
    if full.shape != (n, emb_size):
        raise ValidationError(f"initial embeddings of {ntype!r} have shape {full.shape}, "
                              f"expected {(n, emb_size)}", field="init")
    return full


def save_tables(tables: list[Any], checkpoint_dir: str | os.PathLike[str], epoch: int,
                params: dict[str, Any], history: dict[str, list[Any]]) -> None:
    """Checkpoint the tables (``"<i>.weight"``) and their Adagrad state (``"<i>.adagrad"``)
    after ``epoch`` completed epochs, with the run's parameters and history."""
    from .checkpoint import save_checkpoint

    snaps = [tab.snapshot() for tab in tables]
    save_checkpoint(checkpoint_dir, {f"{i}.weight": s["weight"] for i, s in enumerate(snaps)},
                    {f"{i}.{k}": v for i, s in enumerate(snaps) for k, v in s.items()
                     if k != "weight"},
                    epoch=epoch, history=history, params=params)


def resume_tables(tables: list[Any], checkpoint_dir: str | os.PathLike[str],
                  params: dict[str, Any], history: dict[str, list[Any]]) -> int:
    """Load the checkpoint in ``checkpoint_dir`` (if any) into the tables and extend
    ``history`` with its history; returns the epochs it completed (0 without one).

    Raises:
        ValidationError: the checkpoint was written with other parameters.
        FormatError: it holds another number of tables.
    """
    from .checkpoint import resume_checkpoint

    ck = resume_checkpoint(checkpoint_dir, params)
    if ck is None:
        return 0
    if len([k for k in ck.model if k.endswith(".weight")]) != len(tables):
        raise FormatError(f"{checkpoint_dir}: the checkpoint has {len(ck.model)} tables, this "
                          f"run {len(tables)}", path=str(checkpoint_dir))
    for i, tab in enumerate(tables):
        snap = {"weight": ck.model[f"{i}.weight"]}
        snap.update({k.split(".", 1)[1]: v for k, v in ck.optimizer.items()
                     if k.split(".", 1)[0] == str(i)})
        tab.restore(snap)
    for name, values in history.items():
        values.extend(ck.history.get(name, []))
    logger.info("train_walk_embedding: resumed from %s after epoch %d", checkpoint_dir,
                ck.epoch)
    return ck.epoch
