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

from ..._util.jit import kernel
from .rng import item_state, randint

__all__ = ["alias_table", "sample_alias", "sample_cdf", "skipgram_counts", "skipgram_fill"]


@kernel
def _window(st, a, win, random_window):
    return 1 + randint(st, a, win) if random_window else win


@kernel(inline=True)
def _walk_pairs(walks, types, excl, i, st, win, random_window, o, src, dst, cols, fill):
    """Pairs of walk ``i`` (counted; with ``fill`` also written from position ``o``)."""
    length = walks.shape[1]
    c = 0
    for a in range(length):
        x = walks[i, a]
        if x < 0:
            continue
        w = _window(st, a, win, random_window)
        for b in range(max(0, a - w), min(length, a + w + 1)):
            y = walks[i, b]
            if y >= 0 and (y != x or types[a] != types[b]) and not excl[types[a], types[b]]:
                if fill:
                    src[o + c] = x
                    dst[o + c] = y
                    cols[o + c, 0] = a
                    cols[o + c, 1] = b
                c += 1
    return c


@kernel(parallel=True)
def skipgram_counts(walks, types, excl, keys, win, random_window, seed):
    """Pairs each walk (row of ``walks``) yields."""
    n = walks.shape[0]
    out = np.zeros(n, dtype=np.int64)
    none = np.zeros(0, dtype=np.int64)
    for i in prange(n):
        out[i] = _walk_pairs(walks, types, excl, i, item_state(seed, 0, keys[i]), win,
                             random_window, 0, none, none, none.reshape(0, 2), False)
    return out


@kernel(parallel=True)
def skipgram_fill(walks, types, excl, keys, win, random_window, seed, offsets, src, dst, cols):
    """Write the pairs of walk i to ``src``/``dst[offsets[i]:offsets[i + 1]]`` and their
    column positions to ``cols`` (pairs x 2)."""
    for i in prange(walks.shape[0]):
        _walk_pairs(walks, types, excl, i, item_state(seed, 0, keys[i]), win, random_window,
                    offsets[i], src, dst, cols, True)


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


@kernel
def alias_table(weights):
    """Walker's alias table of non-negative ``weights`` (Vose's construction, O(n)):
    ``(prob, alias)`` such that drawing a bucket ``i`` uniformly, then keeping ``i`` with
    probability ``prob[i]`` or else taking ``alias[i]``, draws ``i`` proportionally to
    ``weights[i]``.  A zero weight gets ``prob`` 0 and is never drawn.  The sum must be > 0."""
    n = weights.shape[0]
    scaled = weights * (n / weights.sum())
    prob = np.ones(n, dtype=np.float64)
    alias = np.arange(n, dtype=np.int64)
    small = np.empty(n, dtype=np.int64)
    large = np.empty(n, dtype=np.int64)
    ns = 0
    nl = 0
    for i in range(n):
        if scaled[i] < 1.0:
            small[ns] = i
            ns += 1
        else:
            large[nl] = i
            nl += 1
    while ns > 0 and nl > 0:
        ns -= 1
        lo = small[ns]
        hi = large[nl - 1]
        prob[lo] = scaled[lo]
        alias[lo] = hi
        scaled[hi] = (scaled[hi] + scaled[lo]) - 1.0
        if scaled[hi] < 1.0:
            nl -= 1
            small[ns] = hi
            ns += 1
    # what is left has scaled weight 1 up to rounding: keeps its own bucket (prob 1)
    return prob, alias


@kernel(parallel=True)
def sample_alias(prob, alias, seed, salt, out):
    """``out[j]``: index drawn from the alias table ``(prob, alias)`` in O(1), keyed by
    (seed, salt, j): bucket from step 0, the keep-or-alias coin from step 1."""
    n = prob.shape[0]
    for j in prange(out.shape[0]):
        st = item_state(seed, salt, j)
        b = randint(st, 0, n)
        u = np.float64(randint(st, 1, 1 << 53)) / 9007199254740992.0
        out[j] = b if u < prob[b] else alias[b]
