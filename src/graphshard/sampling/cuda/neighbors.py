"""CUDA kernels for one-hop neighbour sampling, uniform and weighted: one thread per row.

The draws are those of :mod:`graphshard.sampling.kernels.neighbors` and
:mod:`~graphshard.sampling.kernels.weighted` (the same keyed ``item_state`` / ``randint`` /
``draw``, called from the kernels as device functions), and every row's edges come out in
the same order, so a seeded sample is the same on the CPU and the GPU.  Uniform without
replacement: Floyd's algorithm up to ``_FLOYD_MAX`` picks, past that the CPU's partial
Fisher-Yates shuffle replayed on a sparse map (a thread cannot hold ``range(deg)``).
Weighted: with replacement the alias draws of ``alias_draw``; without replacement rows
taken whole, and the rejection and exponential-key paths of the CPU kernel for the others
(:mod:`.weighted`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import cuda

from ..kernels import neighbors as cpu_neighbors
from ..kernels.alias import _TMASK
from ..kernels.neighbors import _FLOYD_MAX, row_yield
from ..kernels.rng import draw, item_state, randint
from .device import DeviceCache, device_in, device_out, device_twin, launch
from .weighted import partial_row

__all__ = ["make_neighbors"]

_floyd = device_twin(cpu_neighbors._floyd)  # the CPU's body: the same subsets

_S32 = np.uint64(32)


@cuda.jit
def _counts(indptr, nnz, rows, k, replace, out):
    i = cuda.grid(1)
    if i < rows.shape[0]:
        r = rows[i]
        d = indptr[r + 1] - indptr[r] if nnz.shape[0] == 0 else nnz[r]
        out[i] = row_yield(d, k, replace)



@cuda.jit(device=True)
def _shuffle(pos, o, c, d, st, side_k, side_v):
    """The first ``c`` entries of the CPU's partial Fisher-Yates shuffle of ``range(d)``:
    positions below ``c`` live in ``pos[o:o+c]``, the others touched in a sparse map
    ``side_k``/``side_v[o:o+c]`` (at most one new entry a step)."""
    for t in range(c):
        pos[o + t] = t
    ns = 0
    for t in range(c):
        x = t + randint(st, t, d - t)
        vt = pos[o + t]
        if x < c:
            vx = pos[o + x]
            pos[o + x] = vt
        else:
            slot = -1
            for q in range(ns):
                if side_k[o + q] == x:
                    slot = q
            if slot >= 0:
                vx = side_v[o + slot]
                side_v[o + slot] = vt
            else:
                vx = x
                side_k[o + ns] = x
                side_v[o + ns] = vt
                ns += 1
        pos[o + t] = vx


@cuda.jit(device=True)
def _gather(indices, eids, start, o, c, out_src, out_eid):
    """Row positions ``out_eid[o:o+c]`` of the row at ``start`` -> neighbours, edge IDs."""
    for j in range(o, o + c):
        p = start + out_eid[j]
        out_src[j] = indices[p]
        out_eid[j] = eids[p]


@cuda.jit
def _fill_uniform(indptr, indices, eids, rows, keys, offsets, k, replace, seed, salt,
                  side_k, side_v, out_src, out_eid):
    i = cuda.grid(1)
    if i >= rows.shape[0]:
        return
    start = indptr[rows[i]]
    d = indptr[rows[i] + 1] - start
    o = offsets[i]
    c = offsets[i + 1] - o
    if c == 0:
        return
    if k < 0 or (not replace and c >= d):
        for j in range(c):
            out_eid[o + j] = j
    else:
        st = np.uint64(item_state(seed, salt, keys[i]))
        if replace:
            for j in range(c):
                out_eid[o + j] = randint(st, j, d)
        elif c <= _FLOYD_MAX:
            _floyd(out_eid, o, c, d, st)
        else:
            _shuffle(out_eid, o, c, d, st, side_k, side_v)
    _gather(indices, eids, start, o, c, out_src, out_eid)


@cuda.jit(device=True)
def _whole(invw, start, d, o, c, pos):
    """As the CPU ``_whole``: the row's positive-weight positions (row order), then those
    whose weight the alias records read as 0, up to ``c``."""
    if c == d:
        for j in range(c):
            pos[o + j] = j
        return
    t = 0
    for j in range(d):
        if invw[start + j] < np.inf and t < c:
            pos[o + t] = j
            t += 1
    for j in range(d):
        if invw[start + j] == np.inf and t < c:
            pos[o + t] = j
            t += 1


@cuda.jit
def _fill_weighted(indptr, indices, eids, rec, nnz, invw, rows, keys, offsets, k, replace,
                   seed, salt, out_src, out_eid):
    i = cuda.grid(1)
    if i >= rows.shape[0]:
        return
    r = rows[i]
    start = indptr[r]
    d = indptr[r + 1] - start
    o = offsets[i]
    c = offsets[i + 1] - o
    if c == 0:
        return
    if replace and k >= 0:
        st = np.uint64(item_state(seed, salt, keys[i]))
        for a in range(c):  # alias_draw's two draws, 2a and 2a + 1
            j = randint(st, 2 * a, d)
            v = rec[start + j]
            keep = np.int64(draw(st, 2 * a + 1) >> _S32) < (v & _TMASK)
            out_eid[o + a] = j if keep else v >> 33
    elif k >= 0 and c < (d if nnz.shape[0] == 0 else nnz[r]):
        st = np.uint64(item_state(seed, salt, keys[i]))
        partial_row(rec, invw, start, d, o, c, st, out_eid)
    else:
        _whole(invw, start, d, o, c, out_eid)
    _gather(indices, eids, start, o, c, out_src, out_eid)


def make_neighbors(cache: DeviceCache) -> dict[str, Any]:
    """The one-hop kernels of the backend, as host-facing functions with the CPU
    signatures (``sample_counts``, ``weighted_counts``, ``fill_uniform``,
    ``fill_weighted``)."""
    none = np.zeros(0, dtype=np.int64)

    def counts(indptr: Any, nnz: Any, rows: Any, k: int, replace: bool) -> Any:
        d_out, host = device_out(np.empty(len(rows), dtype=np.int64))
        launch(_counts, len(rows), cache.get(indptr), cache.get(nnz), device_in(rows), k,
               replace, d_out)
        return d_out.copy_to_host(host) if len(rows) else host

    def sample_counts(indptr: Any, rows: Any, k: int, replace: bool) -> Any:
        return counts(indptr, none, rows, k, replace)

    def weighted_counts(indptr: Any, nnz: Any, rows: Any, k: int, replace: bool) -> Any:
        return counts(indptr, nnz, rows, k, replace)

    def fill_uniform(indptr: Any, indices: Any, eids: Any, rows: Any, keys: Any,
                     offsets: Any, k: int, replace: bool, seed: int, salt: int,
                     out_src: Any, out_eid: Any) -> None:
        n = len(rows)
        if n == 0 or len(out_src) == 0:
            return
        big = not replace and k > _FLOYD_MAX
        side_k = cuda.device_array(len(out_src) if big else 1, dtype=np.int64)
        side_v = cuda.device_array(len(out_src) if big else 1, dtype=np.int64)
        d_src, h_src = device_out(out_src)
        d_eid, h_eid = device_out(out_eid)
        launch(_fill_uniform, n, cache.get(indptr), cache.get(indices), cache.get(eids),
               device_in(rows), device_in(keys), device_in(offsets), k, replace, seed, salt,
               side_k, side_v, d_src, d_eid)
        _back(d_src, h_src, d_eid, h_eid)

    def fill_weighted(indptr: Any, indices: Any, eids: Any, rec: Any, nnz: Any, invw: Any,
                      rows: Any, keys: Any, offsets: Any, k: int, replace: bool, seed: int,
                      salt: int, out_src: Any, out_eid: Any) -> None:
        n = len(rows)
        if n == 0 or len(out_src) == 0:
            return
        d_src, h_src = device_out(out_src)
        d_eid, h_eid = device_out(out_eid)
        launch(_fill_weighted, n, cache.get(indptr), cache.get(indices), cache.get(eids),
               cache.get(rec), cache.get(nnz), cache.get(invw), device_in(rows),
               device_in(keys), device_in(offsets), k, replace, seed, salt, d_src, d_eid)
        _back(d_src, h_src, d_eid, h_eid)

    return {"sample_counts": sample_counts, "weighted_counts": weighted_counts,
            "fill_uniform": fill_uniform, "fill_weighted": fill_weighted}


def _back(*pairs: Any) -> None:
    """Copy each (device, host) pair of ``pairs`` back (host None: it stays on device)."""
    for d, h in zip(pairs[::2], pairs[1::2], strict=True):
        if h is not None:
            d.copy_to_host(h)
