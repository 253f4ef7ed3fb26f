"""Unsupervised walk embeddings (DeepWalk / metapath2vec, Graph4Rec's walk-based model).

Each epoch walks ``walk_times`` times from every start node (in shuffled buffers of walks),
optionally drops frequent nodes from them (word2vec's ``sample``: ``subsample``), cuts
skip-gram (centre, context) pairs within ``win_size``, draws ``neg_num`` negatives of the
context's node type per pair, and minimises the sigmoid loss
``-log s(e_c . e_p) - sum log s(-e_c . e_n)`` over one embedding table per node type for
the centres and, by default, a second one for contexts and negatives (word2vec's; with
``context_table=False`` one table shared by both, as PGL's walk-based model).  The tables
are sparse: a step reads and updates only the rows of its batch.  On a DistGraph they are
:class:`~graphshard.distributed.DistEmbedding` tables updated on the servers by
:class:`~graphshard.distributed.SparseAdagrad` / :class:`~graphshard.distributed.SparseSGD`; locally
they are torch tensors updated in place, row by row, with the same Adagrad / SGD rule, or (the
default there: ``optimizer="auto"``) by word2vec's SGD after every pair.  The defaults are
DeepWalk's setting (see :class:`~graphshard.train.walk_options.WalkOptions`).  With the
same seed and optimizer, a DistGraph gives the loss curve of a local run on the partitioned
graph in its reshuffled IDs (``gs.distributed.assemble_graph(config)``; equal up to float
rounding): walks,
pairs and negatives are keyed by node ID, so the original graph, in other IDs, gives
another curve.

Unstable API (first pass of issue 7).

Example:
    >>> import graphshard as gs
    >>> from graphshard.train import train_walk_embedding
    >>> g = gs.graph(([0, 1, 2, 3], [1, 2, 3, 0]))
    >>> res = train_walk_embedding(g, walk_len=5, walk_times=2, win_size=2, neg_num=2,
    ...                            emb_size=4, epochs=1, seed=0)  # doctest: +SKIP
    >>> res.embeddings["_N"].shape  # doctest: +SKIP
    (4, 4)
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from .._util.optional import import_optional
from ..errors import FormatError, ValidationError
from ..sampling import negative_sample, parse_metapath, skip_gram_pairs
from ..storage.files import atomic_path, atomic_write
from ..store import GraphStore
from ..typing import IdArray
from ._common import open_store, subseed
from ._walk_corpus import apply_subsampling, epoch_walks, keep_probability
from ._walk_tables import WarmRows, init_tables, resume_tables, save_tables
from .kernels import sgns_grads, sgns_pair_sgd
from .walk_options import LR_DECAYS, OPTIMIZERS, WalkOptions

__all__ = ["LR_DECAYS", "OPTIMIZERS", "WalkEmbeddingResult", "WalkOptions", "WarmRows",
           "load_embeddings", "save_embeddings", "train_walk_embedding"]

logger = logging.getLogger(__name__)

@dataclass(frozen=True)
class WalkEmbeddingResult:
    """What :func:`train_walk_embedding` returns.

    Attributes:
        embeddings: ``{ntype: (num_nodes, emb_size) float32}``, rows in node ID order (a
            copy; shuffled IDs for a DistGraph).
        losses: Mean loss per epoch.
        step_losses: Loss of every step, in order.
        num_pairs: Training pairs per epoch.
        seconds: Seconds per epoch.
        node_ids: ``{ntype: IDs}`` of the input files, row by row of ``embeddings``, for
            the node types whose graph has the node feature ``node_id``
            (:func:`~graphshard.io.read_pgl` keeps it; a partitioned graph serves it in its
            reshuffled order); empty otherwise.
        tables: ``{ntype: (num_nodes, emb_size) float32}``, the id tables (a copy) where
            ``embeddings`` are the torch model's output instead (``sage_mode``, ``slots``,
            ``softsign``, ...: what a later run continues from); empty otherwise.
    """

    embeddings: dict[str, np.ndarray] = field(repr=False)
    losses: list[float]
    step_losses: list[float] = field(repr=False)
    num_pairs: list[int]
    seconds: list[float]
    node_ids: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    tables: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    def __repr__(self) -> str:
        shapes = {t: e.shape for t, e in self.embeddings.items()}
        loss = f"{self.losses[-1]:.4f}" if self.losses else "-"
        return (f"WalkEmbeddingResult(embeddings={shapes}, epochs={len(self.losses)}, "
                f"loss={loss}, seconds={sum(self.seconds):.1f})")


def _starts(store: GraphStore, metapath: Any, walk_len: int) -> list[tuple[Any, str]]:
    """(metapath, start node type) per ``;``-separated metapath (PGL's config syntax)."""
    paths = [None] if metapath is None else (
        [p.strip() for p in metapath.split(";") if p.strip()] if isinstance(metapath, str)
        else list(metapath))
    return [(p, parse_metapath(store, p, walk_len)[0][0]) for p in paths]


def _step(tables: list[Any], offsets: np.ndarray, src: IdArray, dst: IdArray,
          neg: IdArray) -> float:
    """One sigmoid-loss step on global IDs (table ``i`` holds ``offsets[i]:offsets[i+1]``);
    returns the loss.  The gradient of the mean loss is summed per unique row (numba),
    then each table applies its sparse optimizer to those rows."""
    flat = np.concatenate([src, dst, neg.ravel()])
    uniq, inv = np.unique(flat, return_inverse=True)
    cuts = np.searchsorted(uniq, offsets)
    rows = [tab.rows(uniq[cuts[i]:cuts[i + 1]] - offsets[i]) for i, tab in enumerate(tables)]
    u = np.ascontiguousarray(np.concatenate(rows), dtype=np.float32)
    b = len(src)
    idx = inv.astype(np.int64).ravel()
    grads = np.zeros_like(u)
    loss = sgns_grads(u, idx[:b], idx[b:2 * b], idx[2 * b:].reshape(b, -1), grads)
    for i, tab in enumerate(tables):
        lo, hi = cuts[i], cuts[i + 1]
        if hi > lo:
            tab.step(uniq[lo:hi] - offsets[i], grads[lo:hi])
    return float(loss)


def _lr_at(lr: float, end_lr: float, decay: str, progress: float) -> float:
    """The learning rate after ``progress`` (0..1) of the run's walks."""
    return lr if decay == "none" else lr + (end_lr - lr) * min(max(progress, 0.0), 1.0)


@dataclass
class _Run:
    """Fixed settings of one training run, shared by its buffers."""

    store: Any
    options: WalkOptions
    tables: list[Any]
    blocks: list[np.ndarray]
    offsets: np.ndarray
    all_offsets: np.ndarray
    shift: int
    total_walks: int
    keep: np.ndarray | None  # keep probability by global ID (subsampling), or None
    model: Any = None  # a G4RModel (loss_type, sage_mode, slots, softsign), or None


def _options(store: Any, options: WalkOptions | None, overrides: dict[str, Any]
             ) -> WalkOptions:
    """``options`` with ``overrides`` applied, checked against ``store``."""
    from ..distributed import DistGraph

    unknown = sorted(set(overrides) - set(WalkOptions.names()))
    if unknown:
        raise ValidationError(f"train_walk_embedding: unknown option(s) {unknown}; the "
                              f"options are {list(WalkOptions.names())} and init, on_epoch, "
                              "checkpoint_dir, resume", field=unknown[0])
    if options is None:
        o = WalkOptions(**overrides)
    else:
        o = replace(options, **overrides) if overrides else options
    # "auto" / None fields: pair_sgd locally, adagrad on the servers (WalkOptions.resolve)
    o = o.resolve(distributed=isinstance(store, (DistGraph, str, os.PathLike)))
    if o.optimizer == "pair_sgd" and isinstance(store, (DistGraph, str, os.PathLike)):
        raise ValidationError("optimizer 'pair_sgd' updates local tables pair by pair; on a "
                              "DistGraph use 'adagrad' or 'sgd'", field="optimizer",
                              value=o.optimizer)
    if o.uses_model and o.context_table:
        raise ValidationError("context_table is word2vec's second table of the sigmoid fast "
                              "path; loss_type, sage_mode, slots and softsign score pairs "
                              "with one table per node type", field="context_table")
    return o


def check_walk_options(store: Any, options: dict[str, Any], *, names: Any = None
                       ) -> WalkOptions:
    """The resolved options of a run on ``store`` (a Graph, a GraphStore or a partition
    config path), checked as :func:`train_walk_embedding` checks them before it trains:
    fields, the optimizer for the store, and the metapath and slots against the store's
    types and features (``names``: what to read them from instead, e.g. a partition
    config's :class:`~graphshard.train.config_check.PartitionSchema`; without it a path's
    are checked once served).

    Raises:
        ValidationError: naming the option.
    """
    o = _options(store, None, options)
    if names is None and isinstance(store, (str, os.PathLike)):
        return o
    from ..store import as_store
    from ._g4r_model import _resolve_slots

    st = names if names is not None else as_store(store)
    _starts(st, o.metapath, o.walk_len)
    _resolve_slots(st, o.slots)
    return o


def _train_buffer(run: _Run, walks: Any, rng: np.random.Generator, walks_done: int,
                  keys: tuple[int, ...], step_losses: list[float]) -> int:
    """Pairs of one buffer of walks, shuffled, trained batch by batch; returns the pairs.
    ``walks_done``: walks of the run trained before this buffer (for the rate decay)."""
    o = run.options
    if run.keep is not None:
        walks = apply_subsampling(walks, run.keep, run.offsets, seed=subseed(o.seed, 7, *keys))
    p = skip_gram_pairs(walks, o.win_size, random_window=o.random_window,
                        exclude_pairs=o.exclude_pairs, seed=subseed(o.seed, 6, *keys))
    order = rng.permutation(len(p))
    gsrc = run.offsets[p.src_type] + p.src
    gdst = run.offsets[p.dst_type] + p.dst
    nw, n = len(walks.traces), max(len(p), 1)
    for b, i in enumerate(range(0, len(order), o.batch_size)):
        sel = order[i:i + o.batch_size]
        neg = _negatives(run.store, p.ntypes, p.dst_type[sel], o.neg_num,
                         o.neg_distribution, run.offsets, subseed(o.seed, 5, *keys, b))
        lr_a, lr_b = (_lr_at(float(o.lr or 0.0), o.final_lr, o.lr_decay,  # resolved: set
                             (walks_done + nw * j / n) / run.total_walks)
                      for j in (i, i + len(sel) - 1))
        if run.model is not None:
            for tab in run.tables:
                tab.set_lr(lr_a)
            loss = run.model.step(gsrc[sel], gdst[sel], neg, subseed(o.seed, 8, *keys, b))
        elif o.optimizer == "pair_sgd":
            loss = sgns_pair_sgd(run.blocks[0], run.blocks[-1], gsrc[sel], gdst[sel], neg,
                                  np.float32(lr_a), np.float32(lr_b))
        else:
            for tab in run.tables:
                tab.set_lr(lr_a)
            loss = _step(run.tables, run.all_offsets, gsrc[sel], gdst[sel] + run.shift,
                         neg + run.shift)
        if not math.isfinite(loss):
            _diverged(o, f"the loss became {loss} at epoch {keys[0]}")
        step_losses.append(float(loss))
    return len(p)


def train_walk_embedding(store: Any, options: WalkOptions | None = None, *,
                         init: dict[str, np.ndarray] | None = None,
                         on_epoch: Callable[[int, dict[str, float]], None] | None = None,
                         checkpoint_dir: str | os.PathLike[str] | None = None,
                         resume: bool = True, checkpoint_every: int = 1,
                         on_walks: Callable[[int, Any], None] | None = None,
                         **overrides: Any) -> WalkEmbeddingResult:
    """Train skip-gram walk embeddings with negative sampling (DeepWalk, metapath2vec).

    Args:
        store: A Graph, a GraphStore (a DistGraph: tables on its servers) or the path of a
            partition config JSON.
        options: The hyper-parameters (:class:`~graphshard.train.walk_options.WalkOptions`:
            metapath, walk and window sizes, rates, optimizer, seed, ...); default
            ``WalkOptions()``.
        init: Initial ``{ntype: array}`` tables (warm start), or ``{ntype: WarmRows}``
            setting some rows (:class:`WarmRows`: routine training); other
            tables and rows start at random, as without ``init``.
        on_epoch: Called after each epoch with ``(epoch, {"loss", "pairs", "seconds"})``.
        checkpoint_dir: Write a checkpoint (tables, Adagrad state, epoch, losses) here after
            every epoch, atomically (see :mod:`~graphshard.train.checkpoint`).
        resume: Continue from the checkpoint in ``checkpoint_dir`` if there is one (it must
            have been written with the same parameters); every epoch's draws depend on
            ``(seed, epoch)`` only, so a resumed run ends as an uninterrupted one.
        checkpoint_every: Checkpoint after every this many epochs and after the last
            (Graph4Rec's ``save_model_interval``).
        on_walks: Called with ``(epoch, WalkResult)`` for every buffer of walks trained
            (Graph4Rec's ``need_dump_walk``).
        **overrides: ``WalkOptions`` fields replacing those of ``options``
            (``train_walk_embedding(g, walk_len=8, win_size=2)``).

    Returns:
        WalkEmbeddingResult with the tables and the loss per epoch and step.

    Raises:
        ValidationError: an override that is no ``WalkOptions`` field, bad metapath, sizes,
            optimizer (``"pair_sgd"`` on a DistGraph), ``lr_decay``, rates or ``subsample``.
        MissingDependencyError: torch is not installed.
    """
    torch = import_optional("torch", "training")
    o = _options(store, options, overrides)
    with open_store(store) as st:
        plans = _starts(st, o.metapath, o.walk_len)
        offsets = np.concatenate([[0], np.cumsum([st.num_nodes(t) for t in st.ntypes])])
        tables, blocks = init_tables(torch, st, o.emb_size, o.optimizer, float(o.lr or 0.0),
                                     o.seed, init, bool(o.context_table), o.init_range)
        prob = _walk_prob(st, o)
        shift = int(offsets[-1]) if o.context_table else 0  # context IDs: the second set
        walks_per_epoch = sum(st.num_nodes(t) for _, t in plans) * o.walk_times
        run = _Run(st, o, tables, blocks, offsets,
                   np.concatenate([offsets[:-1], offsets + shift]) if o.context_table
                   else offsets, shift, max(walks_per_epoch * o.epochs, 1),
                   keep_probability(st, plans, o.walk_len, o.walk_times, o.walk_buffer,
                                    o.seed, o.sample, prob) if o.sample else None)
        if o.uses_model:
            from ._g4r_model import G4RModel

            run.model = G4RModel(torch, st, o, tables, offsets)
        hist: dict[str, list[Any]] = {"losses": [], "step_losses": [], "num_pairs": [],
                                      "seconds": []}
        losses, step_losses = hist["losses"], hist["step_losses"]
        num_pairs, secs = hist["num_pairs"], hist["seconds"]
        params = o.checkpoint_params()
        start = (resume_tables(tables, checkpoint_dir, params, hist)
                 if checkpoint_dir and resume else 0)
        for epoch in range(start, o.epochs):
            t0 = time.perf_counter()
            first = len(step_losses)
            pairs_seen = 0
            walks_done = epoch * walks_per_epoch
            for k, c, rng, walks in epoch_walks(st, plans, o.walk_len, o.walk_times,
                                                 o.walk_buffer, o.seed, epoch, bar=True,
                                                 prob=prob):
                if on_walks is not None:
                    on_walks(epoch, walks)
                pairs_seen += _train_buffer(run, walks, rng, walks_done, (epoch, k, c),
                                            step_losses)
                walks_done += len(walks.traces)
            if not pairs_seen and epoch == start:
                _no_pairs(o, walks_per_epoch)
            secs.append(time.perf_counter() - t0)
            num_pairs.append(pairs_seen)
            losses.append(float(np.mean(step_losses[first:])) if pairs_seen else float("nan"))
            logger.info("walk embedding epoch %d: %d pairs, loss %.4f, %.1f s", epoch,
                        pairs_seen, losses[-1], secs[-1])
            if checkpoint_dir is not None and ((epoch + 1) % max(int(checkpoint_every), 1) == 0
                                               or epoch + 1 == o.epochs):
                save_tables(tables, checkpoint_dir, epoch + 1, params, hist)
            if on_epoch is not None:
                on_epoch(epoch, {"loss": losses[-1], "pairs": pairs_seen, "seconds": secs[-1]})
        embeddings = (run.model.infer(list(st.ntypes)) if run.model is not None else
                      {t: tables[i].all() for i, t in enumerate(st.ntypes)})
        bad = [t for t, e in embeddings.items() if not np.isfinite(e).all()]
        if bad:
            _diverged(o, f"the embeddings of {bad} hold inf or NaN")
        ids = _file_node_ids(st)
        raw = ({t: tables[i].all() for i, t in enumerate(st.ntypes)}
               if run.model is not None else {})
    return WalkEmbeddingResult(embeddings, losses, step_losses, [int(n) for n in num_pairs],
                               secs, ids, raw)


def _no_pairs(o: WalkOptions, walks: int) -> None:
    """Refuse a run whose first epoch trained no pair: its tables would stay at their
    initial values, so every option (``neg_distribution``, ``lr``, ...) would be ignored."""
    if o.sample:
        raise ValidationError(
            f"train_walk_embedding: the first epoch trained no pair: subsample {o.sample:g} "
            f"(word2vec's sample) dropped nearly every entry of its {walks} walks of "
            f"{o.walk_len}, so the tables would stay at their initial values; on a small "
            "graph set subsample 0 (a config's sample: 0)", field="subsample", value=o.sample)
    raise ValidationError(
        f"train_walk_embedding: the first epoch trained no pair ({walks} walks of "
        f"{o.walk_len}, win_size {o.win_size}, exclude_pairs {list(o.exclude_pairs)}), so "
        "the tables would stay at their initial values", field="walk_len", value=o.walk_len)


def _diverged(o: WalkOptions, what: str) -> None:
    """Refuse a run that diverged (rates far too large) instead of returning NaN tables."""
    raise ValidationError(f"train_walk_embedding: {what}: training diverged; lower lr "
                          f"(lr={o.lr}, optimizer {o.optimizer!r}, init_range={o.init_range})",
                          field="lr", value=o.lr)


def _file_node_ids(store: Any) -> dict[str, np.ndarray]:
    """The node feature ``node_id`` of every node type that has it (in ID order)."""
    schema = store.feature_schema("node") if hasattr(store, "feature_schema") else {}
    return {t: np.asarray(store.node_features(t, "node_id", np.arange(store.num_nodes(t))))
            .reshape(-1) for t in store.ntypes if f"{t}/node_id" in schema}


def _walk_prob(store: Any, o: WalkOptions) -> str | None:
    """``"weight"`` when walks draw by edge weight (``weighted_sample`` and every edge type
    has one); PGL counts a missing weight as 1, so without weights the walks are uniform."""
    if not o.weighted_sample:
        return None
    from ._g4r_model import weighted_etypes

    has = weighted_etypes(store)
    if all(has.values()):
        return "weight"
    logger.warning("weighted_sample: edge types %s have no 'weight' feature; as PGL, their "
                   "edges weigh 1, so walks and neighbour sampling are uniform",
                   [et for et, w in has.items() if not w])
    return None


def _negatives(store: GraphStore, ntypes: list[str], dst_type: np.ndarray, neg_num: int,
               distribution: str, offsets: np.ndarray, seed: int) -> IdArray:
    """``(len(dst_type), neg_num)`` global IDs, each row of its context's node type."""
    out = np.empty((len(dst_type), neg_num), dtype=np.int64)
    for ti in np.unique(dst_type):
        rows = np.flatnonzero(dst_type == ti)
        t = ntypes[int(ti)]
        out[rows] = offsets[store.ntypes.index(t)] + negative_sample(
            store, (len(rows), neg_num), ntype=t, distribution=distribution,
            seed=subseed(seed, int(ti)))
    return out


def save_embeddings(embeddings: Any, out_dir: str | os.PathLike[str], *,
                    ids: dict[str, IdArray] | None = None, text: bool = True) -> list[Path]:
    """Write each node type's table as ``<ntype>.txt`` (``nid\\tv1 v2 ...`` per line, PGL's
    inference dump) and ``<ntype>.npy`` (float32, rows in ID order), atomically.

    Args:
        embeddings: ``{ntype: (N, D) array}`` or a :class:`WalkEmbeddingResult`.
        out_dir: Output folder (created).
        ids: Node IDs to write in the text file per type (e.g. original IDs of a
            partitioned graph); default ``0..N-1``.

    Returns:
        The written paths.
    """
    if isinstance(embeddings, WalkEmbeddingResult):
        embeddings = embeddings.embeddings
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for t, emb in embeddings.items():
        arr = np.ascontiguousarray(emb, dtype=np.float32)
        nid = np.arange(len(arr)) if ids is None or t not in ids else np.asarray(ids[t])
        if len(nid) != len(arr):
            raise ValidationError(f"save_embeddings: {len(nid)} IDs for {len(arr)} rows of "
                                  f"{t!r}", field="ids")
        if text:
            with atomic_write(out / f"{t}.txt", "w") as fh:
                for i, row in zip(nid.tolist(), arr, strict=True):
                    fh.write(f"{i}\t{' '.join(f'{v:.6g}' for v in row.tolist())}\n")
            written.append(out / f"{t}.txt")
        with atomic_path(out / f"{t}.npy") as tmp, open(tmp, "wb") as fh:
            np.save(fh, arr, allow_pickle=False)
        written.append(out / f"{t}.npy")
    return written


def load_embeddings(out_dir: str | os.PathLike[str]) -> dict[str, np.ndarray]:
    """Read the ``<ntype>.npy`` tables written by :func:`save_embeddings` (memory-mapped).

    Raises:
        FormatError: the folder has no ``.npy`` table.
    """
    files = sorted(Path(out_dir).glob("*.npy"))
    if not files:
        raise FormatError(f"{out_dir}: no <ntype>.npy embedding tables", path=str(out_dir))
    return {f.stem: np.load(f, mmap_mode="r", allow_pickle=False) for f in files}
