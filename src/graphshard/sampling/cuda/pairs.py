"""CUDA kernels for training pairs: skip-gram windows over walks (one thread per walk) and
negative draws (one thread per draw).

Same windows, keys and output order as :mod:`graphshard.sampling.kernels.pairs`: walk ``i``
draws its random windows from ``item_state(seed, 0, keys[i])`` at step ``a`` (its centre),
negative ``j`` from ``item_state(seed, salt, j)``.  The alias and CDF tables are built on
the host (``alias_table``) and copied to the device once.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import cuda

from ..kernels import pairs as cpu_pairs
from ..kernels.rng import item_state, randint
from .device import DeviceCache, device_in, device_out, device_twin, launch

__all__ = ["make_pairs"]

_INV53 = 1.0 / 9007199254740992.0

_walk_pairs = device_twin(cpu_pairs._walk_pairs)  # the CPU's body: the same pairs



@cuda.jit
def _skipgram(walks, types, excl, keys, win, random_window, seed, offsets, src, dst, cols,
              counts, fill):
    i = cuda.grid(1)
    if i >= walks.shape[0]:
        return
    st = np.uint64(item_state(seed, 0, keys[i]))
    o = offsets[i] if fill else 0
    c = _walk_pairs(walks, types, excl, i, st, win, random_window, o, src, dst, cols, fill)
    if not fill:
        counts[i] = c


@cuda.jit
def _sample_cdf(cdf, count, seed, salt, out):
    j = cuda.grid(1)
    if j >= out.shape[0]:
        return
    st = np.uint64(item_state(seed, salt, j))
    n = cdf.shape[0]
    if n == 0:
        out[j] = randint(st, 0, count)
        return
    u = (np.float64(randint(st, 0, 1 << 53)) * _INV53) * cdf[n - 1]
    lo = 0
    hi = n
    while lo < hi:
        mid = (lo + hi) >> 1
        if cdf[mid] > u:
            hi = mid
        else:
            lo = mid + 1
    out[j] = min(lo, n - 1)


@cuda.jit
def _sample_alias(prob, alias, seed, salt, out):
    j = cuda.grid(1)
    if j >= out.shape[0]:
        return
    st = np.uint64(item_state(seed, salt, j))
    b = randint(st, 0, prob.shape[0])
    u = np.float64(randint(st, 1, 1 << 53)) * _INV53
    out[j] = b if u < prob[b] else alias[b]


def make_pairs(cache: DeviceCache) -> dict[str, Any]:
    """Pair and negative kernels with the CPU signatures (``skipgram_counts``,
    ``skipgram_fill``, ``sample_cdf``, ``sample_alias``)."""
    none = np.zeros(0, dtype=np.int64)
    none2 = np.zeros((0, 2), dtype=np.int64)

    def skipgram_counts(walks: Any, types: Any, excl: Any, keys: Any, win: int,
                        random_window: bool, seed: int) -> Any:
        n = len(walks)
        d_counts, host = device_out(np.zeros(n, dtype=np.int64))
        d_none = cuda.to_device(none)
        launch(_skipgram, n, device_in(walks), device_in(types), device_in(excl),
               device_in(keys), win, random_window, seed, d_none, d_none, d_none,
               cuda.to_device(none2), d_counts, False)
        return d_counts.copy_to_host(host) if n else host

    def skipgram_fill(walks: Any, types: Any, excl: Any, keys: Any, win: int,
                      random_window: bool, seed: int, offsets: Any, src: Any, dst: Any,
                      cols: Any) -> None:
        n = len(walks)
        if n == 0 or len(src) == 0:
            return
        d_src, h_src = device_out(src)
        d_dst, h_dst = device_out(dst)
        d_cols, h_cols = device_out(cols)
        launch(_skipgram, n, device_in(walks), device_in(types), device_in(excl),
               device_in(keys), win, random_window, seed, device_in(offsets), d_src, d_dst,
               d_cols, cuda.to_device(none), True)
        for d, h in ((d_src, h_src), (d_dst, h_dst), (d_cols, h_cols)):
            if h is not None:
                d.copy_to_host(h)

    def sample_cdf(cdf: Any, count: int, seed: int, salt: int, out: Any) -> None:
        d_out, host = device_out(out)
        launch(_sample_cdf, len(out), cache.get(cdf), count, seed, salt, d_out)
        if host is not None and len(out):
            d_out.copy_to_host(host)

    def sample_alias(prob: Any, alias: Any, seed: int, salt: int, out: Any) -> None:
        d_out, host = device_out(out)
        launch(_sample_alias, len(out), cache.get(prob), cache.get(alias), seed, salt, d_out)
        if host is not None and len(out):
            d_out.copy_to_host(host)

    return {"skipgram_counts": skipgram_counts, "skipgram_fill": skipgram_fill,
            "sample_cdf": sample_cdf, "sample_alias": sample_alias}
