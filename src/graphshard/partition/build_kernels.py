"""Numba kernels of the build steps, in memory and out of core: number nodes by part,
route one edge chunk by owning part, localise one part's edges (its hop-1 halo).

Pure functions on arrays (STYLE §8): the callers (:mod:`~graphshard.partition.reshuffle`,
:mod:`~graphshard.partition.local_graphs`, the pipeline's ``route.py`` and ``parts.py``)
check dtypes and ID bounds first (numba does not bounds-check) and handle files.
"""

from __future__ import annotations

import numpy as np

from .._util.jit import kernel
from .._util.prefetch import prefetch
from ..errors import ValidationError
from ..typing import IdArray

__all__ = ["BITMAP_FREE_BYTES", "halo_of_part", "new_ids_of_block", "route_edges"]


#: Edges ahead whose node-map lines :func:`_route` prefetches (benchmarks/TUNING.md).
_AHEAD = 32


@kernel
def _route(src, dst, src_map, dst_map, ends, table, shift, out_src, out_dst, out_pos
           ):  # pragma: no cover - compiled
    """Counting sort of one chunk's edges by the part owning their new destination.

    ``ends[p]`` is the first new node ID after part ``p`` (non-decreasing); the owner of
    ``d`` is the first ``p`` with ``ends[p] > d`` (``searchsorted(ends, d, "right")``),
    found from ``table[d >> shift]`` (the owner of the first ID of ``d``'s block) and a few
    steps forward.  Writes new source/destination IDs and chunk positions grouped by owner,
    in chunk order inside each group (stable); returns the edge count of every part.
    """
    n = src.shape[0]
    k = ends.shape[0]
    owner = np.empty(n, dtype=np.int32)
    new_src = np.empty(n, dtype=out_src.dtype)
    new_dst = np.empty(n, dtype=out_dst.dtype)
    counts = np.zeros(k, dtype=np.int64)
    for i in range(n):
        if i + _AHEAD < n:                      # the map lookups are random: overlap misses
            prefetch(dst_map, dst[i + _AHEAD])
            prefetch(src_map, src[i + _AHEAD])
        d = dst_map[dst[i]]
        new_dst[i] = d
        new_src[i] = src_map[src[i]]
        o = table[d >> shift]
        while o < k - 1 and ends[o] <= d:       # bounded even for an ID beyond ends[-1]
            o += 1
        owner[i] = o
        counts[o] += 1
    cursor = np.empty(k, dtype=np.int64)
    start = 0
    for p in range(k):
        cursor[p] = start
        start += counts[p]
    for i in range(n):
        o = owner[i]
        j = cursor[o]
        cursor[o] = j + 1
        out_src[j] = new_src[i]
        out_dst[j] = new_dst[i]
        out_pos[j] = i
    return counts


def route_edges(src: np.ndarray, dst: np.ndarray, src_map: np.ndarray, dst_map: np.ndarray,
                ends: np.ndarray, id_dtype: type) -> tuple[np.ndarray, np.ndarray,
                                                           np.ndarray, np.ndarray]:
    """Map one chunk's edges to new IDs and group them by the part owning the destination.

    Args:
        src, dst: Original per-type IDs of the chunk's edges (int32/int64, already checked
            to lie in ``[0, len(src_map))`` and ``[0, len(dst_map))``).
        src_map, dst_map: Original per-type ID -> new homogeneous ID (int64), every value
            in ``[0, ends[-1])``.
        ends: ``ends[p]`` the end of part ``p``'s new node-ID range (non-decreasing).
        id_dtype: dtype of the returned IDs (``np.int32`` when every new ID fits).

    Returns:
        ``(counts, src, dst, pos)``: int64 edges per part; new IDs and positions in the
        chunk (int32 unless the chunk has 2**31 edges or more), grouped by part (part 0's
        first), chunk order inside a part.
    """
    n = len(src)
    ends = np.ascontiguousarray(ends, dtype=np.int64)
    total = int(ends[-1]) if len(ends) else 0
    shift = max(0, total.bit_length() - 12)             # at most 4096 blocks: stays in L1
    table = np.minimum(np.searchsorted(ends, np.arange((total >> shift) + 1, dtype=np.int64)
                                       << shift, side="right"), len(ends) - 1).astype(np.int32)
    out_src: np.ndarray = np.empty(n, dtype=id_dtype)
    out_dst: np.ndarray = np.empty(n, dtype=id_dtype)
    out_pos = np.empty(n, dtype=np.int32 if n <= np.iinfo(np.int32).max else np.int64)
    counts = _route(np.ascontiguousarray(src), np.ascontiguousarray(dst), np.asarray(src_map),
                    np.asarray(dst_map), ends, table, shift, out_src, out_dst, out_pos)
    return counts, out_src, out_dst, out_pos


@kernel
def new_ids_of_block(parts, starts):  # pragma: no cover - compiled
    """New ID of every node of one block: part ``p``'s nodes get ``starts[p]``,
    ``starts[p] + 1``, ... in block order (``parts`` checked to lie in ``[0, len(starts))``).
    """
    cursor = starts.copy()
    out = np.empty(parts.shape[0], dtype=np.int64)
    for i in range(parts.shape[0]):
        out[i] = cursor[parts[i]]
        cursor[parts[i]] += 1
    return out


