"""CUDA relabelling of node IDs to a block's local IDs (the reindex of DGL's ``to_block``),
with the CPU kernel's order: ``dst_nodes`` first, then new sources in order of first
appearance.

Four passes over the items (``dst_nodes`` then ``src_ids``): insert every ID into an
open-addressing table (``atomic.cas`` on the key) and keep the smallest item index that
carries it (``atomic.min``); flag the items that are their ID's first; an exclusive scan
of the flags numbers the new nodes in item order; write the nodes and every source's
local ID.  The order never depends on the hash or on the threads, so the result equals
:func:`graphshard.sampling.kernels.block.relabel`'s.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import cuda

from ..._util.keyed import mix
from .device import THREADS, device_in, is_device, launch

__all__ = ["exclusive_scan", "make_block"]

_SCAN = 256  # items a block scans in shared memory
_BUF = 512  # its two buffers (a literal: the shape of a shared array is a constant)


@cuda.jit(device=True)
def _item(dst_nodes, src_ids, i):
    nd = dst_nodes.shape[0]
    return dst_nodes[i] if i < nd else src_ids[i - nd]


@cuda.jit
def _insert(dst_nodes, src_ids, table, first, slot, mask):
    i = cuda.grid(1)
    if i >= slot.shape[0]:
        return
    v = _item(dst_nodes, src_ids, i)
    h = np.int64(mix(np.uint64(v)) & np.uint64(mask))
    while True:
        old = cuda.atomic.cas(table, h, -1, v)
        if old == -1 or old == v:
            break
        h = (h + 1) & mask
    cuda.atomic.min(first, h, i)
    slot[i] = h


@cuda.jit
def _flag(first, slot, flags):
    i = cuda.grid(1)
    if i < slot.shape[0]:
        flags[i] = 1 if first[slot[i]] == i else 0


@cuda.jit
def _number(dst_nodes, src_ids, slot, flags, rank, nodes, local_of_slot):
    i = cuda.grid(1)
    if i < slot.shape[0] and flags[i] == 1:
        nodes[rank[i]] = _item(dst_nodes, src_ids, i)
        local_of_slot[slot[i]] = rank[i]


@cuda.jit
def _locals(nd, slot, local_of_slot, local):
    j = cuda.grid(1)
    if j < local.shape[0]:
        local[j] = local_of_slot[slot[nd + j]]


@cuda.jit
def _scan_tiles(x, out, sums):
    """Exclusive scan of each tile of ``_SCAN`` items (Hillis-Steele, double-buffered in
    shared memory); the tile's total into ``sums``."""
    buf = cuda.shared.array(_BUF, dtype=np.int64)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * _SCAN + tid
    v = x[i] if i < x.shape[0] else 0
    buf[tid] = v
    cuda.syncthreads()
    src = 0
    off = 1
    while off < _SCAN:
        y = buf[src * _SCAN + tid]
        if tid >= off:
            y += buf[src * _SCAN + tid - off]
        buf[(1 - src) * _SCAN + tid] = y
        cuda.syncthreads()
        src = 1 - src
        off *= 2
    incl = buf[src * _SCAN + tid]
    if i < x.shape[0]:
        out[i] = incl - v
    if tid == _SCAN - 1:
        sums[cuda.blockIdx.x] = incl


@cuda.jit
def _add_base(out, base):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] += base[i // _SCAN]


def exclusive_scan(x: Any) -> tuple[Any, int]:
    """Exclusive prefix sums of device int64 array ``x`` (a device array) and their total."""
    n = x.shape[0]
    out = cuda.device_array(n, dtype=np.int64)
    if n == 0:
        return out, 0
    tiles = (n + _SCAN - 1) // _SCAN
    sums = cuda.device_array(tiles, dtype=np.int64)
    _scan_tiles[tiles, _SCAN](x, out, sums)
    if tiles == 1:
        return out, int(sums.copy_to_host()[0])
    base, total = exclusive_scan(sums)
    _add_base[(n + THREADS - 1) // THREADS, THREADS](out, base)
    return out, total


def relabel(dst_nodes: Any, src_ids: Any) -> tuple[Any, Any]:
    """``(nodes, local)`` as the CPU ``relabel``: host arrays for host input, device arrays
    when both inputs live on the device."""
    on_device = is_device(dst_nodes) and is_device(src_ids)
    nd, ns = len(dst_nodes), len(src_ids)
    n = nd + ns
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    bits = 4
    while (1 << bits) < 2 * n:  # load factor <= 1/2
        bits += 1
    d_dst, d_src = device_in(dst_nodes), device_in(src_ids)
    table = cuda.to_device(np.full(1 << bits, -1, dtype=np.int64))
    first = cuda.to_device(np.full(1 << bits, n, dtype=np.int64))
    slot = cuda.device_array(n, dtype=np.int64)
    flags = cuda.device_array(n, dtype=np.int64)
    launch(_insert, n, d_dst, d_src, table, first, slot, (1 << bits) - 1)
    launch(_flag, n, first, slot, flags)
    rank, nu = exclusive_scan(flags)
    nodes = cuda.device_array(nu, dtype=np.int64)
    local_of_slot = cuda.device_array(1 << bits, dtype=np.int64)
    launch(_number, n, d_dst, d_src, slot, flags, rank, nodes, local_of_slot)
    local = cuda.device_array(ns, dtype=np.int64)
    launch(_locals, ns, nd, slot, local_of_slot, local)
    if on_device:
        return nodes, local
    return nodes.copy_to_host(), (local.copy_to_host() if ns else np.zeros(0, np.int64))


def make_block() -> dict[str, Any]:
    """The reindex kernel with the CPU signature (``relabel``)."""
    return {"relabel": relabel}
