"""Keyed random numbers of the kernels: the float32 key path of ``sampling.kernels.keys_dense``."""

from __future__ import annotations

import numpy as np
from numba import njit

from graphshard.sampling.kernels.keys_dense import SCRATCH, keys32, neg_log32


@njit
def _neg_logs32(u):
    out = np.empty_like(u)
    for i in range(u.shape[0]):
        out[i] = neg_log32(u[i])
    return out


def test_float32_negative_log_is_accurate():
    rng = np.random.default_rng(2)
    u = np.concatenate([rng.random(50000), np.logspace(-37, -1e-7, 3000),
                        1.0 - np.logspace(-7, -1, 300), [2**-0.5, 0.5, 2**-24]]).astype(np.float32)
    u = u[(u > 0) & (u < 1)]
    got = _neg_logs32(u).astype(np.float64)
    assert np.max(np.abs(got / -np.log(u.astype(np.float64)) - 1.0)) < 1e-6


def _keys(invw: np.ndarray, start: int, d: int, state: int) -> np.ndarray:
    out = np.full(SCRATCH, np.nan, dtype=np.float32)
    keys32(invw, start, d, np.uint64(state), out)
    return out[:d]


def test_keys_are_keyed_and_exponential():
    d = 13
    invw = np.ones(1000, dtype=np.float32)
    a = _keys(invw, 0, d, 5)
    assert np.array_equal(a, _keys(invw, 0, d, 5))  # same state, same keys
    assert not np.array_equal(a, _keys(invw, 0, d, 6))
    assert not np.array_equal(a, _keys(invw, 0, d, 5 + (1 << 32)))  # high half counts too
    # a row that ends the array (no padded read) gets the same keys as one that does not
    assert np.array_equal(_keys(invw[:d], 0, d, 5), a)
    assert np.array_equal(_keys(invw, len(invw) - d, d, 5), a)
    # 1 / w scales the key; a zero weight (1 / w = inf) gets an infinite key
    invw2 = invw.copy()
    invw2[:d] = np.arange(1, d + 1)
    invw2[3] = np.inf
    b = _keys(invw2, 0, d, 5)
    assert np.isinf(b[3])
    fin = np.isfinite(b)
    assert np.allclose(b[fin], a[fin] * invw2[:d][fin], rtol=1e-6)
    # across many rows, E is Exp(1): mean 1, P(E > 1) = 1/e
    e = np.concatenate([_keys(invw, 0, 64, s) for s in range(3000)]).astype(np.float64)
    se = 1.0 / np.sqrt(len(e))
    assert abs(e.mean() - 1.0) < 5 * se
    assert abs((e > 1.0).mean() - np.exp(-1.0)) < 5 * se
    assert e.min() > 0.0
