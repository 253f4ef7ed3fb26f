"""CUDA kernels for random walks (uniform, weighted, metapath, restarts) and node2vec: one
thread per walk, stepping through the whole trace.

Walk ``w`` draws from ``item_state(seed, salt, keys[w])`` exactly as
:mod:`graphshard.sampling.kernels.walks` does: draws ``2t`` and ``2t + 1`` pick step ``t``
(the second one the alias coin), draw ``2**40 + t`` decides a restart, and node2vec's
proposals and acceptances take draws ``4096 t + 2a`` and ``4096 t + 2a + 1``; so traces are
the same on the CPU and the GPU.  Rows are sorted for node2vec by the CPU ``sort_rows``
(a table built once per store, copied to the device once).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import cuda

from ..kernels import alias as cpu_alias
from ..kernels import walks as cpu_walks
from ..kernels.rng import item_state, uniform
from ..kernels.walks import _RESTART
from .device import DeviceCache, device_in, device_out, device_twin, launch

__all__ = ["make_walks"]

_S32 = np.uint64(32)

# the CPU's step functions, compiled for the device: one body for both backends
_next = device_twin(cpu_walks._next, alias_draw=device_twin(cpu_alias.alias_draw))
_n2v_next = device_twin(cpu_walks._n2v_next, _has_edge=device_twin(cpu_walks._has_edge))



@cuda.jit
def _walk(indptr, indices, rec, nnz, weighted, row_base, starts, keys, restart_prob, walk_len,
          seed, salt, out):
    w = cuda.grid(1)
    if w >= starts.shape[0]:
        return
    m = row_base.shape[0]
    st = np.uint64(item_state(seed, salt, keys[w]))
    v = starts[w]
    out[w, 0] = v
    for t in range(1, walk_len):
        nv = -1
        if v >= 0:
            r = row_base[(t - 1) % m] + v
            if indptr[r + 1] > indptr[r] and not (
                    restart_prob > 0 and uniform(st, _RESTART + t) < restart_prob):
                nv = _next(indptr, indices, rec, nnz, weighted, r, st, t)
        out[w, t] = nv
        v = nv


@cuda.jit
def _walk_step(indptr, indices, rec, nnz, weighted, rows, keys, restart_prob, t, seed, salt,
               out):
    w = cuda.grid(1)
    if w >= rows.shape[0]:
        return
    if rows[w] < 0:
        out[w] = -1
        return
    st = np.uint64(item_state(seed, salt, keys[w]))
    if restart_prob > 0 and uniform(st, _RESTART + t) < restart_prob:
        out[w] = -1
        return
    out[w] = _next(indptr, indices, rec, nnz, weighted, rows[w], st, t)




@cuda.jit
def _node2vec_walk(indptr, sorted_indices, starts, keys, p, q, wmax, walk_len, seed, salt,
                   out):
    w = cuda.grid(1)
    if w >= starts.shape[0]:
        return
    st = np.uint64(item_state(seed, salt, keys[w]))
    out[w, 0] = starts[w]
    for t in range(1, walk_len):
        cur = out[w, t - 1]
        if cur < 0:
            out[w, t] = -1
            continue
        prev = out[w, t - 2] if t >= 2 else -1
        out[w, t] = _n2v_next(indptr, sorted_indices, cur, indptr, sorted_indices, prev, prev,
                              st, t, p, q, wmax)


@cuda.jit
def _node2vec_step(indptr, sorted_indices, rows, pindptr, psorted, prows, prevs, keys, p, q,
                   wmax, t, seed, salt, out):
    w = cuda.grid(1)
    if w >= rows.shape[0]:
        return
    if rows[w] < 0:
        out[w] = -1
        return
    st = np.uint64(item_state(seed, salt, keys[w]))
    out[w] = _n2v_next(indptr, sorted_indices, rows[w], pindptr, psorted, prows[w], prevs[w],
                       st, t, p, q, wmax)


def _wmax(p: float, q: float) -> float:
    """``max(1/p, 1, 1/q)``, as the CPU kernels compute it (IEEE division either way)."""
    return max(1.0 / p, 1.0, 1.0 / q)


def make_walks(cache: DeviceCache) -> dict[str, Any]:
    """The walk kernels with the CPU signatures (``walk``, ``walk_step``, ``node2vec_walk``,
    ``node2vec_step``)."""

    def walk(indptr: Any, indices: Any, rec: Any, nnz: Any, weighted: bool, row_base: Any,
             starts: Any, keys: Any, restart_prob: float, walk_len: int, seed: int, salt: int,
             out: Any) -> None:
        d_out, host = device_out(out)
        launch(_walk, len(starts), cache.get(indptr), cache.get(indices), cache.get(rec),
               cache.get(nnz), weighted, cache.get(row_base), device_in(starts),
               device_in(keys), float(restart_prob), walk_len, seed, salt, d_out)
        if host is not None and len(starts):
            d_out.copy_to_host(host)

    def walk_step(indptr: Any, indices: Any, rec: Any, nnz: Any, weighted: bool, rows: Any,
                  keys: Any, restart_prob: float, t: int, seed: int, salt: int,
                  out: Any) -> None:
        d_out, host = device_out(out)
        launch(_walk_step, len(rows), cache.get(indptr), cache.get(indices), cache.get(rec),
               cache.get(nnz), weighted, device_in(rows), device_in(keys),
               float(restart_prob), t, seed, salt, d_out)
        if host is not None and len(rows):
            d_out.copy_to_host(host)

    def node2vec_walk(indptr: Any, sorted_indices: Any, starts: Any, keys: Any, p: float,
                      q: float, walk_len: int, seed: int, salt: int, out: Any) -> None:
        d_out, host = device_out(out)
        launch(_node2vec_walk, len(starts), cache.get(indptr), cache.get(sorted_indices),
               device_in(starts), device_in(keys), float(p), float(q), _wmax(p, q), walk_len,
               seed, salt, d_out)
        if host is not None and len(starts):
            d_out.copy_to_host(host)

    def node2vec_step(indptr: Any, sorted_indices: Any, rows: Any, pindptr: Any,
                      psorted: Any, prows: Any, prevs: Any, keys: Any, p: float, q: float,
                      t: int, seed: int, salt: int, out: Any) -> None:
        d_out, host = device_out(out)
        launch(_node2vec_step, len(rows), cache.get(indptr), cache.get(sorted_indices),
               device_in(rows), cache.get(pindptr), cache.get(psorted), device_in(prows),
               device_in(prevs), device_in(keys), float(p), float(q), _wmax(p, q), t, seed,
               salt, d_out)
        if host is not None and len(rows):
            d_out.copy_to_host(host)

    return {"walk": walk, "walk_step": walk_step, "node2vec_walk": node2vec_walk,
            "node2vec_step": node2vec_step}