@kernel
def _outside_keys(src, lo, hi):  # pragma: no cover - compiled
    """Make ``src`` local in place for sources inside ``[lo, hi)``; return the others as
    sort keys ``(global ID << 32) | position`` (uint64)."""
    n = src.shape[0]
    count = 0
    for i in range(n):
        if src[i] < lo or src[i] >= hi:
            count += 1
    keys = np.empty(count, dtype=np.uint64)
    j = 0
    for i in range(n):
        v = src[i]
        if v < lo or v >= hi:
            keys[j] = (np.uint64(v) << np.uint64(32)) | np.uint64(i)
            j += 1
        else:
            src[i] = v - lo
    return keys


@kernel
def _number_halo(keys, num_inner, src):  # pragma: no cover - compiled
    """From sorted keys: the distinct global IDs (the halo, ascending), and ``src`` at each
    key's position set to ``num_inner`` + the rank of its ID in the halo."""
    halo = np.empty(keys.shape[0], dtype=np.int64)
    h = -1
    prev = np.uint64(0)
    mask = np.uint64(0xFFFFFFFF)
    for j in range(keys.shape[0]):
        v = keys[j] >> np.uint64(32)
        if h < 0 or v != prev:
            h += 1
            halo[h] = np.int64(v)
            prev = v
        src[np.int64(keys[j] & mask)] = num_inner + h
    return halo[:h + 1].copy()


@kernel(inline=True)
def _popcount(x):  # pragma: no cover - compiled
    """Set bits of a uint64 (SWAR)."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@kernel
def _halo_bitmap(src, lo, hi, num_nodes):  # pragma: no cover - compiled
    """Halo by a bitmap over all node IDs: mark the outside sources, rank them by popcounts
    (``rank[w]`` = marked IDs in the words before ``w``), then make ``src`` local in place.
    Returns ``(halo, cut)``: the marked IDs ascending, and the count of outside edges."""
    n = src.shape[0]
    words = (num_nodes + 63) >> 6
    bits = np.zeros(words, dtype=np.uint64)
    one = np.uint64(1)
    cut = 0
    for i in range(n):
        v = src[i]
        if v < lo or v >= hi:
            bits[v >> 6] |= one << np.uint64(v & 63)
            cut += 1
    rank = np.empty(words, dtype=np.int64)
    total = 0
    for w in range(words):
        rank[w] = total
        total += _popcount(bits[w])
    halo = np.empty(total, dtype=np.int64)
    h = 0
    for w in range(words):
        b = bits[w]
        while b:
            halo[h] = (w << 6) + _popcount((b & (~b + one)) - one)
            h += 1
            b &= b - one
    num_inner = hi - lo
    for i in range(n):
        v = src[i]
        if v < lo or v >= hi:
            below = bits[v >> 6] & ((one << np.uint64(v & 63)) - one)
            src[i] = num_inner + rank[v >> 6] + _popcount(below)
        else:
            src[i] = v - lo
    return halo, cut


#: Largest bitmap (bytes per graph node: 1/4) :func:`halo_of_part` uses without checking it
#: against the part's size; bigger graphs take it only when it stays below one int64 per edge.
BITMAP_FREE_BYTES = 1 << 24


def halo_of_part(src: IdArray, lo: int, hi: int, num_nodes: int, *,
                 method: str | None = None) -> tuple[IdArray, int] | None:
    """Hop-1 halo of a part owning new node IDs ``[lo, hi)``, localising ``src`` in place.

    Args:
        src: int64 global new source IDs of the part's inner edges, in ``[0, num_nodes)``;
            on return, local IDs (inner node ``v`` -> ``v - lo``, halo node -> ``hi - lo``
            + its rank in the halo).
        num_nodes: Number of nodes of the graph.
        method: ``"bitmap"`` (a bit and a count per 64 nodes of the whole graph: fast,
            ``num_nodes / 4`` bytes), ``"sort"`` (one sort of the outside sources packed
            with their positions: memory by the part alone) or None to pick: the bitmap
            when it is at most :data:`BITMAP_FREE_BYTES` or an int64 per edge.

    Returns:
        ``(halo, cut)``: sorted distinct sources outside the part (int64, a new array) and
        the number of edges whose source is outside; None (``src`` untouched) when the
        sort keys cannot hold the IDs or positions (beyond 2**32).

    Raises:
        ValidationError: a source ID is outside ``[0, num_nodes)``, or an unknown method.
    """
    if len(src) and (int(src.min()) < 0 or int(src.max()) >= num_nodes):
        bad = int(np.flatnonzero((src < 0) | (src >= num_nodes))[0])
        raise ValidationError(f"halo_of_part: source {src[bad]} at position {bad} is outside "
                              f"[0, {num_nodes})", field="src", value=int(src[bad]))
    if method is None:
        method = "bitmap" if num_nodes // 4 <= max(BITMAP_FREE_BYTES, 8 * len(src)) else "sort"
    if method == "bitmap":
        halo, cut = _halo_bitmap(src, lo, hi, num_nodes)
        return halo, int(cut)
    if method != "sort":
        raise ValidationError(f"halo_of_part: method {method!r}; expected 'bitmap', 'sort' "
                              "or None", field="method", value=method)
    if len(src) >= 1 << 32 or num_nodes > 1 << 32:
        return None
    keys = _outside_keys(src, lo, hi)
    keys.sort()
    return _number_halo(keys, hi - lo, src), len(keys)
