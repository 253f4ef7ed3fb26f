"""A graph level stored as CSR shards on disk, built by streaming and bucketing edges.

Every level of the label-propagation hierarchy is a :class:`ShardedGraph`: node range
``bounds[b] .. bounds[b + 1]`` of the undirected weighted graph lives in shard ``b`` as
three ``.npy`` files (int64 ``indptr``, global ``indices`` and ``weights``, int32 when
they fit, else int64).  Shards are cut so that
each holds at most about ``budget`` entries (plus one row), whatever the graph size.

Building a level is an external bucket sort in two task kinds:

* a *piece* task turns one batch of edges (an input chunk, or one shard mapped through a
  clustering) into ``(key = u * n + v, weight)`` bucketed by target shard, with the
  offsets of each shard's slice (:func:`write_piece`; a counting sort over the shards,
  linear in the entries);
* a *shard* task reads its slice of every piece (memory-mapped) and groups them into its
  CSR, merging repeats (:func:`build_shard`; a counting sort by row,
  :func:`~graphshard.partition.lp.kernels.levels.group_keys`, linear in entries plus rows).

No comparison sort of the edges.

No task ever holds more than one chunk or one shard of edges; the driver holds per-node
arrays only.  The functions here are pure (paths and arrays in, small results out), so
they run unchanged in a loop, on threads or as Ray tasks.

A level's folder is a local path (every worker sees it: one node or a shared file
system), or, when lp's work folder is a URI, ``<work URI>#<level>``: a task then writes
its files in its node-local cache and uploads them with a done-marker (size and SHA-256
of each file, written last), and a task reading them fetches a checked copy once per
process (:class:`~graphshard.storage.workstore.WorkStore`).  No folder is shared
between nodes; a local folder is read and written in place, as before.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from ...io.chunked import ChunkedMeta, read_edge_chunk
from ...storage import fsys
from ...storage.files import load_npy
from ...storage.scratch import save_npy
from ...storage.workstore import WorkStore
from ...typing import EdgeType, IdArray
from ..adjacency import Adjacency
from ..balance import needed_moves, rebalance_candidates
from .kernels.levels import (
    bucket_entries,
    contract_entries,
    group_keys,
    keep_heavy,
    range_cuts,
    sort_rows,
    weight_histogram,
)
from .kernels.sweep import TABLE_ROW, favourite_labels, lp_sweep, shard_cut

__all__ = [
    "SHARD_FILES",
    "ShardedGraph",
    "build_shard",
    "chunk_piece",
    "contract_piece",
    "cut_task",
    "drop",
    "favourite_task",
    "fetched",
    "gather",
    "heavy_entries_task",
    "histogram_task",
    "load_shard",
    "local_prefix",
    "narrow",
    "publish",
    "rebalance_task",
    "release_scratch",
    "shard_bounds",
    "sweep_task",
    "write_piece",
]


@dataclass(frozen=True)
class ShardedGraph:
    """One level of the hierarchy.

    Attributes:
        directory: Folder of the shard files: a local path, or ``<work URI>#<level>``.
        bounds: int64 ``num_shards + 1`` node boundaries.
        node_weights: ``(num_nodes, C)`` weights of every node, one column per balance
            constraint (nodes; in-edges with ``balance_edges``); int32 when the column
            totals fit (:func:`~graphshard.partition.lp.levels.compact_ints`), else int64.
        degrees: stored entries of every node (int32 or int64 alike).
    """

    directory: Path | str
    bounds: IdArray
    node_weights: IdArray
    degrees: IdArray

    @property
    def num_nodes(self) -> int:
        """Nodes of this level."""
        return int(self.bounds[-1])

    @property
    def num_shards(self) -> int:
        """Shards of this level."""
        return len(self.bounds) - 1

    @property
    def num_entries(self) -> int:
        """Stored entries (twice the undirected edges)."""
        return int(self.degrees.sum())

    def shard(self, b: int) -> tuple[str, int]:
        """``(path prefix, first row)`` of shard ``b``: the arguments of the shard tasks."""
        return f"{self.directory}/shard{b}", int(self.bounds[b])

    def __repr__(self) -> str:
        return (f"ShardedGraph(num_nodes={self.num_nodes}, num_entries={self.num_entries}, "
                f"num_shards={self.num_shards})")


def _store(prefix: str) -> tuple[WorkStore, str]:
    """The remote work folder of ``<work URI>#<level>/<name>`` and ``<level>/<name>``
    (``#`` separates them: the URI may end in a query string)."""
    root, rel = prefix.rsplit("#", 1)
    return WorkStore(root), rel


def local_prefix(prefix: str) -> str:
    """Where a task writes the files of ``prefix``: the prefix itself when local, else
    its place in this process's node-local cache of the remote work folder.

    Example:
        >>> local_prefix("/tmp/lp/level0/shard1")
        '/tmp/lp/level0/shard1'
    """
    if not fsys.is_remote(prefix):
        return prefix
    store, rel = _store(prefix)
    return str(store.path(rel))


def publish(prefix: str, names: tuple[str, ...]) -> None:
    """Files ``<prefix>_<name>.npy`` written at :func:`local_prefix` are finished: a
    remote work folder gets them, then their done-marker (on the first name); local:
    nothing to do (the files are in place)."""
    if fsys.is_remote(prefix):
        store, rel = _store(prefix)
        store.finish([f"{rel}_{n}.npy" for n in names], "lp", None)


def fetched(prefix: str, name: str, first: str) -> str:
    """A local path of the finished file ``<prefix>_<name>.npy`` (``first``: the name its
    done-marker goes with): the file itself when local, else this process's checked copy.

    Example:
        >>> fetched("/tmp/lp/level0/piece2", "off", "keys")
        '/tmp/lp/level0/piece2_off.npy'
    """
    if not fsys.is_remote(prefix):
        return f"{prefix}_{name}.npy"
    store, rel = _store(prefix)
    return str(store.fetch(f"{rel}_{name}.npy", marker=f"{rel}_{first}.npy"))


def drop(prefix: str, name: str) -> None:
    """Drop this process's copy of ``<prefix>_<name>.npy`` (remote only: a local file
    stays where it is)."""
    if fsys.is_remote(prefix):
        store, rel = _store(prefix)
        store.release(f"{rel}_{name}.npy")


def shard_bounds(sizes: IdArray, budget: int) -> IdArray:
    """Cut rows with ``sizes`` entries into consecutive ranges of about ``budget`` entries.

    Each range holds at most ``budget + max(sizes)`` entries; there is at least one range.

    Example:
        >>> shard_bounds(np.array([3, 3, 3, 3, 0]), 6).tolist()
        [0, 2, 4, 5]
    """
    if len(sizes) == 0:
        return np.zeros(2, dtype=np.int64)
    return range_cuts(np.asarray(sizes), np.int64(max(1, int(budget))))


def write_piece(prefix: str, u: IdArray, v: IdArray, w: IdArray | None, num_nodes: int,
                bounds: IdArray, pool: str | None = None) -> int:
    """Save edges ``u -> v`` bucketed by the shard of their row (``bounds``).

    Writes ``<prefix>_keys.npy`` (``u * num_nodes + v``, grouped by shard, in input order
    inside a shard), ``_w.npy`` (not for unit weights, ``w`` None) and ``_off.npy``
    (slice of every shard).  Repeats are merged by the shard task (:func:`build_shard`),
    which groups its rows anyway: a piece costs O(entries), not a pass over every node
    of the level.  Files are written over freed ones from ``pool`` when it has some
    (:func:`~graphshard.storage.scratch.save_npy`).  Returns the number of entries written.
    """
    keys, weights, off = bucket_entries(
        np.ascontiguousarray(u, dtype=np.int64), np.ascontiguousarray(v, dtype=np.int64),
        np.zeros(0, np.int64) if w is None else np.ascontiguousarray(w, dtype=np.int64),
        np.int64(num_nodes), np.ascontiguousarray(bounds, dtype=np.int64))
    _save_piece(prefix, keys, None if w is None else weights, off, pool)
    return len(keys)


def _save_piece(prefix: str, keys: IdArray, weights: IdArray | None, off: IdArray,
                pool: str | None) -> None:
    """Write a piece: ``_keys``, ``_w`` (unless None) and ``_off`` files in a local folder;
    in a remote one, ``_off`` and a ``_keys<b>`` (``_w<b>``) file per shard ``b`` with
    entries, so that a shard task copies its own slices only, marker on ``_off``."""
    local = local_prefix(prefix)
    columns = [("keys", keys)] + ([] if weights is None else [("w", weights)])
    if not fsys.is_remote(prefix):
        for name, arr in columns:
            save_npy(f"{local}_{name}.npy", arr, pool)
        save_npy(local + "_off.npy", off, pool)
        return
    save_npy(local + "_off.npy", off)
    names = ["off"]
    for b in np.flatnonzero(np.diff(off)).tolist():
        for name, arr in columns:
            save_npy(f"{local}_{name}{b}.npy", arr[off[b]:off[b + 1]])
            names.append(f"{name}{b}")
    publish(prefix, tuple(names))


def chunk_piece(prefix: str, meta: ChunkedMeta, etype: EdgeType, index: int, offset: int,
                src_offset: int, dst_offset: int, num_nodes: int, bounds: IdArray,
                pool: str | None = None) -> int:
    """A piece of the level-0 graph from edge chunk ``index`` of ``etype``, read here (the
    driver never ships edges), both directions; ``src_offset`` / ``dst_offset``: the
    homogeneous ID of the first node of the edge type's source / destination type."""
    chunk = read_edge_chunk(meta, etype, index, offset)
    src, dst = chunk.src + src_offset, chunk.dst + dst_offset
    del chunk
    keep = src != dst
    s, d = src[keep], dst[keep]
    return write_piece(prefix, np.concatenate([s, d]), np.concatenate([d, s]), None,
                       num_nodes, bounds, pool)


def load_shard(prefix: str) -> tuple[IdArray, IdArray, IdArray]:
    """``(indptr, indices, weights)`` of one shard, memory-mapped."""
    return tuple(load_npy(fetched(prefix, n, "indptr"), mmap_mode="r")
                 for n in ("indptr", "indices", "weights"))


def contract_piece(shard_prefix: str, lo: int, piece_prefix: str, num_coarse: int,
                   coarse_bounds: IdArray, *, clusters: IdArray, pool: str | None = None
                   ) -> int:
    """Map one shard through ``clusters`` (fine -> coarse node) into a coarse-level piece.

    Entries inside a cluster vanish; parallel coarse entries merge, summing weights, in
    :func:`build_shard`.  Writes the files of :func:`write_piece` (over ``pool``'s).
    """
    indptr, indices, weights = (np.asarray(a) for a in load_shard(shard_prefix))
    keys, w, off = contract_entries(indptr, indices, weights, lo, clusters,
                                    np.int64(num_coarse),
                                    np.ascontiguousarray(coarse_bounds, dtype=np.int64))
    del indptr, indices, weights
    _save_piece(piece_prefix, keys, w, off, pool)
    return len(keys)


def build_shard(piece_prefixes: list[str], b: int, lo: int, hi: int, num_nodes: int,
                out_prefix: str, unit_weights: bool = False, pool: str | None = None
                ) -> IdArray:
    """Merge slice ``b`` of every piece into the CSR of rows ``lo .. hi``; returns degrees.
    ``unit_weights``: the pieces have no weights file (every entry weighs 1).  The files
    are written over ``pool``'s when it has some.

    Inside a row, neighbours keep their order of first appearance (piece order), which
    depends on how the input was chunked; nothing downstream depends on that order
    (ratings are sums, ties break by keyed hashes, :func:`gather` sorts the rows).
    """
    keys: list[np.ndarray] = []
    wts: list[np.ndarray] = []
    remote = fsys.is_remote(out_prefix)
    columns = ("keys",) if unit_weights else ("keys", "w")
    for p in piece_prefixes:
        off = load_npy(fetched(p, "off", "off"))
        if off[b + 1] <= off[b]:
            continue
        for name, out in zip(columns, (keys, wts), strict=False):
            if remote:  # this shard's own slice, copied once and dropped
                out.append(load_npy(fetched(p, f"{name}{b}", "off")))
                drop(p, f"{name}{b}")
            else:
                out.append(load_npy(fetched(p, name, "off"), mmap_mode="r")[off[b]:off[b + 1]])
    k = np.concatenate(keys) if keys else np.zeros(0, np.int64)
    w = np.zeros(0, np.int64) if unit_weights else \
        (np.concatenate(wts) if wts else np.zeros(0, np.int64))
    total_w = len(k) if unit_weights else int(w.sum())
    out_c = np.empty(len(k), dtype=np.int32 if num_nodes - 1 <= _INT32_MAX else np.int64)
    out_w = np.empty(len(k), dtype=np.int32 if total_w <= _INT32_MAX else np.int64)
    marker = _scratch("marker", (num_nodes,), np.dtype(np.int32 if len(k) < _INT32_MAX
                                                       else np.int64))
    indptr, count = group_keys(k, np.int64(lo), np.int64(num_nodes), w, hi - lo, marker,
                               out_c, out_w)
    del k, w
    weights = cast(IdArray, out_w[:count])
    local = local_prefix(out_prefix)
    save_npy(local + "_indptr.npy", indptr, pool)
    save_npy(local + "_indices.npy", out_c[:count], pool)
    save_npy(local + "_weights.npy",
             narrow(weights, int(weights.max()) if len(weights) else 0), pool)
    publish(out_prefix, SHARD_FILES)
    return np.diff(indptr)


#: the files of a shard, ``<prefix>_<name>.npy`` (the first names its done-marker)
SHARD_FILES = ("indptr", "indices", "weights")


_INT32_MAX = int(np.iinfo(np.int32).max)


def narrow(values: IdArray, top: int) -> IdArray:
    """``values`` (none above ``top``) as int32 when ``top`` fits, else as they are: a
    shard's files, and the page cache and disk they take, halve (the kernels sum into
    int64).

    Example:
        >>> narrow(np.array([3, 7]), 7).dtype, narrow(np.array([2**31]), 2**31).dtype
        (dtype('int32'), dtype('int64'))
    """
    return values.astype(np.int32, copy=False) if top <= _INT32_MAX else values


def gather(level: ShardedGraph, ex=None, max_entries: int | None = None, seed: int = 0
           ) -> Adjacency:
    """The whole level as one :class:`Adjacency`, every row's neighbours in ascending order
    (the in-memory backends see one canonical graph, however the input was chunked).

    With ``max_entries`` (and the executor ``ex``) a level with more entries is thinned
    first, in the shard tasks: the heaviest edges are kept, and a keyed random share of
    the weight class at the limit, so that about ``max_entries`` entries reach this
    process (the edges kept are symmetric).  The in-memory partitioner then sees the
    level's strongest connections, and the refinement on the way back up sees them all.
    """
    shards = [level.shard(b) for b in range(level.num_shards)]
    if max_entries is not None and level.num_entries > max_entries and ex is not None:
        hist = np.sum(ex.map(histogram_task, shards), axis=0)
        above = np.cumsum(hist[::-1])[::-1] - hist  # entries in heavier buckets
        bucket = int(np.flatnonzero(above <= max_entries)[0])
        share = min(1.0, (max_entries - above[bucket]) / max(1, hist[bucket]))
        kept = ex.map(heavy_entries_task, shards, shared={
            "bucket": bucket, "threshold": np.uint64(min(int(share * 2**64), 2**64 - 1)),
            "seed": seed})
        degrees = np.bincount(np.concatenate([x[0] for x in kept]),
                              minlength=level.num_nodes)  # rows come in ascending order
        indices = np.concatenate([x[1] for x in kept]).astype(np.int64, copy=False)
        weights = np.concatenate([x[2] for x in kept]).astype(np.int64, copy=False)
        del kept
    else:
        loaded = [load_shard(prefix) for prefix, _ in shards]
        indices = np.concatenate([np.asarray(p[1]) for p in loaded]).astype(np.int64)
        weights = np.concatenate([np.asarray(p[2]) for p in loaded]).astype(np.int64)
        degrees = level.degrees
    indptr = np.zeros(level.num_nodes + 1, dtype=np.int64)
    np.cumsum(degrees, out=indptr[1:])
    sort_rows(indptr, indices, weights)
    return Adjacency(indptr, indices, weights,
                     level.node_weights.reshape(level.num_nodes, -1).astype(np.int64))


def histogram_task(prefix: str, lo: int) -> IdArray:
    """Entries of one shard per ``floor(log2(weight))`` bucket."""
    return weight_histogram(np.asarray(load_shard(prefix)[2]))


def heavy_entries_task(prefix: str, lo: int, *, bucket: int, threshold: np.uint64,
                       seed: int) -> tuple[IdArray, IdArray, IdArray]:
    """:func:`~graphshard.partition.lp.kernels.levels.keep_heavy` on one shard."""
    indptr, indices, weights = (np.asarray(a) for a in load_shard(prefix))
    return keep_heavy(indptr, indices, weights, lo, bucket, threshold, np.uint64(seed))


_scratch_arrays = threading.local()


def _scratch(name: str, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """A zeroed-at-first array of ``shape`` kept by this thread for the next task (a view
    of the largest one asked under ``name`` and ``dtype``): per-node scratch allocated
    afresh at every task costs page faults (benchmarks/TUNING.md).  Kernels given
    a zeroed scratch must leave it zeroed (:func:`lp_sweep`'s ``rating``)."""
    cache: dict[Any, np.ndarray] = _scratch_arrays.__dict__
    key = (name, np.dtype(dtype).str, shape[1:])
    size = int(np.prod(shape))
    buf = cache.get(key)
    if buf is None or buf.size < size:
        cache[key] = buf = np.zeros(size, dtype=dtype)
    return buf[:size].reshape(shape)


def release_scratch() -> None:
    """Free the scratch arrays that tasks run on this thread kept (:func:`_scratch`)."""
    _scratch_arrays.__dict__.clear()


def sweep_task(prefix: str, lo: int, *, labels: IdArray, node_w: IdArray, label_w: IdArray,
               max_w: IdArray, seed: int, step: int, sub: int, num_sub: int,
               strict: bool, norm: float = 0.0, max_row: int = 0,
               snapshot: int | None = None) -> tuple[IdArray, IdArray, IdArray, int]:
    """:func:`~graphshard.partition.lp.kernels.sweep.lp_sweep` on one shard; returns the moves
    only, ``(nodes, new labels, gains)`` (the driver's memory goes with the moves, not
    with the nodes), and the visited rows' weight to other labels (``lp_sweep``'s
    ``external``).

    ``snapshot`` names the contents of ``labels`` and ``label_w`` (the same for every task
    of one map, new for each map; None: unnamed): a thread whose scratch already holds
    that snapshot skips copying it."""
    indptr, indices, weights = (np.asarray(a) for a in load_shard(prefix))
    live = _scratch("live", labels.shape, labels.dtype)
    lw = _scratch("lw", label_w.shape, label_w.dtype)
    held = _scratch_arrays.__dict__.pop("snapshot", None)  # unset while the kernel runs
    fresh = snapshot is None or held != (snapshot, live.shape, lw.shape)
    new, gains, external = lp_sweep(
        indptr, indices, weights, lo, labels, node_w, label_w, max_w, seed, step, sub,
        num_sub, strict, float(norm), live, lw,
        _scratch("rating", (len(label_w),), np.dtype(np.int64)), np.int64(max_row),
        TABLE_ROW, fresh)
    if snapshot is not None:
        _scratch_arrays.__dict__["snapshot"] = (snapshot, live.shape, lw.shape)
    moved = np.flatnonzero(new != labels[lo:lo + len(new)])
    nodes = cast(IdArray, (moved + lo).astype(np.int32 if len(labels) <= _INT32_MAX
                                               else np.int64))
    return nodes, new[moved], gains[moved], int(external)


def rebalance_task(prefix: str, lo: int, *, labels: IdArray, node_w: IdArray,
                   part_w: IdArray, max_w: IdArray, seed: int
                   ) -> tuple[IdArray, IdArray, IdArray, int]:
    """:func:`~graphshard.partition.balance.rebalance_candidates` on one shard, keeping
    only the moves that the driver could need (:func:`~graphshard.partition.balance.
    needed_moves`: at most each part's excess per shard, not every row of a heavy part)."""
    indptr, indices, weights = (np.asarray(a) for a in load_shard(prefix))
    rows, targets, gains, ties = rebalance_candidates(indptr, indices, weights, lo, labels,
                                                      node_w, part_w, max_w, seed)
    keep = np.sort(needed_moves(labels[rows], rows, gains, ties, node_w,
                                part_w - np.asarray(max_w)))
    return rows[keep], targets[keep], gains[keep], ties[keep]


def cut_task(prefix: str, lo: int, *, labels: IdArray) -> int:
    """Weighted entries of one shard between different labels."""
    indptr, indices, weights = (np.asarray(a) for a in load_shard(prefix))
    return int(shard_cut(indptr, indices, weights, lo, labels))


def favourite_task(prefix: str, lo: int, *, labels: IdArray, wanted: IdArray) -> IdArray:
    """:func:`~graphshard.partition.lp.kernels.sweep.favourite_labels` of the ``wanted`` rows of
    one shard, in row order (-1 for a row without edges)."""
    indptr, indices, weights = (np.asarray(a) for a in load_shard(prefix))
    fav = favourite_labels(indptr, indices, weights, lo, labels,
                           _scratch("rating", (len(labels),), np.dtype(np.int64)), wanted)
    return fav[np.asarray(wanted[lo:lo + len(fav)])]
