"""Numba kernels for training pairs: skip-gram windows over walks and negative draws.

Skip-gram follows PGL's window: centre position ``a`` pairs with every position ``b`` in
``[a - w, a + w]`` whose node (ID and type) differs from the centre's (so ``b == a`` never
pairs), where ``w = win_size`` or, with a random window, ``1 + randint(win_size)`` drawn
from the walk's keyed state at step ``a``.  Padding (-1) never pairs;
``excl[type_a, type_b]`` drops pairs by node type.  Pairs come out walk by walk, centre by
centre, ``b`` ascending.

Example:
    >>> import numpy as np
    >>> walks = np.array([[1, 2, 3]]); types = np.zeros(3, np.int64)
    >>> excl = np.zeros((1, 1), np.bool_); keys = np.array([0])
    >>> c = skipgram_counts(walks, types, excl, keys, 1, False, 0)
    >>> src = np.empty(c.sum(), np.int64); dst = src.copy()
    >>> skipgram_fill(walks, types, excl, keys, 1, False, 0, np.array([0, c[0]]), src, dst,
    ...               np.empty((4, 2), np.int64))
    >>> list(zip(src.tolist(), dst.tolist()))
    [(1, 2), (2, 1), (2, 3), (3, 2)]
"""

from __future__ import annotations

import numpy as np
from numba import prange

from .._jit import kernel
from ._rng import item_state, randint

__all__ = ["sample_cdf", "skipgram_counts", "skipgram_fill"]


@kernel
def _window(st, a, win, random_window):
    return 1 + randint(st, a, win) if random_window else win


@kernel(parallel=True)
def skipgram_counts(walks, types, excl, keys, win, random_window, seed):
    """Pairs each walk (row of ``walks``) yields."""
    n, length = walks.shape
    out = np.zeros(n, dtype=np.int64)
    for i in prange(n):
        st = item_state(seed, 0, keys[i])
        c = 0
        for a in range(length):
            x = walks[i, a]
            if x < 0:
                continue
            w = _window(st, a, win, random_window)
            for b in range(max(0, a - w), min(length, a + w + 1)):
                y = walks[i, b]
                if y >= 0 and (y != x or types[a] != types[b]) and not excl[types[a], types[b]]:
                    c += 1
        out[i] = c
    return out


@kernel(parallel=True)
def skipgram_fill(walks, types, excl, keys, win, random_window, seed, offsets, src, dst, cols):
    """Write the pairs of walk i to ``src``/``dst[offsets[i]:offsets[i + 1]]`` and their
    column positions to ``cols`` (pairs x 2)."""
    n, length = walks.shape
    for i in prange(n):
        st = item_state(seed, 0, keys[i])
        o = offsets[i]
        for a in range(length):
            x = walks[i, a]
            if x < 0:
                continue
            w = _window(st, a, win, random_window)
            for b in range(max(0, a - w), min(length, a + w + 1)):
                y = walks[i, b]
                if y >= 0 and (y != x or types[a] != types[b]) and not excl[types[a], types[b]]:
                    src[o] = x
                    dst[o] = y
                    cols[o, 0] = a
                    cols[o, 1] = b
                    o += 1


@kernel(parallel=True)
def sample_cdf(cdf, count, seed, salt, out):
    """``out[j]``: index drawn with probability proportional to the steps of ``cdf``
    (inclusive cumulative weights); an empty ``cdf`` means uniform over ``count`` IDs."""
    n = out.shape[0]
    total = cdf[cdf.shape[0] - 1] if cdf.shape[0] else 0.0
    for j in prange(n):
        st = item_state(seed, salt, j)
        if cdf.shape[0] == 0:
            out[j] = randint(st, 0, count)
            continue
        u = (np.float64(randint(st, 0, 1 << 53)) / 9007199254740992.0) * total
        lo = 0
        hi = cdf.shape[0]
        while lo < hi:
            mid = (lo + hi) >> 1
            if cdf[mid] > u:
                hi = mid
            else:
                lo = mid + 1
        out[j] = min(lo, cdf.shape[0] - 1)
