"""Build the levels of the label-propagation hierarchy: level 0 from chunked edge files,
each coarser level by contracting clusters of the one below.

Both builders stream: the driver reads one edge chunk at a time (or hands each task one
shard) and keeps per-node arrays only; see :mod:`graphshard.partition.lp.shards`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..._util.progress import progress_bar
from ...io.chunked import ChunkedMeta, iter_edge_chunks
from ...runtime.executor import Executor
from ...storage import fsys
from ...storage.scratch import ScratchPool
from ...typing import EdgeType, IdArray
from ..balance import weight_sums
from .kernels.levels import accumulate_degrees
from .shards import ShardedGraph, build_shard, chunk_piece, contract_piece, shard_bounds

__all__ = ["Level0Degrees", "compact_ints", "contract_level", "level0_degrees",
           "level0_from_chunks", "type_offsets"]


def compact_ints(values: IdArray) -> IdArray:
    """``values`` as int32 when every value and their sum fit (per-node arrays of a level:
    half the driver's memory), else int64.

    Example:
        >>> compact_ints(np.array([1, 2])).dtype, compact_ints(np.array([2**31, 0])).dtype
        (dtype('int32'), dtype('int64'))
    """
    values = np.asarray(values)
    fits = values.size == 0 or (int(values.min()) >= 0 and
                                int(values.sum(axis=0, dtype=np.int64).max()) < 2**31 - 1)
    return values.astype(np.int32 if fits else np.int64, copy=False)


def count_dtype(total: int) -> type:
    """int32 when counts that sum to at most ``total`` fit it (as :func:`compact_ints`
    would keep them), else int64: per-node arrays are born compact, not copied to it.

    Example:
        >>> count_dtype(10**9).__name__, count_dtype(2**31).__name__
        ('int32', 'int64')
    """
    return np.int32 if total < 2**31 - 1 else np.int64


def type_offsets(meta: ChunkedMeta) -> dict[str, int]:
    """Homogeneous ID of the first node of every node type (types in declared order).

    Example:
        >>> import tempfile, graphshard as gs
        >>> from graphshard.io.chunked import load_chunked_meta
        >>> d = tempfile.mkdtemp()
        >>> gs.io.write_chunked(gs.heterograph({("a", "r", "b"): ([0], [1])}), d, 1)
        >>> type_offsets(load_chunked_meta(d))
        {'a': 0, 'b': 1}
    """
    out, total = {}, 0
    for nt, count in meta.num_nodes.items():
        out[nt] = total
        total += count
    return out


def _homogeneous_chunks(meta: ChunkedMeta
                        ) -> Iterator[tuple[EdgeType, int, int, IdArray, IdArray]]:
    """Every edge chunk of every edge type (checked), as ``(edge type, chunk index, offset,
    src, dst)`` with homogeneous int64 IDs."""
    off = type_offsets(meta)
    for et in meta.num_edges:
        for ch in iter_edge_chunks(meta, et):  # no shifted copies of type 0's IDs
            yield (et, ch.index, ch.offset, ch.src + off[et[0]] if off[et[0]] else ch.src,
                   ch.dst + off[et[2]] if off[et[2]] else ch.dst)


def _build_shards(pieces: list[str], bounds: IdArray, num_nodes: int, node_w: IdArray,
                  directory: Path | str, ex: Executor, pool: ScratchPool | None,
                  unit_weights: bool = False) -> ShardedGraph:
    calls = [(pieces, b, int(bounds[b]), int(bounds[b + 1]), num_nodes,
              f"{directory}/shard{b}", unit_weights, _folder(pool))
             for b in range(len(bounds) - 1)]
    degrees = ex.map(build_shard, calls)
    merged = [f"{p}_{part}.npy" for p in pieces
              for part in (("keys", "off") if unit_weights else ("keys", "w", "off"))]
    if fsys.is_remote(directory):  # lp's remote work folder is removed whole at the end
        pass
    elif pool is None:  # pieces are merged: free their disk space
        for path in merged:
            os.remove(path)
    else:  # ... or keep it for the next level's files to be written over
        pool.release(merged)
    deg = np.concatenate(degrees, dtype=count_dtype(sum(int(d.sum()) for d in degrees))) \
        if degrees else np.zeros(0, np.int64)
    return ShardedGraph(directory, bounds, compact_ints(node_w), compact_ints(deg))


@dataclass(frozen=True)
class Level0Degrees:
    """The first pass of :func:`level0_from_chunks`: entries per node (both directions,
    loops dropped), in-degrees (loops kept) and the edge chunks read, as
    ``(edge type, chunk index, offset)``."""

    degrees: IdArray
    in_degrees: IdArray
    chunks: list[tuple[EdgeType, int, int]]


def level0_degrees(meta: ChunkedMeta) -> Level0Degrees:
    """Stream every edge chunk once (checked) and count :class:`Level0Degrees`; GIL-free
    but for the reads, so it can run on a thread while Ray starts."""
    n = sum(meta.num_nodes.values())
    deg: IdArray = np.zeros(n, dtype=count_dtype(2 * sum(meta.num_edges.values())))
    indeg = np.zeros(n, dtype=deg.dtype)
    chunks = []
    with progress_bar(desc="lp: counting degrees", total=sum(meta.num_edges.values()),
                      unit="edge") as bar:
        for et, index, offset, src, dst in _homogeneous_chunks(meta):
            accumulate_degrees(deg, indeg, src, dst)
            chunks.append((et, index, offset))
            bar.update(len(src))
    return Level0Degrees(deg, indeg, chunks)


def _folder(pool: ScratchPool | None) -> str | None:
    return None if pool is None else str(pool.folder)


def _mkdir(directory: Path | str) -> None:
    """Create a local level folder (a remote one needs none: its files are uploaded)."""
    if not fsys.is_remote(directory):
        Path(directory).mkdir(parents=True, exist_ok=True)


def level0_from_chunks(meta: ChunkedMeta, directory: Path | str, budget: int,
                       ex: Executor, *, edge_weighted: bool = False,
                       pool: ScratchPool | None = None,
                       degrees: Level0Degrees | None = None) -> ShardedGraph:
    """The undirected input graph (all edge types, both directions, loops dropped, parallel
    edges merged into weights) as shards of about ``budget`` entries.

    Two streaming passes over the edge chunks: degrees in the driver (to cut the shards;
    :func:`level0_degrees`, or ``degrees`` when done already), then pieces, one task per
    chunk, each reading its chunk (the first pass checked it); the pieces hold no weights
    (every entry weighs 1 until the shards merge repeats).  Node weights have one column
    per balance constraint: 1 (the node), and with ``edge_weighted`` its in-degree too
    (the edges its owner stores).  The merged pieces go to ``pool`` if given (for later
    files to be written over; :mod:`graphshard.storage.scratch`), else are deleted.
    """
    _mkdir(directory)
    n = sum(meta.num_nodes.values())
    first = degrees if degrees is not None else level0_degrees(meta)
    off = type_offsets(meta)
    calls = [(f"{directory}/piece{i}", meta, et, index, offset, off[et[0]], off[et[2]],
              n) for i, (et, index, offset) in enumerate(first.chunks)]
    bounds = shard_bounds(first.degrees, budget)
    ex.map(chunk_piece, [(*c, bounds, _folder(pool)) for c in calls])
    pieces = [c[0] for c in calls]
    node_w: IdArray = np.ones((n, 2 if edge_weighted else 1),
                     dtype=count_dtype(max(n, sum(meta.num_edges.values()))))
    if edge_weighted:
        node_w[:, 1] = first.in_degrees
    del first, degrees
    return _build_shards(pieces, bounds, n, node_w, directory, ex, pool,
                         unit_weights=True)


def contract_level(level: ShardedGraph, clusters: IdArray, num_coarse: int,
                   directory: Path | str, budget: int, ex: Executor,
                   pool: ScratchPool | None = None) -> ShardedGraph:
    """Contract every cluster of ``level`` (``clusters``: fine node -> coarse ID) into a
    node weighing its members; coarse edge weights sum the fine ones between clusters
    (pieces released or deleted as by :func:`level0_from_chunks`)."""
    _mkdir(directory)
    bound = np.bincount(clusters, weights=level.degrees, minlength=num_coarse)
    bounds = shard_bounds(bound.astype(np.int64), budget)
    pieces = [f"{directory}/piece{b}" for b in range(level.num_shards)]
    ex.map(contract_piece, [(*level.shard(b), pieces[b], num_coarse, bounds)
                            for b in range(level.num_shards)],
           shared={"clusters": clusters, "pool": _folder(pool)})
    node_w = weight_sums(clusters, level.node_weights, num_coarse)
    return _build_shards(pieces, bounds, num_coarse, node_w, directory, ex, pool)
